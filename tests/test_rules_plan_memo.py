"""A search's plan terms (rules.plans.search.plan_hours with a memo) give the hours job_hours gives, for each plan.

The memo is keyed by plan object and tokens: plans with the same count and switches but other host state
(pageable optimizer state paged out on a smaller card) or another dataset must not share terms.
"""

from __future__ import annotations

import json

import pytest
from test_rules_support import CASES, catalog_gpus, model, tables

from rules.memory.calibration import shape_from_config
from rules.memory.training import trainable_params
from rules.plans.fit import Candidate, CandidateSpace
from rules.plans.search import PlanMemo, plan_hours
from rules.speed.training import job_hours
from rules.types import Workload

GPUS = catalog_gpus()
LLAMA_8B_SPEC = model("meta-llama/Llama-3.1-8B")
MODELS = json.loads((CASES / "memory_case_models.json").read_text())
LLAMA_8B = shape_from_config("meta-llama/Llama-3.1-8B", MODELS["meta-llama/Llama-3.1-8B"])
WORK = Workload(method="full", model=LLAMA_8B_SPEC, tokens=1e9)


def direct(tokens: float, candidate: Candidate, gpu: str) -> float:
    """job_hours as search called it before plans shared their terms."""
    estimate = candidate.estimate
    return job_hours(tokens, LLAMA_8B.active_params_b, GPUS[gpu], candidate.count, candidate.setup, tables(),
                     WORK.precision, switches=candidate.switches,
                     host_gib=estimate.cpu_offload_gib + estimate.nvme_offload_gib,
                     trainable_b=trainable_params(LLAMA_8B, candidate.setup) / 1e9, shape=LLAMA_8B)


def plans() -> list[Candidate]:
    space = CandidateSpace(WORK, LLAMA_8B, "full", 0.1)
    out = []
    for count in (1, 2, 16):
        out += [space.candidate(count, switches) for switches in space.ladders(count) + space.offload_steps(count)]
    paged = space.candidate(1, space.offload_steps(1)[0])
    assert "paged_optimizer" in paged.switches and paged.parts is not None and paged.parts.paged > 0
    # The same plan on two smaller cards: same count and switches, different state paged out to the host.
    out += [space.on_device(paged, 16.0), space.on_device(paged, 24.0)]
    return out


def test_shared_terms_give_each_plan_its_own_hours():
    memo: PlanMemo = {}
    for gpu in ("h100-sxm-80gb", "rtx-4090", "a100-sxm-80gb", "l4"):
        hours_by_plan: dict[tuple[float, int, tuple[str, ...]], set[float]] = {}
        for candidate in plans():
            for tokens in (1e9, 3e7):
                hours = plan_hours(tokens, candidate, GPUS[gpu], LLAMA_8B, tables(), WORK, memo)
                assert hours == direct(tokens, candidate, gpu)
                hours_by_plan.setdefault((tokens, candidate.count, candidate.switches), set()).add(hours)
        # Two plans share count and switches but not hours: a memo keyed by them would have failed above.
        assert max(len(found) for found in hours_by_plan.values()) >= 2


def test_a_memo_filled_by_another_plan_is_not_reused():
    space = CandidateSpace(WORK, LLAMA_8B, "full", 0.1)
    paged = space.candidate(1, space.offload_steps(1)[0])
    small, larger = space.on_device(paged, 16.0), space.on_device(paged, 24.0)
    memo: PlanMemo = {}
    first = plan_hours(1e9, small, GPUS["l4"], LLAMA_8B, tables(), WORK, memo)
    second = plan_hours(1e9, larger, GPUS["l4"], LLAMA_8B, tables(), WORK, memo)
    assert first == direct(1e9, small, "l4") and second == direct(1e9, larger, "l4")
    assert first > second  # more state crosses PCIe every step on the smaller card
    assert plan_hours(3e7, small, GPUS["l4"], LLAMA_8B, tables(), WORK, memo) == pytest.approx(first * 3e7 / 1e9)
