"""Engine findings and rejections as localized sentences: key `finding.<code>` / `reject.<code>`, numbers by unit."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from datetime import date
from functools import lru_cache
from typing import Any

from bot.locales import placeholders
from bot.render.formats import Formatter

log = logging.getLogger(__name__)


# Renderers by the unit a number's name ends with, tried in this order (built once, not per number).
_BY_UNIT: tuple[tuple[str, Callable[[Any, Formatter], str]], ...] = (
    ("usd", lambda value, f: f.money(Decimal(str(value)))),
    ("gib", lambda value, f: f.gib(float(value))),
    ("gb", lambda value, f: f.gb(float(value))),
    ("wall_hours", lambda value, f: f.wall_hours(float(value))),
    ("hours", lambda value, f: f.hours(float(value))),
    ("min", lambda value, f: f.messages.plain("unit.minutes", minutes=f.number(value))),
    ("pct", lambda value, f: f.percent(float(value) / 100)),
    ("gbs", lambda value, f: f"{f.number(value)} GB/s"),
    ("tflops", lambda value, f: f.tflops(float(value))),
    ("params_b", lambda value, f: f"{f.number(value, 1)}B"),
    ("increment_s", lambda value, f: f.billing(int(value))),
    ("tokens", lambda value, f: f.compact(value)),
)


_SIZE_SUFFIX = re.compile(r"_\d+k$")


def format_number(name: str, value: Any, f: Formatter) -> str:
    """Format one number by the unit its name carries (`_gib`, `_usd`, `hours`, `_pct`, `_gbs`, `params_b` ...)."""
    if isinstance(value, str):
        return _format_text(name, value, f)
    if isinstance(value, bool) or value is None:
        return "" if value is None else f.messages.plain("value.yes") if value else f.messages.plain("value.no")
    return _renderer(name)(value, f)


@lru_cache(maxsize=1024)
def _renderer(name: str) -> Callable[[Any, Formatter], str]:
    """How a number named `name` is written, decided once per name (the engine's names are a fixed vocabulary)."""
    if name.endswith("usd_per_hour") or name.endswith("usd_per_gpu_hour"):
        return _rate
    if name.endswith("context_tokens"):
        return _exact  # a context is read exactly ("4,096"), not rounded like a dataset ("4.1K")
    name = _SIZE_SUFFIX.sub("", name)  # needed_gib_32k: GiB, at a 32k context
    name = name.removesuffix("_from")  # hours_from: the figure before a change, in the same unit
    if "_usd_per_" in name and not name.endswith("hour"):  # rent_usd_per_job: money per something
        return _money
    for unit, render in _BY_UNIT:
        if name == unit or name.endswith("_" + unit):
            return render
    return _plain


def _rate(value: Any, f: Formatter) -> str:
    return f.rate(Decimal(str(value)))


def _exact(value: Any, f: Formatter) -> str:
    return f.number(value)


def _money(value: Any, f: Formatter) -> str:
    return f.money(Decimal(str(value)))


def _plain(value: Any, f: Formatter) -> str:
    return f.number(value, 2)


def precision_label(precision: str, f: Formatter) -> str:
    """"bf16", "AWQ 4-bit", "GGUF Q4_K_M": format names are the same in every language, except the words."""
    key = f"precision.{precision}"
    if f.messages.has(key):
        return f.messages.plain(key)
    if precision.startswith("gguf-"):
        return "GGUF " + precision[5:].upper()
    return precision.upper() if len(precision) <= 5 else precision


# Engine fields whose values are codes with words in the locales (`value.<field>.<code>`): a code without them
# would reach a card as the engine spells it ("hf", "tensor_parallel"), so it is logged (the contract test
# tests/test_engine_terms.py lists every code the engine has).
CODED_FIELDS = frozenset({"framework", "recipe", "optimizer", "engine", "sharding", "grad_checkpointing", "family",
                          "memory_basis"})


def _format_text(name: str, value: str, f: Formatter) -> str:
    """Codes inside numbers (switch lists, methods, weight formats) in the locale's words; anything else as given."""
    if name in ("precision", "quantization", "kv_cache_dtype") or name.endswith("_precision"):
        return precision_label(value, f)
    if name == "lora_targets":  # module names (q, v, gate ...) are code names, listed the locale's way
        return f.messages.plain("common.list_sep").join(t for t in value.split(",") if t)
    if name == "switch" and f.messages.has(f"switch.{value}"):
        return f.messages.plain(f"switch.{value}")
    if f.messages.has(f"value.{name}.{value}"):  # codes with words of their own (constraint, price basis)
        return f.messages.plain(f"value.{name}.{value}")
    if name == "switches":
        # TRANSLATORS: what separates the items of a list (", " in English, "、" in Japanese); keep its spaces.
        return f.messages.plain("common.list_sep").join(
            f.messages.plain(f"switch.{s}") if f.messages.has(f"switch.{s}") else s for s in value.split(",") if s)
    if name == "method" and f.messages.has(f"method.{value}"):
        return f.messages.plain(f"method.{value}")
    if name in CODED_FIELDS:
        log.warning("no words for %s %r in %s", name, value, f.messages.language)
    return value


def coded_text(prefix: str, code: str, numbers: Mapping[str, Any], f: Formatter, **extra: str) -> str:
    """The mrkdwn sentence for a finding or rejection code with its numbers formatted for the locale.

    An unknown code (the engine added one the catalogs lack) falls back to the generic message and is logged.
    """
    key = f"{prefix}.{code}"
    wanted = _wanted_numbers(f.messages.catalog.get(key), f.messages.catalog.get(f"{key}.short"))
    values = {name: format_number(name, value, f) for name, value in numbers.items()
              if wanted is None or name in wanted or name in CODED_FIELDS}
    values.update(extra)
    gpu, memory = values.get("gpu"), values.get("vram_gb")
    if isinstance(gpu, str) and memory and gpu.endswith(f"({memory})"):  # "Apple M3 Ultra (96 GB) (96 GB)"
        values["gpu"] = gpu.removesuffix(f"({memory})").rstrip()
    if numbers.get("price_basis") == "street" and numbers.get("price_date"):  # "new, street price of Feb 1, 2026"
        values["price_basis"] = f.messages.plain("value.price_basis.street_on",
                                                 date=f.date(date.fromisoformat(str(numbers["price_date"]))))
    if not f.messages.has(key):
        log.warning("no message for %s", key)
        return f.messages.text(f"{prefix}.other", code=code, **extra)
    # A finding whose optional numbers are absent (no break-even when owning never pays off, no slowdown for an
    # untimed plan) is worded by its `.short` message, which names only the numbers it always has.
    for candidate in (key, f"{key}.short"):
        if not f.messages.has(candidate):
            continue
        try:
            return f.messages.text(candidate, **values)
        except (KeyError, IndexError, ValueError):
            continue
    log.warning("message %s needs numbers the engine did not give: %s", key, sorted({*numbers, *extra}))
    return f.messages.text(f"{prefix}.other", code=code, **extra)


@lru_cache(maxsize=2048)
def _wanted_numbers(*messages: str | None) -> frozenset[str] | None:
    """The numbers `messages` can show: a finding carries more than its sentence names, and formatting the rest
    was a third of the work. None (format them all) when a field is more than a plain name ("{x.y}", "{x[0]}").

    Coded fields are formatted whether shown or not (bot.render.findings._format_text logs a code without words).
    """
    names: set[str] = set()
    for message in messages:
        if message is not None:
            names |= placeholders(message)
    return frozenset(names) if all(name.isidentifier() for name in names) else None


def reject_text(code: str, numbers: Mapping[str, Any], f: Formatter, *, gpu: str) -> str:
    """A rejection as a sentence; older rejections without the GPU count read as the count tried. A need set
    against the card's memory says how much of it is usable and that the rest is the safety margin."""
    filled = {"gpus": numbers.get("max_gpus_tried", 1), **numbers}
    return with_margin(coded_text("reject", code, filled, f, gpu=gpu), numbers, f)


def with_margin(sentence: str, numbers: Mapping[str, Any], f: Formatter) -> str:
    """`sentence` followed by "(of which 76.0 GiB usable: 4.0 GiB is kept free as safety margin)" when the numbers
    carry the card's memory (`has_gib`) and what a plan may use of it (`usable_gib`), and the need is within the
    card's memory: a fit ("22.8 of 24.0"), or a need the card seems to hold ("needs 78.1 GiB, has 80")."""
    has, usable, needed = numbers.get("has_gib"), numbers.get("usable_gib"), numbers.get("needed_gib")
    if not isinstance(has, (int, float)) or not isinstance(usable, (int, float)) or usable >= has:
        return sentence
    if isinstance(needed, (int, float)) and needed > has:
        return sentence  # more than the whole card: the margin explains nothing
    share = numbers.get("gpu_share")
    if isinstance(share, (int, float)):  # a Mac: what macOS lets the GPU wire, not a margin kept free
        note = f.messages.text("fit.unified_note", usable=f.gib(float(usable)), share=f.percent(float(share)))
    else:
        note = f.messages.text("fit.margin_note", usable=f.gib(float(usable)),
                               margin=f.gib(float(has) - float(usable)))
    end = sentence.rstrip()
    stop = end[-1] if end and end[-1] in ".。" else ""
    space = "" if note.startswith("（") else " "
    return f"{end[:len(end) - len(stop)]}{space}{note}{stop}"
