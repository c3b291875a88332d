"""Plans priced from offers that can provide them, on the bundled catalog and offers (DESIGN §2 Prices, §3).

The 70B question on 32 GPUs (a count that needs four 8-GPU nodes; with the memory savers of issue 17 the
same job also fits one node of 8, so the count is pinned to test cluster pricing). In the bundled offers the
8x A100 40GB on-demand instances are Vast and Prime Intellect (marketplaces), Lambda and GCP (no cluster
fabric named in providers.csv) and AWS p4d.24xlarge (8x A100 40GB with NVSwitch and EFA,
https://aws.amazon.com/ec2/instance-types/p4/): only AWS can rent that cluster.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.answer.pipeline import answer
from bot.parse import ask_to_workload, parse
from rules.market.offers import GPUS_PER_NODE, has_fabric
from rules.types import Workload

NOW = datetime(2025, 6, 3, 9, 0, tzinfo=UTC)
QUESTION_70B = "will llama 3.1 70b full fine-tune fit on 32x A100 40GB?"


def verdict_for(question: str, snapshot: Any):  # type: ignore[no-untyped-def]
    from bot.answer.actions import workload_from_state
    from bot.answer.advice import evaluate

    reply = answer(question, snapshot=snapshot, now=NOW)
    return reply, evaluate(workload_from_state(reply.state["w"], snapshot.models), snapshot)


def test_70b_best_pick_is_not_a_marketplace_and_its_instance_holds_the_plan(snapshot: Any) -> None:
    reply, verdict = verdict_for(QUESTION_70B, snapshot)
    best = verdict.options[0]
    assert best.offer is not None
    assert snapshot.providers[best.offer.provider_id].kind != "marketplace"
    if best.count <= GPUS_PER_NODE:
        assert best.offer.gpu_count >= best.count
    else:
        assert best.offer.gpu_count >= GPUS_PER_NODE and has_fabric(snapshot.providers[best.offer.provider_id])
    lines = reply.terminal().splitlines()
    assert lines[3].startswith("Yes: it fits on 32× A100 SXM 40GB")  # the direct answer stays first
    assert "Vast.ai" not in lines[4]


def test_70b_pinned_gpu_plan_is_listed_and_priced_from_aws_8_gpu_instances(snapshot: Any) -> None:
    _, verdict = verdict_for(QUESTION_70B, snapshot)
    own = next(o for o in verdict.options if o.gpu_id == "a100-sxm-40gb")
    assert own.count > GPUS_PER_NODE and own.memory.per_gpu_gib <= 40 * 0.95
    assert own.offer is not None
    assert (own.offer.provider_id, own.offer.instance_type, own.offer.gpu_count) == ("aws", "p4d.24xlarge", 8)
    cluster = next(f for f in own.findings if f.code == "price.cluster")
    assert cluster.numbers["instances"] == own.count // 8


@pytest.mark.parametrize("workload", [
    Workload(params_b=70.0, method="full"),
    Workload(params_b=70.0, method="lora"),
    Workload(params_b=13.0, method="qlora", objective="cheapest"),
    Workload(params_b=405.0, method="qlora"),
    Workload(params_b=70.0, method="inference", objective="cheapest"),
])
def test_no_plan_is_priced_from_an_instance_that_cannot_provide_it(snapshot: Any, workload: Workload) -> None:
    from bot.answer.advice import evaluate

    for option in evaluate(workload, snapshot).options:
        if option.offer is None:
            assert next(f for f in option.findings if f.code == "price.none").numbers["reason"]
        elif option.count <= GPUS_PER_NODE:
            assert option.offer.gpu_count >= option.count
        else:
            provider = snapshot.providers[option.offer.provider_id]
            assert provider.kind != "marketplace" and option.offer.gpu_count >= GPUS_PER_NODE
            assert snapshot.gpus[option.gpu_id].segment != "consumer"


@pytest.mark.parametrize(("question", "objective"), [
    ("fine-tune 13B with QLoRA on a budget", "cheapest"),
    ("fine-tune 13B with QLoRA, money is no object", "fastest"),
    ("fine-tune 13B with QLoRA on a moderate budget", None),
])
def test_budget_words_reach_the_engine(snapshot: Any, question: str, objective: str | None) -> None:
    ask = parse(question, snapshot=snapshot)
    assert ask_to_workload(ask, snapshot).objective == objective


def test_a_stated_objective_beats_budget_words(snapshot: Any) -> None:
    ask = parse("fastest way to fine-tune 13B with QLoRA on a budget", snapshot=snapshot)
    assert ask.objective == "fastest"
    assert ask_to_workload(ask, snapshot).objective == "fastest"
