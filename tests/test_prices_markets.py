"""Ranking by market kind (issue 18 item 3): auction prices count as spot (only when spot is allowed, with the
rework allowance), a marketplace median is an on-demand "from" price; the market table is sourced and consistent."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from knowledge.markets import classify, market_table
from rules.market.offers import cheapest
from rules.types import Offer, Provider

SEEN = datetime(2025, 11, 12, tzinfo=UTC)
PROVIDERS = {
    "lambda": Provider("lambda", "Lambda", "neocloud", 60, "NVSwitch (NVLink) + InfiniBand", "t"),
    "mithril": Provider("mithril", "Mithril", "neocloud", 3600, "NVSwitch (NVLink) + InfiniBand", "t"),
    "vast": Provider("vast", "Vast.ai", "marketplace", 1, "varies", "t"),
}


def offer(provider: str, usd_per_hour: str, tier: str, market: str, count: int = 8) -> Offer:
    usd = Decimal(usd_per_hour)
    return Offer("h100-sxm-80gb", provider, f"{provider}-{count}x", count, "r", tier, usd,  # type: ignore[arg-type]
                 usd / count, PROVIDERS[provider].billing_increment_s, "NVLink 4", SEEN, "t", market)  # type: ignore[arg-type]


# mithril.csv: h100-80gb.sxm.8x at $8.00 an hour (an auction price); the others are made-up round numbers.
OFFERS = sorted([offer("lambda", "23.92", "on-demand", "on-demand"), offer("mithril", "8.00", "spot", "auction"),
                 offer("vast", "14.40", "on-demand", "marketplace")], key=lambda o: o.usd_per_gpu_hour)


def pick(spot: bool, rework: float = 0.1) -> tuple[str | None, float | None]:
    p = cheapest(OFFERS, 8, 10.0, spot=spot, rework=rework, providers=PROVIDERS, minimum_s={}, prefer_link=True)
    return (p.offer.provider_id if p.offer else None), p.usd


def test_an_auction_price_is_never_an_on_demand_plan() -> None:
    provider, usd = pick(spot=False)
    # On-demand: the Vast median ($14.40/h × 10 h = $144), a "from" price, beats Lambda's $239.20; Mithril is out.
    assert provider == "vast" and usd is not None and abs(usd - 144.0) < 1e-6


def test_an_auction_price_is_a_spot_plan_with_the_rework_allowance() -> None:
    provider, usd = pick(spot=True)
    # 10 h × 1.1 rework = 11 h, billed by the hour on Mithril: 11 × $8.00 = $88.
    assert provider == "mithril" and usd is not None and abs(usd - 88.0) < 1e-6


def test_market_table_is_consistent_and_sourced() -> None:
    table = market_table()
    assert table[("mithril", "on-demand")] == ("spot", "auction")  # Mithril's Price column is an auction price too
    assert table[("vast", "spot")] == ("spot", "marketplace")
    assert classify("lambda", "on-demand", marketplace=False) == ("on-demand", "on-demand")
    assert classify("nowhere", "spot", marketplace=False) == ("spot", "spot")
    assert classify("newmarket", "on-demand", marketplace=True) == ("on-demand", "marketplace")
