"""Ranking by objective, pinned GPU answers, near-miss rejects and truthful assumptions (issue 3 item 5, DESIGN §3).

Prices are set by hand so the expected order follows from arithmetic on published peaks, not from output:
RTX 4090 165.2 dense BF16 TFLOPS (Ada whitepaper, FP32 accumulate), H100 SXM 989 (NVIDIA datasheet).
Cost per job is proportional to $/GPU-h / (peak x utilisation); the utilisations are the calibrated
table values (rules/data/rule_tables.json: consumer QLoRA 0.49, datacenter QLoRA 0.39).
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from test_rules_support import catalog_gpus, model, offers_for, providers, tables

from rules.types import Offer, Workload
from rules.engine import evaluate

GPUS = catalog_gpus()
STAMP = datetime(2026, 1, 1, tzinfo=UTC)
SMALL = ("h100-sxm-80gb", "rtx-4090", "l40s", "rtx-a2000-6gb", "a100-sxm-40gb", "rtx-3090")


def offer(gpu_id: str, usd: str, count: int = 1) -> Offer:
    price = Decimal(usd)
    return Offer(gpu_id, "secs", f"{gpu_id}-{count}", count, "us", "on-demand", price * count, price, 1,
                 "NVLink", STAMP, "test")


def run(workload: Workload, prices: dict[str, str] | None = None, pool: tuple[str, ...] = SMALL):
    gpus = {g: GPUS[g] for g in pool}
    prices = prices or {"h100-sxm-80gb": "1.29", "rtx-4090": "0.23", "l40s": "0.43", "rtx-a2000-6gb": "0.05",
                        "a100-sxm-40gb": "0.70", "rtx-3090": "0.22"}
    offers = {g: (offer(g, prices[g]), offer(g, prices[g], 8)) for g in pool if g in prices}
    return evaluate(workload, gpus=gpus, offers_by_gpu=offers, providers=providers(), tables=tables())


def pinned(verdict):
    return next(f for f in verdict.findings if f.code == "fit.pinned")


QLORA_13B = dict(params_b=13.0, method="qlora")


def test_a_budget_ranks_by_cost_per_job_with_a_stated_default_dataset():
    """13B QLoRA needs ~13 GiB: a 4090 at $0.23 costs 0.23/(165.2x0.49) = 0.0028 per unit of work, an H100
    at $1.29 costs 1.29/(989x0.39) = 0.0033: the 4090 is cheaper per job, so it ranks first."""
    verdict = run(Workload(**QLORA_13B, budget_usd=Decimal("20")))
    assert verdict.options[0].gpu_id == "rtx-4090"
    costs = [o.cost_usd for o in verdict.options]
    assert None not in costs and costs == sorted(costs)
    assert verdict.assumptions["samples"] == 10_000 and "samples" in verdict.defaulted


def test_an_hourly_budget_also_means_cheapest():
    verdict = run(Workload(**QLORA_13B, budget_usd_per_hour=Decimal("1")))
    assert verdict.options[0].gpu_id == "rtx-4090"


def test_a_given_dataset_is_not_replaced_by_the_default():
    verdict = run(Workload(**QLORA_13B, budget_usd=Decimal("20"), tokens=1e6))
    assert "samples" not in verdict.assumptions


def test_balanced_does_not_pick_a_dearer_per_job_h100_for_a_small_job():
    verdict = run(Workload(**QLORA_13B))  # no budget, no dataset: balanced on a reference amount of work
    assert verdict.options[0].gpu_id != "h100-sxm-80gb"
    assert verdict.options[0].memory.per_gpu_gib < 24


def test_balanced_takes_the_h100_when_it_is_cheaper_per_job():
    """At $0.80/h the H100 costs 0.80/(989x0.39) = 0.0021 per unit of work, below the 4090's 0.0028, and is
    ~4.8x faster: faster per dollar, so balanced prefers it."""
    prices = {"h100-sxm-80gb": "0.80", "rtx-4090": "0.23", "l40s": "0.43", "rtx-a2000-6gb": "0.05",
              "a100-sxm-40gb": "0.70", "rtx-3090": "0.22"}
    assert run(Workload(**QLORA_13B), prices).options[0].gpu_id == "h100-sxm-80gb"


def test_cheapest_serving_ranks_by_dollars_per_million_output_tokens():
    """Inference is serving: cheapest = the whole plan's $/hour / (tokens/s x 3600) x 1e6, lowest first."""
    verdict = run(Workload(params_b=8.0, method="inference", objective="cheapest"))
    costs = [o.usd_per_million_output_tokens for o in verdict.options]
    assert None not in costs and costs == sorted(costs)
    for option in verdict.options:
        per_hour = float(option.offer.usd_per_hour) * -(-option.count // option.offer.gpu_count)
        expected = per_hour / (option.throughput.output_tokens_per_s * 3600) * 1e6
        assert option.usd_per_million_output_tokens == pytest.approx(expected, rel=1e-3)


def test_pinned_count_and_gpu_get_a_direct_no_with_the_sharded_need_and_plans_that_fit():
    """70B full fine-tune, mixed AdamW: > 1.1 TB of state (guides/003_caba77b3a62453c8.txt:26); on 8 GPUs
    FSDP leaves > 1.1e12 / 8 B = 128 GiB per GPU before activations: 8x A100 40GB cannot hold it."""
    verdict = run(Workload(model=model("meta-llama/Llama-3.1-70B"), method="full", gpus=8, gpu="a100-sxm-40gb",
                           recipe="mixed_adamw", optimizer="adamw", offload=False))  # the user's own recipe
    answer = pinned(verdict)
    assert answer.outcome == "fail" and answer.numbers["gpus"] == 8
    assert 128 < float(answer.numbers["needed_gib"]) < 200  # sharded, with checkpointing allowed (not 250+)
    assert verdict.options, "plans that do fit must follow the 'no'"
    for option in verdict.options:
        assert option.memory.per_gpu_gib <= GPUS[option.gpu_id].vram_gb * 0.95
        assert option.count > 8 and GPUS[option.gpu_id].multinode_fabric  # 80 GB or less: more than a node


def test_multinode_plans_are_found_for_fabric_gpus():
    """On 80 GB cards 70B full with mixed AdamW needs > 1.1 TB / 80 GB = 14+ GPUs: beyond one node."""
    verdict = run(Workload(model=model("meta-llama/Llama-3.1-70B"), method="full", recipe="mixed_adamw",
                           optimizer="adamw", offload=False),
                  pool=("h100-sxm-80gb", "rtx-4090"), prices={"h100-sxm-80gb": "2.00", "rtx-4090": "0.30"})
    top = verdict.options[0]
    assert top.gpu_id == "h100-sxm-80gb" and top.count in (16, 32) and top.nodes >= 2
    assert verdict.rejected[0].gpu_id == "rtx-4090"  # consumer cards are never offered beyond one node


def test_pinned_yes_puts_the_pinned_plan_first():
    verdict = run(Workload(**QLORA_13B, gpu="rtx-3090", gpus=1))
    assert pinned(verdict).outcome == "pass" and verdict.options[0].gpu_id == "rtx-3090"


def test_small_cards_are_not_notable_rejects_when_the_job_fits_one_card():
    """A 6 GB RTX A2000 for a ~13 GiB job is noise, not a near miss."""
    verdict = run(Workload(**QLORA_13B))
    assert all(r.gpu_id != "rtx-a2000-6gb" for r in verdict.rejected)


def test_popular_cards_that_need_more_gpus_are_shown_with_needs_and_has():
    """13B LoRA in bf16: 13e9 x 2 B = 24.2 GiB of weights alone > a 24 GB card (batch given, so no
    micro-batch switch): the 4090 needs two cards while the best plan uses one."""
    verdict = run(Workload(params_b=13.0, method="lora", seq_len=1024, batch_size=2))
    assert verdict.options[0].count == 1
    note = next(r for r in verdict.rejected if r.gpu_id == "rtx-4090")
    assert note.code == "fit.needs_more_gpus" and note.numbers["has_gib"] == 24 and note.numbers["gpus"] == 2
    assert float(note.numbers["needed_gib"]) > 24


def test_assumptions_describe_the_chosen_plan():
    """When the plan had to turn checkpointing on, the assumptions must not say it is off."""
    verdict = run(Workload(model=model("meta-llama/Llama-2-7b-hf"), method="lora", seq_len=32768, batch_size=4,
                           gpu="rtx-4090", gpus=1))
    top = verdict.options[0]
    # 7B LoRA at 32768 x 4: recomputing one block holds 131,072 tokens x (6h + 2kv + 4f = 76,800) x 2 B = 20 GB
    # beside 12.6 GiB of bf16 weights: more than one 24 GB card even with every saver on.
    assert pinned(verdict).outcome == "fail"
    assert "checkpointing" in top.switches  # the best plan overall leads; the 4090's own plan is still listed
    assert any(o.gpu_id == "rtx-4090" for o in verdict.options)
    assert verdict.assumptions["grad_checkpointing"] == ("offloaded" if "activation_offload" in top.switches else "full")


def test_ranking_is_deterministic_on_the_catalog_offers():
    workload = Workload(**QLORA_13B)
    gpus = GPUS
    offers = offers_for(gpus)
    first = evaluate(workload, gpus=gpus, offers_by_gpu=offers, providers=providers(), tables=tables())
    again = evaluate(workload, gpus=gpus, offers_by_gpu=offers, providers=providers(), tables=tables())
    assert first == again
