"""Answer quality of the headline questions through the whole pipeline (bundled catalog and offers)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.answer.pipeline import answer

NOW = datetime(2025, 6, 3, 9, 0, tzinfo=UTC)
BUDGET_QUESTIONS = [
    "fine-tune 13B with QLoRA on a budget",  # the README's first command
    "用QLoRA微调Qwen2.5-14B，预算有限，用什么卡？",
]


@pytest.mark.parametrize("question", BUDGET_QUESTIONS)
def test_on_a_budget_the_best_pick_is_the_cheapest_per_job_and_sized_for_the_job(snapshot: Any,
                                                                               question: str) -> None:
    """13-15B QLoRA needs ~13-24 GiB per GPU: a 24-48 GB card does it; 'on a budget' means cost per job."""
    from bot.answer.actions import workload_from_state
    from bot.answer.advice import evaluate

    reply = answer(question, snapshot=snapshot, now=NOW)
    assert reply.state["w"]["objective"] == "cheapest"
    verdict = evaluate(workload_from_state(reply.state["w"], snapshot.models), snapshot)
    top = verdict.options[0]
    assert snapshot.gpus[top.gpu_id].vram_gb <= 48 and top.count == 1
    costs = [o.cost_usd for o in verdict.options]
    assert None not in costs and costs == sorted(costs)  # cost per job on the stated default dataset
    assert "10,000" in reply.terminal() or "10.000" in reply.terminal()  # the assumed dataset is said


def test_pinned_question_gets_a_direct_no_and_plans_that_fit(snapshot: Any) -> None:
    # 405B full fine-tune on one 24 GB card: 405e9 x 2 B of bf16 weights alone is 754 GiB, and single-GPU
    # offload (ZeRO-Offload) keeps the weights on the card. (70B on 8x A100 40GB now fits with the memory
    # savers the planner turns on: issue 17 item 2; see tests/test_rules_planner.py.)
    reply = answer("will llama 3.1 405b full fine-tune fit on one RTX 4090?", snapshot=snapshot, now=NOW)
    text = reply.terminal()
    assert text.splitlines()[3].startswith("No: 1× GeForce RTX 4090 is not enough")
    assert "Nothing in the catalog fits" not in text
    assert "Top options" in text


def test_no_raw_shape_ids_in_assumptions(snapshot: Any) -> None:
    """A workload without a model (e.g. a what-if state) is evaluated on a typical 8B shape: the card says
    so in words (finding model.missing), never with the internal id 'typical-8b'."""
    from bot.answer.advice import recommendation_reply
    from rules.types import Workload

    reply = recommendation_reply(Workload(method="lora", tokens=1e6), snapshot=snapshot, lang="en", question="",
                                 ignored=(), ask=None)
    text = reply.terminal()
    assert "No model size given, so I assumed 8B" in text
    assert "typical-" not in text
