"""The offer index picks exactly what the plain scan picks (rules.market.book vs rules.market.offers.cheapest).

The book is a speed-up only: for every GPU, plan size, tier, job length and link preference the pick
and its cost must be identical, including ties (first offer in price order wins), PCIe-only GPUs under
a link preference (every offer scanned), billing minimums and multi-node capability.
"""

from __future__ import annotations

import itertools
from decimal import Decimal
from dataclasses import replace

from test_rules_offers import PROVIDERS, offer
from test_rules_support import catalog_gpus, model, tables

from knowledge.snapshot import build_snapshot
from rules.market.book import OfferBook, cheapest_in
from rules.market.offers import cheapest
from rules.types import Workload
from rules.engine import evaluate

COUNTS = (1, 2, 3, 4, 5, 8, 10, 16, 24, 64)
HOURS = (None, 0.001, 0.5, 3.7, 250.0)
MINIMUM_S = {"aws": 60, "plain": 3600}


def _same_picks(offers_by_gpu, providers, minimum_s) -> int:
    book = OfferBook.build(offers_by_gpu)
    checked = 0
    for gpu_id, offers in offers_by_gpu.items():
        for count, hours, spot, prefer in itertools.product(COUNTS, HOURS, (False, True), (False, True)):
            kwargs = dict(spot=spot, rework=0.15, providers=providers, minimum_s=minimum_s, prefer_link=prefer)
            assert cheapest_in(book, gpu_id, count, hours, **kwargs) == cheapest(offers, count, hours, **kwargs), (
                gpu_id, count, hours, spot, prefer)
            checked += 1
    return checked


def _by_gpu(offers):
    built = build_snapshot(gpus=catalog_gpus().values(), offers=offers)
    return built.offers_by_gpu


def test_hand_made_offers_with_ties_minimums_pcie_and_clusters():
    """Mixed sizes and links, equal prices (tie order), per-hour billing with minimums, a marketplace,
    spot offers, an all-PCIe GPU (link preference with nothing linked) and a GPU with no offers of a tier."""
    offers = [
        offer("plain", 1, "1.00"), offer("plain", 2, "1.00"), offer("fabric", 8, "1.00"),
        offer("market", 8, "0.90"), offer("aws", 8, "1.20", increment_s=1), offer("plain", 8, "1.05", link="PCIe"),
        offer("fabric", 16, "1.30"), offer("plain", 4, "1.10", increment_s=3600), offer("aws", 2, "0.95", link="PCIe"),
        offer("fabric", 8, "0.70", tier="spot"), offer("market", 1, "0.40", tier="spot"),
        offer("plain", 2, "0.50", gpu="l40s", link="PCIe"), offer("market", 4, "0.45", gpu="l40s",
                                                                         link="PCIe"),
        offer("aws", 8, "2.00", gpu="a100-sxm-80gb", increment_s=60),
    ]
    offers += [replace(o, region="eu") for o in offers]  # equal prices everywhere: ties on every pick
    assert _same_picks(_by_gpu(offers), PROVIDERS, MINIMUM_S) > 0


def test_bundled_offers_give_the_same_picks(snapshot):
    """Every GPU of the shipped catalog over its real offers (SkyPilot copy), with the shipped minimums."""
    checked = _same_picks(snapshot.offers_by_gpu, snapshot.providers, tables().billing_minimum_s)
    assert checked >= len(snapshot.offers_by_gpu) * len(COUNTS)


def test_evaluate_with_the_book_is_the_same_verdict(snapshot):
    book = OfferBook.build(snapshot.offers_by_gpu)
    for workload in (Workload(model=model("meta-llama/Llama-3.1-8B"), method="lora"),
                     Workload(model=model("meta-llama/Llama-3.1-70B"), method="full", samples=50_000, spot=True),
                     Workload(params_b=405.0, method="inference")):
        args = dict(gpus=snapshot.gpus, offers_by_gpu=snapshot.offers_by_gpu, providers=snapshot.providers,
                    tables=tables())
        assert evaluate(workload, **args, offer_book=book) == evaluate(workload, **args)


