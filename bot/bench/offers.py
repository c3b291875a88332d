"""Deterministic synthetic offers: the real ones copied into made-up regions at nearby prices."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from knowledge.snapshot import Snapshot, build_snapshot
from rules.types import Offer

# Copies are priced within ±10 % of the real offer, in steps of 1 %, so cheapest-first order
# interleaves real and synthetic offers the way a larger market would.
_SPREAD_PCT = 21
_CENT = Decimal("0.000001")


def synthetic_offer(real: Offer, copy: int) -> Offer:
    """Copy number `copy` (1, 2, ...) of `real`: same GPU, provider and shape, another region and price."""
    factor = Decimal(100 + (copy * 7 + len(real.instance_type)) % _SPREAD_PCT - 10) / 100
    return replace(
        real,
        region=f"{real.region}-syn{copy}",
        usd_per_hour=(real.usd_per_hour * factor).quantize(_CENT),
        usd_per_gpu_hour=(real.usd_per_gpu_hour * factor).quantize(_CENT),
        source="bench-synthetic",
    )


def real_offers(snapshot: Snapshot) -> list[Offer]:
    """The snapshot's offers in a stable order (GPU, provider, instance, region, tier)."""
    offers = [o for group in snapshot.offers_by_gpu.values() for o in group]
    return sorted(offers, key=lambda o: (o.gpu_id, o.provider_id, o.instance_type, o.region, o.tier))


def scaled_offers(snapshot: Snapshot, total: int) -> list[Offer]:
    """Exactly `total` offers: every real one, then synthetic copies round-robin over the real ones."""
    base = real_offers(snapshot)
    if not base:
        raise ValueError("the snapshot has no offers to copy")
    offers = base[:total]
    copy = 1
    while len(offers) < total:
        offers.extend(synthetic_offer(o, copy) for o in base[: total - len(offers)])
        copy += 1
    return offers


def scaled_snapshot(snapshot: Snapshot, total: int) -> Snapshot:
    """The same catalog and indexes with `total` offers, sorted as build_snapshot sorts them."""
    built = build_snapshot(gpus=snapshot.gpus.values(), offers=scaled_offers(snapshot, total))
    return replace(snapshot, offers_by_gpu=built.offers_by_gpu)
