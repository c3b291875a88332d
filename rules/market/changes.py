"""Price change detection between two snapshots: thresholds, hysteresis, new/gone offers, cheapest, spreads.

Pure: plain typed values in, a `ChangeSet` / `DigestInput` out. A *series* is one
GPU × provider × GPU count × tier; its price is the cheapest region (clouds) or the
median listing (marketplaces, with p10 and count). A change is compared with what the
channel was last told (its `SeriesState`), so a slow creep is reported once it adds up,
and a price that flaps back within the hysteresis window is not reported again.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Literal

ChangeKind = Literal["drop", "rise", "new", "gone"]
REVERSAL: Mapping[str, str] = {"drop": "rise", "rise": "drop", "new": "gone", "gone": "new"}
HYSTERESIS = timedelta(days=7)  # a reversal back to the earlier price within this window is a flap
CENT = Decimal("0.0001")
HUNDRED = Decimal(100)


@dataclass(frozen=True, slots=True, order=True)
class SeriesKey:
    gpu_id: str
    provider_id: str
    gpu_count: int
    tier: str
    market: str = "on-demand"  # a change is between two observations of the same offer kind


@dataclass(frozen=True, slots=True)
class PricePoint:
    """One observed price of a whole instance."""

    gpu_id: str
    provider_id: str
    instance_type: str
    gpu_count: int
    region: str
    tier: str
    usd_per_hour: Decimal
    observed_at: datetime
    market: str = "on-demand"

    @property
    def key(self) -> SeriesKey:
        return SeriesKey(self.gpu_id, self.provider_id, self.gpu_count, self.tier, self.market)


@dataclass(frozen=True, slots=True)
class SeriesPrice:
    """The price of one series: cheapest region, or a marketplace's median (p10 and listing count too)."""

    key: SeriesKey
    usd_per_hour: Decimal
    instance_type: str
    region: str
    observed_at: datetime
    listings: int = 1
    p10_usd_per_hour: Decimal | None = None  # marketplaces only

    @property
    def usd_per_gpu_hour(self) -> Decimal:
        return (self.usd_per_hour / self.key.gpu_count).quantize(CENT)


@dataclass(frozen=True, slots=True)
class Thresholds:
    """A change is reported when it is at least `pct` percent AND at least `usd` per GPU-hour."""

    pct: Decimal = Decimal(5)
    usd_per_gpu_hour: Decimal = Decimal("0.05")


@dataclass(frozen=True, slots=True)
class SeriesState:
    """What a channel was last told about one series, for hysteresis."""

    baseline_usd: Decimal  # instance price the channel believes
    present: bool = True
    previous_usd: Decimal | None = None  # the believed price before the last reported change
    last_kind: str = ""
    reported_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Change:
    key: SeriesKey
    kind: ChangeKind
    old_usd_per_hour: Decimal | None
    new_usd_per_hour: Decimal | None
    change_pct: Decimal | None  # None for new and gone
    new: SeriesPrice | None = None


@dataclass(frozen=True, slots=True)
class ChangeSet:
    changes: tuple[Change, ...]
    states: Mapping[SeriesKey, SeriesState]
    suppressed: int  # flaps held back by hysteresis


@dataclass(frozen=True, slots=True)
class SpotSpread:
    on_demand: SeriesPrice
    spot: SeriesPrice
    spread_pct: Decimal  # how much cheaper spot is, per GPU-hour


@dataclass(frozen=True, slots=True)
class GpuDigest:
    gpu_id: str
    changes: tuple[Change, ...]
    cheapest_now: SeriesPrice | None  # cheapest on-demand per GPU-hour (any tier if none)
    new_cheapest: SeriesPrice | None  # set when a reported change made a new cheapest offer
    old_cheapest: SeriesPrice | None
    spot_spread: SpotSpread | None
    series_30d: tuple[Decimal | None, ...]  # daily cheapest on-demand $/GPU-hour, oldest first
    prices_at: datetime | None  # observation time of the cheapest offer's data


@dataclass(frozen=True, slots=True)
class SourceAge:
    source: str
    provider_id: str
    observed_at: datetime
    age_hours: float
    failing: bool = False
    error: str | None = None


@dataclass(frozen=True, slots=True)
class DigestInput:
    gpus: tuple[GpuDigest, ...]
    since: datetime | None
    prices_at: datetime | None
    thresholds: Thresholds
    sources: tuple[SourceAge, ...] = ()
    suppressed: int = 0
    states: Mapping[SeriesKey, SeriesState] = field(default_factory=dict)

    @property
    def change_count(self) -> int:
        return sum(len(g.changes) for g in self.gpus)


