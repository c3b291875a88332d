"""Which offers can provide a plan of N GPUs, the cheapest of them, and why none can (DESIGN §2 Prices, §3 Cost).

- One node (N <= 8): an instance of one provider with at least N of the GPU; a larger instance is
  paid whole. A sharded plan prefers instances whose GPUs are joined by an NVLink-class link.
- More than one node: 8-GPU-or-larger instances with an NVLink-class link from one provider whose
  multi-GPU instances have a cluster fabric (InfiniBand, EFA, RDMA/RoCE), or one such machine with
  all N GPUs (GCP a2-megagpu-16g has 16 A100s behind NVSwitch); never a marketplace
  (its prices are medians of single-machine listings, not a rentable cluster), never consumer cards.
- Billing: whole increments of the offer's billing step, at least the provider's minimum
  (AWS, GCP, OCI bill per second with a 60 s minimum: knowledge/data/SOURCES.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

from rules.types import GpuSpec, Offer, Provider
from rules.verdict import Finding, Option

GPUS_PER_NODE = 8
# Words in Provider.multi_gpu_interconnect that name a cluster fabric between instances.
FABRIC_WORDS = ("infiniband", "efa", "rdma", "roce", "cluster network", "gpudirect")
# Offer.interconnect values meaning a dedicated GPU-to-GPU link (NVLink/NVSwitch, AMD Infinity Fabric).
LINK_WORDS = ("nvlink", "nvswitch", "infinity fabric", "xgmi")
SHARDED = ("zero2", "zero3", "fsdp", "tensor_parallel")


@dataclass(frozen=True, slots=True)
class Pick:
    """The offer chosen for a plan and its cost (job, or one hour when the hours are unknown) as a float."""

    offer: Offer | None
    usd: float | None

    def __init__(self, offer: Offer | None, usd: float | None) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "offer", offer)
        object.__setattr__(self, "usd", usd)


def has_fabric(provider: Provider | None) -> bool:
    """A provider that can rent several 8-GPU instances joined by a cluster fabric."""
    if provider is None or provider.kind == "marketplace":
        return False
    text = provider.multi_gpu_interconnect.lower()
    return any(word in text for word in FABRIC_WORDS)


def linked(offer: Offer) -> bool:
    """The instance's GPUs are joined by an NVLink-class link (not PCIe, not unknown)."""
    text = offer.interconnect.lower()
    return any(word in text for word in LINK_WORDS)


def instances_for(offer: Offer, count: int) -> int:
    """Whole instances a plan of `count` GPUs rents on this offer."""
    return max(1, math.ceil(count / max(offer.gpu_count, 1)))


def can_provide(offer: Offer, count: int, providers: Mapping[str, Provider]) -> bool:
    """Whether this offer's instances can make up a plan of `count` GPUs (see the module docstring)."""
    if count <= GPUS_PER_NODE:
        return offer.gpu_count >= count
    if offer.gpu_count < GPUS_PER_NODE or not linked(offer):
        return False
    provider = providers.get(offer.provider_id)
    one_machine = offer.gpu_count >= count and provider is not None and provider.kind != "marketplace"
    return one_machine or has_fabric(provider)


def billed_seconds(seconds: float, offer: Offer, minimum_s: Mapping[str, int]) -> float:
    """Seconds charged: whole billing increments, and never less than the provider's minimum."""
    step = max(offer.billing_increment_s, 1)
    billed = math.ceil(seconds / step - 1e-9) * step
    return max(billed, minimum_s.get(offer.provider_id, 0), step)


def job_usd(offer: Offer, count: int, hours: float, *, rework: float, minimum_s: Mapping[str, int]) -> Decimal:
    """Exact cost per job: whole instances x instance $/hour x billed time, rounded up to the cent."""
    seconds = billed_seconds(hours * (1.0 + rework) * 3600.0, offer, minimum_s)
    cost = offer.usd_per_hour * instances_for(offer, count) * Decimal(str(seconds)) / Decimal(3600)
    return cost.quantize(Decimal("0.01"), rounding=ROUND_CEILING)


