"""Pricing a plan against offers that can provide it (DESIGN §2 Prices, §3 Fit search and Cost).

Offers are built by hand so each expected price follows from the rule being tested:
a plan of N <= 8 GPUs rents one instance with >= N GPUs (paid whole); a multi-node plan rents 8-GPU
NVLink instances from one provider with a cluster fabric, never a marketplace median; no capable
offer means no price and a reason. Billing minimum: AWS/GCP/OCI bill per second with a 60 s minimum
(knowledge/data/SOURCES.md, https://aws.amazon.com/ec2/pricing/on-demand/).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

from test_rules_support import catalog_gpus, model, tables

from rules.market.offers import cheapest, has_fabric, price_findings, why_none
from rules.market.cost import offer_cost
from rules.types import Offer, Provider, Workload
from rules.engine import evaluate

GPUS = catalog_gpus()
STAMP = datetime(2026, 1, 1, tzinfo=UTC)
PROVIDERS = {
    "fabric": Provider("fabric", "Cluster cloud", "cloud", 1, "NVSwitch (NVLink) + InfiniBand on 8-GPU instances", "t"),
    "plain": Provider("plain", "Plain neocloud", "neocloud", 1, "NVLink on SXM instances; PCIe otherwise", "t"),
    "market": Provider("market", "Marketplace", "marketplace", 1, "varies by host, some InfiniBand hosts", "t"),
    "aws": Provider("aws", "AWS", "cloud", 1, "NVSwitch with EFA networking", "t"),
}


def offer(provider: str, count: int, usd_per_gpu: str, *, gpu: str = "h100-sxm-80gb", link: str = "NVLink 4",
          tier: str = "on-demand", increment_s: int = 1) -> Offer:
    price = Decimal(usd_per_gpu)
    return Offer(gpu, provider, f"{provider}-{count}x", count, "us", tier, price * count, price,  # type: ignore[arg-type]
                 increment_s, link if count > 1 else "none", STAMP, "test")


def pick(offers: list[Offer], count: int, *, prefer_link: bool = False):
    ordered = sorted(offers, key=lambda o: o.usd_per_gpu_hour)
    return cheapest(ordered, count, 1.0, spot=False, rework=0.0, providers=PROVIDERS, minimum_s={},
                    prefer_link=prefer_link)


def test_a_two_gpu_plan_is_not_priced_from_a_one_gpu_listing():
    """The 1-GPU listing is cheaper per GPU-hour ($1.00) but cannot hold a 2-GPU sharded plan:
    the 2-GPU instance at $1.50/GPU-h is used, $3.00 for the hour."""
    chosen = pick([offer("plain", 1, "1.00"), offer("plain", 2, "1.50")], 2)
    assert chosen.offer is not None and chosen.offer.gpu_count == 2
    assert chosen.usd == 3.0


def test_only_one_gpu_listings_leave_a_two_gpu_plan_without_price_and_say_why():
    offers = [offer("plain", 1, "1.00"), offer("market", 1, "0.50")]
    assert pick(offers, 2).offer is None
    numbers = why_none(offers, 2, GPUS["h100-sxm-80gb"], spot=False)
    assert numbers["reason"] == "no_instance_size" and numbers["largest_instance_gpus"] == 1


def test_a_larger_instance_is_paid_whole_and_said():
    """Only an 8-GPU box at $1/GPU-h: a 4-GPU plan pays $8/h for all eight, and a finding states it."""
    offers = [offer("plain", 8, "1.00")]
    chosen = pick(offers, 4)
    assert chosen.offer is not None and chosen.usd == 8.0
    verdict = evaluate(Workload(params_b=7.0, method="full", gpus=4, gpu="h100-sxm-80gb"),
                       gpus={"h100-sxm-80gb": GPUS["h100-sxm-80gb"]}, offers_by_gpu={"h100-sxm-80gb": tuple(offers)},
                       providers=PROVIDERS, tables=tables())
    option = verdict.options[0]
    assert option.count == 4 and option.offer is not None and option.offer.gpu_count == 8
    whole = next(f for f in option.findings if f.code == "price.whole_instance")
    assert whole.numbers["instance_gpus"] == 8 and whole.numbers["gpus"] == 4


def test_multinode_plans_come_from_a_fabric_provider_never_a_marketplace():
    """16 GPUs = two 8-GPU instances. The marketplace ($0.50) and the fabric-less neocloud ($1.00) are
    cheaper per GPU-hour but cannot provide a cluster: the fabric cloud's 2 x 8 x $2.00 = $32/h is used."""
    offers = [offer("market", 8, "0.50"), offer("plain", 8, "1.00"), offer("fabric", 8, "2.00"),
              offer("fabric", 1, "1.50")]
    chosen = pick(offers, 16)
    assert chosen.offer is not None and chosen.offer.provider_id == "fabric" and chosen.offer.gpu_count == 8
    assert chosen.usd == 32.0