def summarise(points: Iterable[PricePoint], marketplaces: frozenset[str] = frozenset()) -> dict[SeriesKey, SeriesPrice]:
    """Series prices: the cheapest region per cloud series; median, p10 and count per marketplace series."""
    groups: dict[SeriesKey, list[PricePoint]] = defaultdict(list)
    for p in points:
        groups[p.key].append(p)
    out: dict[SeriesKey, SeriesPrice] = {}
    for key, rows in groups.items():
        rows.sort(key=lambda r: (r.usd_per_hour, r.region, r.instance_type))
        newest = max(r.observed_at for r in rows)
        if key.provider_id in marketplaces and len(rows) > 1:
            prices = [r.usd_per_hour for r in rows]
            median = Decimal(statistics.median(prices)).quantize(CENT)
            p10 = prices[int(0.1 * (len(prices) - 1))]
            out[key] = SeriesPrice(key, median, rows[0].instance_type, "any", newest, len(rows), p10)
        else:
            first = rows[0]
            out[key] = SeriesPrice(key, first.usd_per_hour, first.instance_type, first.region, newest, len(rows))
    return out


def change_pct(old: Decimal, new: Decimal) -> Decimal:
    return ((new - old) / old * HUNDRED).quantize(Decimal("0.1"))


def exceeds(old: Decimal, new: Decimal, gpu_count: int, thresholds: Thresholds) -> bool:
    """Both the percentage and the per-GPU-hour dollar threshold must be met."""
    if old <= 0:
        return new != old
    delta = abs(new - old)
    return delta * HUNDRED / old >= thresholds.pct and delta / gpu_count >= thresholds.usd_per_gpu_hour


def initial_states(prices: Mapping[SeriesKey, SeriesPrice]) -> dict[SeriesKey, SeriesState]:
    """What a channel believes before its first digest: the prices it started from."""
    return {k: SeriesState(baseline_usd=v.usd_per_hour) for k, v in prices.items()}


def _is_flap(state: SeriesState, kind: str, new_usd: Decimal | None, key: SeriesKey, th: Thresholds, now: datetime) -> bool:
    """A change that undoes the last reported one, inside the window, back to about the earlier price."""
    if state.last_kind != REVERSAL[kind] or state.reported_at is None:
        return False
    if now - state.reported_at >= HYSTERESIS:
        return False
    if kind in ("new", "gone") or state.previous_usd is None or new_usd is None:
        return True
    return not exceeds(state.previous_usd, new_usd, key.gpu_count, th)


def _classify(state: SeriesState | None, now_price: SeriesPrice | None, key: SeriesKey, th: Thresholds) -> Change | None:
    believed = state.baseline_usd if state is not None and state.present else None
    if believed is None and now_price is not None:
        return Change(key, "new", None, now_price.usd_per_hour, None, now_price)
    if believed is not None and now_price is None:
        return Change(key, "gone", believed, None, None, None)
    if believed is None or now_price is None:
        return None
    new_usd = now_price.usd_per_hour
    if not exceeds(believed, new_usd, key.gpu_count, th):
        return None
    kind: ChangeKind = "drop" if new_usd < believed else "rise"
    return Change(key, kind, believed, new_usd, change_pct(believed, new_usd), now_price)


def detect_changes(
    believed: Mapping[SeriesKey, SeriesState],
    now_prices: Mapping[SeriesKey, SeriesPrice],
    *,
    thresholds: Thresholds,
    now: datetime,
) -> ChangeSet:
    """Changes from what the channel believes to the prices now; flaps inside the window are held back."""
    changes: list[Change] = []
    states = dict(believed)
    suppressed = 0
    for key in sorted(set(believed) | set(now_prices)):
        state = believed.get(key)
        change = _classify(state, now_prices.get(key), key, thresholds)
        if change is None:
            continue
        if state is not None and _is_flap(state, change.kind, change.new_usd_per_hour, key, thresholds, now):
            suppressed += 1
            continue
        changes.append(change)
        before = state.baseline_usd if state is not None else None
        if change.kind == "gone":
            states[key] = SeriesState(before or Decimal(0), False, before, "gone", now)
        else:
            assert change.new_usd_per_hour is not None
            states[key] = SeriesState(change.new_usd_per_hour, True, before, change.kind, now)
    return ChangeSet(tuple(changes), states, suppressed)


def per_gpu_cheapest(prices: Iterable[SeriesPrice], tier: str = "on-demand") -> dict[str, SeriesPrice]:
    """The cheapest series per GPU by $/GPU-hour in one tier (ties: provider, count)."""
    best: dict[str, SeriesPrice] = {}
    for p in prices:
        if p.key.tier != tier:
            continue
        cur = best.get(p.key.gpu_id)
        if cur is None or (p.usd_per_gpu_hour, p.key) < (cur.usd_per_gpu_hour, cur.key):
            best[p.key.gpu_id] = p
    return best


