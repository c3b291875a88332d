"""Digest card pieces from the digest view (`bot.digest.card.digest_view`: plain JSON values)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from bot.render.filters import escape_mrkdwn, sparkline
from bot.render.formats import Formatter

MAX_GPUS = 20  # one section per GPU keeps the card far below 50 blocks
MAX_CHANGES = 8


def _decimal(value: Any) -> Decimal | None:
    try:
        return None if value is None else Decimal(str(value))
    except InvalidOperation:
        return None


def when(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def change_line(change: Mapping[str, Any], f: Formatter) -> str:
    kind = change.get("kind")
    tier = f.messages.plain(f"tier.{change.get('tier')}") if f.messages.has(f"tier.{change.get('tier')}") else ""
    pct = change.get("change_pct")
    return f.messages.text(
        f"digest.change.{kind}" if kind in ("drop", "rise", "new", "gone") else "digest.change.rise",
        provider=change.get("provider", ""), count=change.get("gpu_count", 1), tier=tier,
        old=f.money(_decimal(change.get("old_usd_per_hour"))), new=f.money(_decimal(change.get("new_usd_per_hour"))),
        pct=f.percent(float(pct) / 100, signed=True) if pct is not None else "",
    )


def gpu_text(gpu: Mapping[str, Any], f: Formatter) -> str:
    """One GPU's section: name and 30-day sparkline, its changes, the cheapest offer now, spot spread."""
    series = [_decimal(v) for v in gpu.get("series_30d") or []]
    known = [v for v in series if v is not None]
    head = f"*{escape_mrkdwn(gpu.get('name', ''), 100)}*"
    if known:
        trend = f.messages.text("digest.trend", spark=sparkline([float(v) if v is not None else None for v in series]),
                                low=f.money(min(known)), high=f.money(max(known)))
        head += f"  `{trend}`"
    changes = list(gpu.get("changes") or [])
    lines = [head, *(change_line(c, f) for c in changes[:MAX_CHANGES])]
    if len(changes) > MAX_CHANGES:
        lines.append("…")
    best = gpu.get("new_cheapest") or gpu.get("cheapest_now")
    if best:
        old = gpu.get("old_cheapest")
        rate = f.rate(_decimal(best.get("usd_per_gpu_hour")))
        if gpu.get("new_cheapest") and old:
            lines.append(f.messages.text("digest.new_cheapest", rate=rate, provider=best.get("provider_name", ""),
                                         old=f.rate(_decimal(old.get("usd_per_gpu_hour")))))
        else:
            lines.append(f.messages.text("digest.cheapest", rate=rate, provider=best.get("provider_name", "")))
    if gpu.get("spot_spread_pct") is not None:
        lines.append(f.messages.text("digest.spread", pct=f.percent(float(gpu["spot_spread_pct"]) / 100)))
    return "\n".join(lines)


def source_notes(view: Mapping[str, Any], f: Formatter, now: datetime | None) -> list[str]:
    """Data age, and a warning per failing source with how old its prices are."""
    notes = []
    prices_at = when(view.get("prices_at"))
    if prices_at is not None and now is not None:
        notes.append(f.messages.text("digest.age", age=f.age(prices_at, now)))
    for source in view.get("sources") or []:
        observed = when(source.get("observed_at"))
        if source.get("failing") and observed is not None and now is not None:
            notes.append(f.messages.text("digest.source_failing", source=source.get("provider") or source.get("source"),
                                         age=f.age(observed, now)))
    return notes[:6]


def since_text(view: Mapping[str, Any], f: Formatter) -> str:
    since = when(view.get("since"))
    return f.messages.text(
        "digest.since", date=f.date(since) if since else "—",
        pct=f.percent(float(view.get("threshold_pct") or 0) / 100),
        usd=f.money(_decimal(view.get("threshold_usd_per_gpu_hour"))),
    )