def cheapest(offers: Sequence[Offer], count: int, hours: float | None, *, spot: bool, rework: float,
             providers: Mapping[str, Provider], minimum_s: Mapping[str, int], prefer_link: bool) -> Pick:
    """Cheapest offer that can provide the plan; with `prefer_link`, NVLink-class instances first.

    Offers arrive sorted by $/GPU-hour, and a plan of `count` GPUs costs at least count x $/GPU-hour x
    hours on any offer, so the scan stops at the first offer whose floor is no cheaper than the best.
    """
    wanted = "spot" if spot else "on-demand"
    seconds = (hours if hours is not None else 1.0) * (1.0 + (rework if spot else 0.0)) * 3600.0
    floor_factor = count * seconds  # x $/GPU-hour: the least any offer can charge (in $ x 3600)
    best_cost = {True: math.inf, False: math.inf}  # in $ x 3600, by "NVLink-class (and preferred)"
    best: dict[bool, Offer] = {}
    bound = math.inf
    for offer in offers:  # a hot loop (every GPU of every evaluation): kept inline
        if offer.tier != wanted:
            continue
        if float(offer.usd_per_gpu_hour) * floor_factor >= bound:
            break
        size = offer.gpu_count
        if size < count if count <= GPUS_PER_NODE else not can_provide(offer, count, providers):
            continue
        step = offer.billing_increment_s
        billed = seconds if step <= 1 else math.ceil(seconds / step - 1e-9) * step
        if minimum_s and billed < minimum_s.get(offer.provider_id, 0):
            billed = minimum_s[offer.provider_id]
        cost = float(offer.usd_per_hour) * (1 if size >= count else -(-count // size)) * billed
        group = prefer_link and linked(offer)
        if cost < best_cost[group]:
            best_cost[group], best[group] = cost, offer
            if group == prefer_link:
                bound = cost
    if not best:
        return Pick(None, None)
    group = True in best
    return Pick(best[group], best_cost[group] / 3600.0 if hours is not None else None)


def why_none(offers: Sequence[Offer], count: int, gpu: GpuSpec, *, spot: bool) -> dict[str, int | str]:
    """Why no offer can provide a plan of `count` GPUs: the `price.none` numbers."""
    tier = "spot" if spot else "on-demand"
    sizes = [o.gpu_count for o in offers if o.tier == tier]
    numbers: dict[str, int | str] = {"gpus": count, "tier": tier}
    if count > GPUS_PER_NODE and gpu.segment == "consumer":
        numbers["reason"] = "consumer_multinode"
    elif not sizes:
        numbers["reason"] = "no_offers"
    elif count <= GPUS_PER_NODE:
        numbers.update(reason="no_instance_size", largest_instance_gpus=max(sizes))
    else:
        numbers.update(reason="no_cluster_provider", nodes=math.ceil(count / GPUS_PER_NODE))
    return numbers


def price_findings(option: Option, gpu: GpuSpec, offers: Sequence[Offer], *, spot: bool) -> tuple[Finding, ...]:
    """What the plan's price stands on: no capable offer (and why), a whole larger instance, PCIe, a cluster."""
    offer = option.offer
    if offer is None:
        numbers = why_none(offers, option.count, gpu, spot=spot)
        codes = {"no_instance_size": "price.no_instance", "no_cluster_provider": "price.no_cluster"}
        extra = codes.get(str(numbers["reason"]))
        out = [Finding("price.none", "info", numbers)]
        if extra is not None:
            out.append(Finding(extra, "warn", numbers))
        return tuple(out)
    out = []
    if option.count < offer.gpu_count and option.count <= GPUS_PER_NODE:
        out.append(Finding("price.whole_instance", "info", {
            "gpus": option.count, "instance_gpus": offer.gpu_count, "instance_hourly_usd": float(offer.usd_per_hour)}))
    if option.count > 1 and option.sharding in SHARDED and gpu.has_nvlink_class_link and not linked(offer):
        out.append(Finding("price.pcie_instance", "warn", {"gpus": option.count, "link": offer.interconnect}))
    if option.count > GPUS_PER_NODE:
        out.append(Finding("price.cluster", "info", {
            "gpus": option.count, "instances": instances_for(offer, option.count), "instance_gpus": offer.gpu_count,
            "instance_hourly_usd": float(offer.usd_per_hour)}))
    return tuple(out)