def test_a_book_reused_with_other_providers_refilters_its_clusters():
    """The book keeps each multi-node plan's capable offers per providers mapping: asked again with other
    providers (the fabric cloud now a marketplace), it picks what the plain scan picks with those."""
    offers_by_gpu = _by_gpu([offer("fabric", 8, "1.00"), offer("plain", 8, "0.90"), offer("aws", 8, "1.20")])
    book = OfferBook.build(offers_by_gpu)
    offers = offers_by_gpu["h100-sxm-80gb"]
    without_fabric = {**PROVIDERS, "fabric": replace(PROVIDERS["fabric"], kind="marketplace")}
    picks = []
    for providers in (PROVIDERS, without_fabric, PROVIDERS):
        kwargs = dict(spot=False, rework=0.0, providers=providers, minimum_s={}, prefer_link=False)
        picked = cheapest_in(book, "h100-sxm-80gb", 16, 2.0, **kwargs)
        assert picked == cheapest(offers, 16, 2.0, **kwargs)
        picks.append(picked.offer.provider_id if picked.offer else None)
    assert picks == ["fabric", "aws", "fabric"]


def test_long_scans_pick_what_the_full_scan_picks_in_a_large_market(snapshot):
    """A plan that prefers linked offers on a GPU with none costs every capable offer, and a scan still under
    its bound after a few rows (hourly billing of short jobs) is finished from the cheapest of all rows: the
    book does both per billing group. Over 20,000 offers (the bench's synthetic market: copies within ±10 %,
    many equal prices), at job lengths on and just off whole billing steps, with minimums, one node and
    several, it picks what the plain scan picks."""
    from bot.bench.offers import scaled_offers

    offers_by_gpu = _by_gpu(scaled_offers(snapshot, 20_000))
    book = OfferBook.build(offers_by_gpu)
    minimum_s = {**tables().billing_minimum_s, "lambda": 3600}
    checked = 0
    for gpu_id, offers in offers_by_gpu.items():
        for count, hours, spot, prefer in itertools.product((1, 2, 3, 4, 8, 16, 24),
                                                            (None, 1e-6, 0.25, 1.0, 2.0 + 1e-13, 7.3),
                                                            (False, True), (False, True)):
            kwargs = dict(spot=spot, rework=0.15, providers=snapshot.providers, minimum_s=minimum_s,
                          prefer_link=prefer)
            assert cheapest_in(book, gpu_id, count, hours, **kwargs) == cheapest(offers, count, hours, **kwargs), (
                gpu_id, count, hours, spot, prefer)
            checked += 1
    assert checked > 1000


def test_an_instance_priced_below_its_gpus_does_not_change_a_long_scan():
    """The scan stops at the first offer whose per-GPU floor reaches the best cost so far. An offer listed at
    an instance price below its GPUs' (inconsistent data) can lie beyond that stop and be cheaper: the plain scan
    never reaches it, so the book, finishing a long scan from all rows, must not pick it either."""
    hourly = [replace(offer("fabric", 1, f"{1 + i / 100:.2f}", increment_s=3600), region=f"r{i}") for i in range(40)]
    odd = replace(offer("fabric", 1, "20.00"), usd_per_hour=Decimal("0.50"), region="odd")  # 1 GPU at $0.50/h
    offers_by_gpu = _by_gpu(hourly + [odd])
    book = OfferBook.build(offers_by_gpu)
    kwargs = dict(spot=False, rework=0.0, providers=PROVIDERS, minimum_s={}, prefer_link=False)
    picked = cheapest_in(book, "h100-sxm-80gb", 1, 0.1, **kwargs)
    assert picked == cheapest(offers_by_gpu["h100-sxm-80gb"], 1, 0.1, **kwargs)
    assert picked.offer is not None and picked.offer.region == "r0"
