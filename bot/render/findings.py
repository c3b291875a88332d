"""Engine findings and rejections as localized sentences: key `finding.<code>` / `reject.<code>`, numbers by unit."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from bot.render.formats import Formatter

log = logging.getLogger(__name__)


def format_number(name: str, value: Any, f: Formatter) -> str:
    """Format one number by the unit its name carries (`_gib`, `_usd`, `_hours`, `_pct`, `_gbs` ...)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return "" if value is None else str(value)
    if name.endswith("_usd_per_hour") or name.endswith("_usd_per_gpu_hour"):
        return f.rate(Decimal(str(value)))
    if name.endswith("_usd"):
        return f.money(Decimal(str(value)))
    if name.endswith("_gib"):
        return f.gib(float(value))
    if name.endswith("_gb"):
        return f.gb(float(value))
    if name.endswith("_hours"):
        return f.hours(float(value))
    if name.endswith("_min"):
        return f.messages.plain("unit.minutes", minutes=f.number(value))
    if name.endswith("_pct"):
        return f.percent(float(value) / 100)
    if name.endswith("_fraction"):
        return f.percent(float(value))
    if name.endswith("_gbs"):
        return f"{f.number(value)} GB/s"
    if name.endswith("_tflops"):
        return f.tflops(float(value))
    return f.number(value, 2)


def coded_text(prefix: str, code: str, numbers: Mapping[str, Any], f: Formatter, **extra: str) -> str:
    """The mrkdwn sentence for a finding or rejection code with its numbers formatted for the locale.

    An unknown code (the engine added one the catalogs lack) falls back to the generic message and is logged.
    """
    key = f"{prefix}.{code}"
    values = {name: format_number(name, value, f) for name, value in numbers.items()}
    values.update(extra)
    if not f.messages.has(key):
        log.warning("no message for %s", key)
        return f.messages.text(f"{prefix}.other", code=code, **extra)
    try:
        return f.messages.text(key, **values)
    except (KeyError, IndexError, ValueError):
        log.warning("message %s needs numbers the engine did not give: %s", key, sorted(values))
        return f.messages.text(f"{prefix}.other", code=code, **extra)
