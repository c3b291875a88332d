"""Engine rules: determinism, interconnect, multi-node limits, cost rounding, tier table, speed."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from rules.tables import RuleTableError, parse_rule_tables
from rules.market.cost import offer_cost
from rules.speed.training import flops_per_token
from rules.workload.setup import resolve_setup
from rules.types import Offer, Workload
from rules.engine import evaluate
from test_rules_support import catalog_gpus, model, offers_for, providers, tables

GPUS = catalog_gpus()


def run(workload, offers=None):
    return evaluate(workload, gpus=GPUS, offers_by_gpu=offers or offers_for(GPUS), providers=providers(),
                    tables=tables())


def test_same_input_same_output():
    w = Workload(params_b=13, method="lora", tokens=5e7, spot=True)
    assert run(w) == run(w)


def test_more_than_two_pcie_cards_are_flagged():
    v = run(Workload(model=model("meta-llama/Llama-3.1-70B"), method="lora", seq_len=2048, batch_size=1,
                     gpu="l40s", grad_checkpointing="full"))
    codes = {f.code for f in v.options[0].findings}
    assert v.options[0].count > 2 and "link.pcie_many" in codes


def test_consumer_cards_are_not_offered_beyond_a_node():
    v = run(Workload(params_b=20, method="full", gpu="rtx-4090", grad_checkpointing="full", seq_len=1024,
                     batch_size=1, recipe="mixed_adamw", optimizer="adamw", offload=False))
    # mixed AdamW, 16 B/param: 320 GB of state: fits only on 16+ cards, i.e. beyond one node
    assert all(o.gpu_id != "rtx-4090" for o in v.options)  # the others are alternatives on other GPUs
    assert v.rejected[0].gpu_id == "rtx-4090" and v.rejected[0].code == "segment.consumer_multinode"
    pinned = next(f for f in v.findings if f.code == "fit.pinned")
    assert pinned.outcome == "fail"


@pytest.mark.parametrize(("increment_s", "hours", "expected"),
                         [(3600, 0.25, Decimal("2.00")), (1, 0.25, Decimal("0.50")), (60, 0.501, Decimal("1.04"))],  # 30.06 min -> 31 min x $2/60
                         ids=["hourly-rounds-up", "per-second", "per-minute"])
def test_billing_increment(increment_s, hours, expected):
    offer = Offer("h100-sxm-80gb", "p", "x", 1, "us", "on-demand", Decimal("2"), Decimal("2"), increment_s,
                  "NVLink", datetime(2026, 1, 1, tzinfo=UTC), "test")
    assert offer_cost(offer, 1, hours, rework=0.0) == expected


@pytest.mark.parametrize(("method", "ckpt", "k"), [("full", "none", 6), ("lora", "none", 4), ("full", "full", 8)])
def test_flops_per_token(method, ckpt, k):
    """6·N full, ≈4·N LoRA, +2·N with recomputation (DESIGN §3)."""
    setup = resolve_setup(Workload(method=method, grad_checkpointing=ckpt), method=method, gpus=1)
    assert flops_per_token(1.0, setup) == k * 1e9


def test_spot_gets_a_checkpoint_finding():
    v = run(Workload(params_b=8, method="lora", spot=True, tokens=1e7))
    assert any(f.code == "spot.checkpoint" and f.numbers["interval_min"] == 30 for f in v.findings)


@pytest.mark.parametrize(("data", "message"), [
    ({"tier_rows": [{"tier": "consumer", "max_gpus": 1}]}, "tier_rows[0]: the last row must be a catch-all"),
    ({"tier_rows": [{"tier": "gold"}]}, "tier_rows[0]: tier: 'gold'"),
    ({"tier_rows": [{"tier": "consumer", "max_gpus": "one"}, {"tier": "frontier"}]}, "tier_rows[0]: max_gpus"),
])
def test_tier_table_errors_name_file_and_row(data, message):
    with pytest.raises(RuleTableError, match=r"^t\.json: " + message.replace("[", r"\[").replace("]", r"\]")):
        parse_rule_tables(data, source="t.json")


@pytest.mark.parametrize(("workload", "tier"), [
    (Workload(params_b=7, method="qlora", seq_len=512, batch_size=1), "consumer"),
    # 70B full: ~1.1 TB of state / 8 = ~131 GiB per GPU + activations: one 8-GPU node of 180-192 GB
    # cards (B200, MI300X) holds it, so the best plan is a single node (the table's datacenter row).
    (Workload(params_b=70, method="full", grad_checkpointing="full"), "datacenter"),
    (Workload(params_b=100, method="pretrain"), "frontier"),
])
def test_tier(workload, tier):
    assert run(workload).tier == tier


def test_benchmark_whole_catalog_with_10000_offers():
    """Prints evaluate()'s times over the whole catalog (a benchmark: `gpu-advisor bench` judges the budget).

    What is asserted is that every run gives the same ranked answer; no timing is asserted, since a shared
    or slower host moves the figures (the bench reports the host's speed beside them).
    """
    offers = offers_for(GPUS, per_gpu=10_000 // len(GPUS) + 1)
    w = Workload(params_b=13, method="lora", tokens=5e7, spot=False)
    first = run(w, offers)
    assert first.options
    times = []
    for _ in range(100):
        start = time.perf_counter()
        again = run(w, offers)
        times.append(time.perf_counter() - start)
        assert [(o.gpu_id, o.count, o.cost_usd) for o in again.options] == [(o.gpu_id, o.count, o.cost_usd) for o in first.options]
    times.sort()
    median_ms, p99_ms, best_ms = times[50] * 1000, times[98] * 1000, times[0] * 1000
    print(f"\nevaluate(): {len(GPUS)} GPUs, {sum(map(len, offers.values()))} offers: "
          f"p50 {median_ms:.2f} ms, p99 {p99_ms:.2f} ms, min {best_ms:.2f} ms (shared 2-core machine)")


def test_buy_vs_rent_break_even_for_a_priced_card():
    """RTX 4090 (purchase_usd in the catalog): break-even = price x (1 - resale share) / (rent - power per hour)."""
    v = run(Workload(params_b=7, method="qlora", seq_len=512, batch_size=1, gpu="rtx-4090", tokens=1e7))
    finding = next(f for f in v.options[0].findings if f.code == "cost.buy_vs_rent")
    n = finding.numbers
    power = GPUS["rtx-4090"].tdp_w / 1000 * 1.3 * tables().power_usd_per_kwh
    assert n["power_usd_per_hour"] == pytest.approx(power, abs=1e-3)
    assert n["break_even_hours"] == pytest.approx(
        float(GPUS["rtx-4090"].purchase_usd) * (1 - tables().resale_share) / (n["rent_usd_per_gpu_hour"] - power),
        rel=1e-3)
    assert 0 < n["job_share_of_break_even_pct"] < 100


def test_no_buy_vs_rent_without_a_purchase_price():
    v = run(Workload(params_b=7, method="qlora", seq_len=512, batch_size=1, gpu="h100-sxm-80gb", tokens=1e7))
    assert GPUS["h100-sxm-80gb"].purchase_usd is None
    assert all(f.code != "cost.buy_vs_rent" for f in v.options[0].findings)


def test_diffusion_says_why_there_are_no_hours():
    v = run(Workload(params_b=8, method="diffusion", tokens=1e7))
    assert all(o.hours is None for o in v.options)
    assert any(f.code == "time.not_estimated" and f.numbers["method"] == "diffusion" for f in v.findings)


def test_inference_is_served_with_rates_not_hours():
    """Serving and running have no hours (no dataset): tokens/s and $ per million output tokens instead."""
    v = run(Workload(params_b=8, method="inference", tokens=1e7))
    assert all(o.hours is None and o.throughput is not None for o in v.options)
    assert not any(f.code == "time.not_estimated" for f in v.findings)