def spot_spread(on_demand: SeriesPrice | None, spot: SeriesPrice | None) -> SpotSpread | None:
    if on_demand is None or spot is None or on_demand.usd_per_gpu_hour <= 0:
        return None
    od, sp = on_demand.usd_per_gpu_hour, spot.usd_per_gpu_hour
    return SpotSpread(on_demand, spot, ((od - sp) / od * HUNDRED).quantize(Decimal("0.1")))


def _believed_prices(states: Mapping[SeriesKey, SeriesState], now_prices: Mapping[SeriesKey, SeriesPrice]) -> list[SeriesPrice]:
    out = []
    for key, st in states.items():
        if st.present and key in now_prices:
            out.append(replace(now_prices[key], usd_per_hour=st.baseline_usd))
    return out


def _new_cheapest(
    gpu_id: str, changes: Sequence[Change], before: SeriesPrice | None, now: SeriesPrice | None
) -> SeriesPrice | None:
    """The cheapest on-demand offer is new when a reported drop/new made it, and it beats the old cheapest."""
    if now is None or (before is not None and now.key == before.key):
        return None
    made_by_change = any(c.key == now.key and c.kind in ("drop", "new") for c in changes)
    gone_before = before is not None and any(c.key == before.key and c.kind == "gone" for c in changes)
    if not (made_by_change or gone_before):
        return None
    if before is not None and now.usd_per_gpu_hour >= before.usd_per_gpu_hour and not gone_before:
        return None
    return now


def build_digest_input(
    *,
    believed: Mapping[SeriesKey, SeriesState],
    now_prices: Mapping[SeriesKey, SeriesPrice],
    thresholds: Thresholds,
    now: datetime,
    since: datetime | None = None,
    gpu_filter: frozenset[str] = frozenset(),
    gpu_order: Sequence[str] = (),
    series_30d: Mapping[str, tuple[Decimal | None, ...]] | None = None,
    sources: Sequence[SourceAge] = (),
) -> DigestInput:
    """Everything a digest card needs, per GPU with changes, in catalog order."""
    if gpu_filter:
        believed = {k: v for k, v in believed.items() if k.gpu_id in gpu_filter}
        now_prices = {k: v for k, v in now_prices.items() if k.gpu_id in gpu_filter}
    result = detect_changes(believed, now_prices, thresholds=thresholds, now=now)
    by_gpu: dict[str, list[Change]] = defaultdict(list)
    for c in result.changes:
        by_gpu[c.key.gpu_id].append(c)
    cheap_now = per_gpu_cheapest(now_prices.values())
    cheap_before = per_gpu_cheapest(_believed_prices(believed, {**now_prices, **_gone_prices(believed, now_prices)}))
    spot_now = per_gpu_cheapest(now_prices.values(), "spot")
    rank = {g: i for i, g in enumerate(gpu_order)}
    gpus = []
    for gpu_id in sorted(by_gpu, key=lambda g: (rank.get(g, len(rank)), g)):
        changes = tuple(sorted(by_gpu[gpu_id], key=_change_order))
        now_best = cheap_now.get(gpu_id) or _any_tier_cheapest(gpu_id, now_prices)
        gpus.append(
            GpuDigest(
                gpu_id=gpu_id,
                changes=changes,
                cheapest_now=now_best,
                new_cheapest=_new_cheapest(gpu_id, changes, cheap_before.get(gpu_id), cheap_now.get(gpu_id)),
                old_cheapest=cheap_before.get(gpu_id),
                spot_spread=spot_spread(cheap_now.get(gpu_id), spot_now.get(gpu_id)),
                series_30d=(series_30d or {}).get(gpu_id, ()),
                prices_at=now_best.observed_at if now_best else None,
            )
        )
    newest = max((p.observed_at for p in now_prices.values()), default=None)
    return DigestInput(tuple(gpus), since, newest, thresholds, tuple(sources), result.suppressed, result.states)


def _gone_prices(believed: Mapping[SeriesKey, SeriesState], now_prices: Mapping[SeriesKey, SeriesPrice]) -> dict[SeriesKey, SeriesPrice]:
    """Stand-in prices for series that vanished, so the old cheapest can still be named."""
    epoch = datetime.min
    return {
        k: SeriesPrice(k, s.baseline_usd, "", "", epoch)
        for k, s in believed.items()
        if s.present and k not in now_prices
    }


def _any_tier_cheapest(gpu_id: str, prices: Mapping[SeriesKey, SeriesPrice]) -> SeriesPrice | None:
    cands = [p for k, p in prices.items() if k.gpu_id == gpu_id]
    return min(cands, key=lambda p: (p.usd_per_gpu_hour, p.key)) if cands else None


def _change_order(c: Change) -> tuple[int, Decimal, SeriesKey]:
    """Biggest moves first: drops and rises by |%|, then new, then gone."""
    rank = {"drop": 0, "rise": 0, "new": 1, "gone": 2}[c.kind]
    return (rank, -abs(c.change_pct or Decimal(0)), c.key)
