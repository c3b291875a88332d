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

from bot.render.formats import Formatter
from rules.types import Offer


@dataclass(frozen=True, slots=True)
class ProviderSummary:
    """One provider's offers of one GPU: cheapest $/GPU-hour per tier, finest billing step, newest price."""

    provider_id: str
    on_demand_usd: Decimal | None
    spot_usd: Decimal | None
    billing_increment_s: int
    observed_at: datetime
    on_demand_market: str | None = None  # the market kind of the cheapest on-demand price (marketplace: a median)
    spot_market: str | None = None  # spot or auction


@dataclass(frozen=True, slots=True)
class GpuMarket:
    cheapest_on_demand: Offer | None  # the first offer of least $/GPU-hour, in the offers' order
    providers: tuple[ProviderSummary, ...]  # in order of each provider's first offer


@dataclass(slots=True)
class _Running:
    """A provider's summary while the offers are read (mutable; frozen into a ProviderSummary at the end)."""

    on_demand_usd: Decimal | None
    spot_usd: Decimal | None
    billing_increment_s: int
    observed_at: datetime
    on_demand_market: str | None = None
    spot_market: str | None = None


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
            if row.on_demand_usd is None or offer.usd_per_gpu_hour < row.on_demand_usd:
                row.on_demand_usd, row.on_demand_market = offer.usd_per_gpu_hour, offer.market
        elif offer.tier == "spot":
            if row.spot_usd is None or offer.usd_per_gpu_hour < row.spot_usd:
                row.spot_usd, row.spot_market = offer.usd_per_gpu_hour, offer.market
        row.billing_increment_s = min(row.billing_increment_s, offer.billing_increment_s)
        row.observed_at = max(row.observed_at, offer.observed_at)
    return GpuMarket(cheapest, tuple(
        ProviderSummary(pid, r.on_demand_usd, r.spot_usd, r.billing_increment_s, r.observed_at, r.on_demand_market,
                        r.spot_market) for pid, r in rows.items()))


def market_word(market: str | None, f: Formatter) -> str:
    """A price's market kind as a short label on a card ("" for the ordinary on-demand and spot kinds)."""
    if market in ("auction", "reserved"):
        return f.messages.plain(f"market.{market}")
    if market == "marketplace":
        return f.messages.plain("market.short.marketplace")
    return ""


def labelled_rate(usd: Decimal | None, market: str | None, f: Formatter) -> str:
    """$/GPU-hour with its kind: a marketplace median is a "from" price, an auction price says so."""
    if usd is None:
        return f.money(None)
    if market == "marketplace":
        return f.messages.plain("price.from", rate=f.money(usd))
    word = market_word(market, f)
    return f"{f.money(usd)} ({word})" if word else f.money(usd)


def offer_label(provider_name: str, offer: Offer, f: Formatter) -> str:
    """Where a plan's price comes from, with its market kind when it is not a plain on-demand price."""
    if offer.market == "on-demand" and offer.tier == "on-demand":
        return provider_name
    kind = offer.market if offer.market != "on-demand" else offer.tier
    word = f.messages.plain(f"market.{kind}") if f.messages.has(f"market.{kind}") else kind
    return f"{provider_name} ({word})"
