"""The digest view (`bot.digest.card.digest_view`: plain JSON values) and the card pieces drawn from it."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import TypedDict

from bot.render.filters import escape_mrkdwn, sparkline
from bot.render.formats import Formatter
from rules.market.changes import ChangeKind

MAX_GPUS = 20  # one section per GPU keeps the card far below 50 blocks
MAX_CHANGES = 8


class GpuRef(TypedDict):
    id: str
    name: str


class ChangeJson(TypedDict):
    """One price change as `digest preview --json` prints it: money as decimal strings, the change in percent."""

    gpu: GpuRef
    provider: str
    gpu_count: int
    tier: str
    market: str  # on-demand, spot, auction, marketplace, reserved: a change never crosses kinds
    kind: ChangeKind
    old_usd_per_hour: str | None
    new_usd_per_hour: str | None
    change_pct: float | None


class ChangeView(ChangeJson):
    """A change on the card: `provider` is the display name ("Lambda"), `provider_id` the id."""

    provider_id: str


class OfferView(TypedDict):
    """An offer the card names (cheapest now, new and old cheapest)."""

    provider: str
    provider_name: str
    gpu_count: int
    tier: str
    instance_type: str
    region: str
    usd_per_hour: str | None
    usd_per_gpu_hour: str | None
    p10_usd_per_hour: str | None
    listings: int
    observed_at: str | None


class GpuView(TypedDict):
    """One GPU's section: its changes, cheapest offers, spot spread and 30-day series."""

    id: str
    name: str
    changes: list[ChangeView]
    cheapest_now: OfferView | None
    new_cheapest: OfferView | None
    old_cheapest: OfferView | None
    spot_spread_pct: float | None
    series_30d: list[str | None]
    sparkline: str
    prices_at: str | None


class SourceView(TypedDict):
    """A price source's age, and whether its last refresh failed."""

    source: str
    provider: str
    observed_at: str
    age_hours: float
    failing: bool
    error: str | None


class DigestView(TypedDict):
    """The digest card's view (`blocks/digest.json.j2`): JSON values only, GPUs in catalog order."""

    gpus: list[GpuView]
    since: str | None
    prices_at: str | None
    threshold_pct: float
    threshold_usd_per_gpu_hour: float
    suppressed: int
    change_count: int
    sources: list[SourceView]


def _decimal(value: object) -> Decimal | None:
    try:
        return None if value is None else Decimal(str(value))
    except InvalidOperation:
        return None


def when(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def change_line(change: ChangeView, f: Formatter) -> str:
    kind = change.get("kind")
    tier = f.messages.plain(f"tier.{change.get('tier')}") if f.messages.has(f"tier.{change.get('tier')}") else ""
    market = change.get("market")
    if market in ("auction", "marketplace"):  # say the kind where the tier alone would mislead
        tier = f.messages.plain(f"market.{market}")
    pct = change.get("change_pct")
    return f.messages.text(
        f"digest.change.{kind}" if kind in ("drop", "rise", "new", "gone") else "digest.change.rise",
        provider=change.get("provider", ""), count=change.get("gpu_count", 1), tier=tier,
        old=f.money(_decimal(change.get("old_usd_per_hour"))), new=f.money(_decimal(change.get("new_usd_per_hour"))),
        pct=f.percent(float(pct) / 100, signed=True) if pct is not None else "",
    )


def gpu_text(gpu: GpuView, f: Formatter) -> str:
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
    spread = gpu.get("spot_spread_pct")
    if spread is not None:
        lines.append(f.messages.text("digest.spread", pct=f.percent(float(spread) / 100)))
    return "\n".join(lines)


def source_notes(view: DigestView, f: Formatter, now: datetime | None) -> list[str]:
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


def since_text(view: DigestView, f: Formatter) -> str:
    since = when(view.get("since"))
    return f.messages.text(
        "digest.since", date=f.date(since) if since else "—",
        pct=f.percent(float(view.get("threshold_pct") or 0) / 100),
        usd=f.money(_decimal(view.get("threshold_usd_per_gpu_hour"))),
    )
