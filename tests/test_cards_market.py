"""Market summaries (bot/render/market.py) equal the plain per-card scans they replace, on the bundled offers."""

from __future__ import annotations

from dataclasses import replace

from bot.render.market import summarise


def _plain(offers):
    """The definitions the cards use: first cheapest on-demand offer; per provider, cheapest per tier,
    finest billing step, newest observation (as views.gpu_column / views.provider_prices computed them)."""
    on_demand = [o for o in offers if o.tier == "on-demand"]
    cheapest = min(on_demand, key=lambda o: o.usd_per_gpu_hour) if on_demand else None
    by_provider: dict[str, list] = {}
    for o in offers:
        by_provider.setdefault(o.provider_id, []).append(o)

    def low(group, tier):
        prices = [o.usd_per_gpu_hour for o in group if o.tier == tier]
        return min(prices) if prices else None

    rows = [(pid, low(g, "on-demand"), low(g, "spot"), min(o.billing_increment_s for o in g),
             max(o.observed_at for o in g)) for pid, g in by_provider.items()]
    return cheapest, rows


def test_summaries_match_the_plain_scans(snapshot):
    assert snapshot.offers_by_gpu
    for offers in snapshot.offers_by_gpu.values():
        market = summarise(offers)
        cheapest, rows = _plain(offers)
        assert market.cheapest_on_demand is cheapest
        assert [(p.provider_id, p.on_demand_usd, p.spot_usd, p.billing_increment_s, p.observed_at)
                for p in market.providers] == rows


def test_ties_keep_the_first_offer_and_no_offers_give_an_empty_market(snapshot):
    offers = next(o for o in snapshot.offers_by_gpu.values() if any(x.tier == "on-demand" for x in o))
    first = next(o for o in offers if o.tier == "on-demand")
    twin = replace(first, region=first.region + "-twin")
    assert summarise((first, twin)).cheapest_on_demand is first
    assert summarise(()).cheapest_on_demand is None and summarise(()).providers == ()
