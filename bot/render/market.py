"""Per-GPU market summaries for the catalog cards, computed in one pass over a GPU's offers.

Specs, comparison and price cards read, per GPU, the cheapest on-demand offer, how many providers
rent it and each provider's cheapest prices. At 100,000 offers rescanning a GPU's offers for these took
~2 ms per column and ~5 ms per price card; `summarise` does the same arithmetic once per GPU and
`books.market_of` keeps the result per snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from rules.types import Offer


@dataclass(frozen=True, slots=True)
class ProviderSummary:
    """One provider's offers of one GPU: cheapest $/GPU-hour per tier, finest billing step, newest price."""

    provider_id: str
    on_demand_usd: Decimal | None
    spot_usd: Decimal | None
    billing_increment_s: int
    observed_at: datetime


@dataclass(frozen=True, slots=True)
class GpuMarket:
    cheapest_on_demand: Offer | None  # the first offer of least $/GPU-hour, in the offers' order
    providers: tuple[ProviderSummary, ...]  # in order of each provider's first offer


def _lower(current: Decimal | None, value: Decimal) -> Decimal:
    return value if current is None or value < current else current


@dataclass(slots=True)
class _Running:
    """A provider's summary while the offers are read (mutable; frozen into a ProviderSummary at the end)."""

    on_demand_usd: Decimal | None
    spot_usd: Decimal | None
    billing_increment_s: int
    observed_at: datetime


def summarise(offers: Sequence[Offer]) -> GpuMarket:
    """What `views.gpu_column` and `views.provider_prices` read, from one pass over the offers."""
    cheapest: Offer | None = None
    rows: dict[str, _Running] = {}  # provider -> its summary so far
    for offer in offers:
        if offer.tier == "on-demand" and (cheapest is None or offer.usd_per_gpu_hour < cheapest.usd_per_gpu_hour):
            cheapest = offer
        row = rows.get(offer.provider_id)
        if row is None:
            row = rows[offer.provider_id] = _Running(None, None, offer.billing_increment_s, offer.observed_at)
        if offer.tier == "on-demand":
            row.on_demand_usd = _lower(row.on_demand_usd, offer.usd_per_gpu_hour)
        elif offer.tier == "spot":
            row.spot_usd = _lower(row.spot_usd, offer.usd_per_gpu_hour)
        row.billing_increment_s = min(row.billing_increment_s, offer.billing_increment_s)
        row.observed_at = max(row.observed_at, offer.observed_at)
    return GpuMarket(cheapest, tuple(
        ProviderSummary(pid, r.on_demand_usd, r.spot_usd, r.billing_increment_s, r.observed_at) for pid, r in rows.items()))