def test_no_fabric_provider_means_no_price_with_the_reason():
    offers = (offer("market", 8, "0.50"), offer("plain", 8, "1.00"))
    assert pick(list(offers), 16).offer is None
    gpu = GPUS["h100-sxm-80gb"]
    verdict = evaluate(Workload(model=model("meta-llama/Llama-3.1-70B"), method="full", gpu=gpu.id,
                                recipe="mixed_adamw", optimizer="adamw", offload=False),
                       gpus={gpu.id: gpu}, offers_by_gpu={gpu.id: offers}, providers=PROVIDERS, tables=tables())
    own = verdict.options[0]
    assert own.gpu_id == gpu.id and own.count > 8  # 70B full, mixed AdamW (16 B/param) exceeds a node of 80 GB cards
    assert own.offer is None and own.cost_usd is None  # kept, with its numbers, but no price
    none = next(f for f in own.findings if f.code == "price.none")
    assert none.numbers["reason"] == "no_cluster_provider"
    assert any(f.code == "price.no_cluster" for f in own.findings)


def test_sharded_plans_prefer_nvlink_instances_and_flag_pcie():
    nvlink, pcie = offer("plain", 2, "1.00"), offer("market", 2, "0.80", link="PCIe")
    assert pick([nvlink, pcie], 2, prefer_link=True).offer == nvlink
    assert pick([nvlink, pcie], 2, prefer_link=False).offer == pcie
    gpu = GPUS["h100-sxm-80gb"]
    verdict = evaluate(Workload(params_b=3.0, method="full", gpus=2, gpu=gpu.id),
                       gpus={gpu.id: gpu}, offers_by_gpu={gpu.id: (pcie,)}, providers=PROVIDERS, tables=tables())
    option = verdict.options[0]
    assert option.count == 2 and option.offer == pcie
    assert any(f.code == "price.pcie_instance" for f in option.findings)


def test_consumer_cards_are_never_priced_beyond_a_node():
    gpu = GPUS["rtx-4090"]
    offers = [offer("fabric", 8, "0.30", gpu=gpu.id, link="PCIe")]
    assert pick(offers, 16).offer is None
    assert why_none(offers, 16, gpu, spot=False)["reason"] == "consumer_multinode"


def test_cluster_plan_says_how_it_is_priced():
    gpu = GPUS["h100-sxm-80gb"]
    offers = (offer("fabric", 8, "2.00"),)
    verdict = evaluate(Workload(model=model("meta-llama/Llama-3.1-70B"), method="full", gpu=gpu.id,
                                recipe="mixed_adamw", optimizer="adamw", offload=False),
                       gpus={gpu.id: gpu}, offers_by_gpu={gpu.id: offers}, providers=PROVIDERS, tables=tables())
    option = verdict.options[0]
    cluster = next(f for f in option.findings if f.code == "price.cluster")
    assert cluster.numbers["instances"] == option.count // 8 and cluster.numbers["instance_gpus"] == 8
    assert option.offer is not None and option.offer.provider_id == "fabric"
    assert price_findings(replace(option, offer=None), gpu, offers, spot=False)[0].code == "price.none"


def test_aws_gcp_oci_bill_at_least_sixty_seconds():
    """A 10-second job on a $36/h per-second instance costs $0.10, but AWS bills at least 60 s: $0.60."""
    minimum = tables().billing_minimum_s
    assert {p: minimum.get(p) for p in ("aws", "gcp", "oci")} == {"aws": 60, "gcp": 60, "oci": 60}
    job_hours = 10 / 3600
    aws = offer("aws", 1, "36.00")
    plain = offer("plain", 1, "36.00")
    assert offer_cost(aws, 1, job_hours, rework=0.0, minimum_s=minimum) == Decimal("0.60")
    assert offer_cost(plain, 1, job_hours, rework=0.0, minimum_s=minimum) == Decimal("0.10")
    assert offer_cost(aws, 1, 2 / 60, rework=0.0, minimum_s=minimum) == Decimal("1.20")  # 2 min: no minimum


def test_fabric_is_read_from_the_provider_catalog(snapshot):  # type: ignore[no-untyped-def]
    """providers.csv: AWS (EFA), Azure (InfiniBand), OCI (RDMA cluster network), Nebius and Mithril
    (InfiniBand) name a cluster fabric; marketplaces never count, whatever their hosts have."""
    providers = snapshot.providers
    with_fabric = {p for p in providers if has_fabric(providers[p])}
    assert {"aws", "azure", "oci", "nebius", "mithril"} <= with_fabric
    assert not with_fabric & {p for p in providers if providers[p].kind == "marketplace"}
