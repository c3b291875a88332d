"""What the search now works out lazily or once gives the values it worked out eagerly, plan by plan.

- A candidate's host figures (`host_gib`, `cpu_offload_gib`) and `fixed_gib` are read from its parts without
  the public estimate: they must equal the estimate's own figures (CPU, NVMe and paged state included).
- A search's scores build their `Option` on first read: it must be the option `score_option` built before,
  and the fields ranking reads from the score must be the option's.
- The offer book returns no pick at once when no offer can provide the plan: the plain scan finds none too.
"""

from __future__ import annotations

import json

import pytest
from test_rules_support import CASES, catalog_gpus, model, offers_for, providers, tables

from rules.engine import training_pool
from rules.market.book import OfferBook, cheapest_in
from rules.market.offers import cheapest
from rules.memory.calibration import shape_from_config
from rules.plans.fit import Candidate, CandidateSpace, counts_for
from rules.plans.search import search
from rules.types import Workload
from rules.verdict import Option

GPUS = catalog_gpus()
LLAMA_8B_SPEC = model("meta-llama/Llama-3.1-8B")
MODELS = json.loads((CASES / "memory_case_models.json").read_text())
LLAMA_8B = shape_from_config("meta-llama/Llama-3.1-8B", MODELS["meta-llama/Llama-3.1-8B"])


def candidates(work: Workload) -> list[Candidate]:
    """Every ladder and offload step at 1, 2 and 16 cards, and a paged plan on two smaller cards."""
    space = CandidateSpace(work, LLAMA_8B, work.method or "full", 0.1)
    out = []
    for count in (1, 2, 16):
        out += [space.candidate(count, switches) for switches in space.ladders(count) + space.offload_steps(count)]
    paged = [c for c in out if "paged_optimizer" in c.switches and c.parts.paged > 0]
    out += [space.on_device(c, gib) for c in paged for gib in (16.0, 24.0)]
    return out


@pytest.mark.parametrize("work", [Workload(method="full", model=LLAMA_8B_SPEC, tokens=1e9),
                                  Workload(method="lora", model=LLAMA_8B_SPEC, tokens=1e9)], ids=["full", "lora"])
def test_host_figures_from_the_parts_are_the_estimates(work):
    seen = set()
    for candidate in candidates(work):
        host, cpu = candidate.host_gib, candidate.cpu_offload_gib  # read before the estimate is made
        estimate = candidate.estimate
        assert host == estimate.cpu_offload_gib + estimate.nvme_offload_gib
        assert cpu == estimate.cpu_offload_gib
        assert candidate.fixed_gib == round(estimate.per_gpu_gib - candidate.parts.paged, 3)
        seen.add((candidate.setup.offload_target if candidate.setup.offload else "", candidate.parts.paged > 0))
    if work.method == "full":  # the cases that differ: CPU and NVMe offload, paged state resident
        assert {("cpu", False), ("nvme", False), ("", True)} <= seen


@pytest.mark.parametrize("work", [Workload(method="lora", model=LLAMA_8B_SPEC, tokens=5e7),
                                  Workload(method="full", model=LLAMA_8B_SPEC, samples=10_000),
                                  Workload(method="full", model=LLAMA_8B_SPEC)], ids=["lora", "full", "no-data"])
def test_a_score_builds_the_option_score_option_built(work):
    pool = training_pool(GPUS)
    offers = offers_for(pool)
    space = CandidateSpace(work, LLAMA_8B, work.method or "lora", 0.0)
    found = search(pool, space, counts_for(work, work.method or "lora"), work, offers, LLAMA_8B, tables(),
                   providers(), OfferBook.build(offers))
    assert len(found.scored) > 20
    dataset = bool(work.tokens or work.samples)
    for score in found.scored:
        candidate = found.fits[score.gpu_id].candidate
        assert candidate is not None
        option = score.option
        assert option is score.option  # built once
        hours = round(score.hours, 3) if dataset and score.hours is not None else None  # else reference hours
        assert option == Option(score.gpu_id, candidate.count, max(1, -(-candidate.count // 8)),
                                candidate.setup.sharding, candidate.switches, candidate.estimate, hours, None,
                                score.offer, ())
        assert (score.gpu_id, score.count, score.nodes, score.switches, score.job_hours, score.offer) == (
            option.gpu_id, option.count, option.nodes, option.switches, option.hours, option.offer)


@pytest.mark.parametrize("count", [1, 8, 16, 64])
@pytest.mark.parametrize("prefer_link", [False, True])
def test_no_capable_offer_is_no_pick(count, prefer_link):
    offers = offers_for({"l4": GPUS["l4"]}, per_gpu=6)
    book = OfferBook.build(offers)
    for gpu_id in ("l4", "h100-sxm-80gb"):  # the second has no offer at all
        rows = offers.get(gpu_id, ())
        for hours in (None, 3.0):
            plain = cheapest(rows, count, hours, spot=False, rework=0.1, providers=providers(),
                             minimum_s=tables().billing_minimum_s, prefer_link=prefer_link)
            picked = cheapest_in(book, gpu_id, count, hours, spot=False, rework=0.1, providers=providers(),
                                 minimum_s=tables().billing_minimum_s, prefer_link=prefer_link)
            assert picked == plain


def test_per_gpu_memo_keeps_a_value_for_the_very_spec_and_tables_it_was_made_from() -> None:
    """Same objects: worked out once. A new spec or tables object under the same id: worked out again.
    Past the limit the memo starts over rather than growing."""
    import dataclasses

    from rules.tables import PerGpu
    from rules.types import GpuSpec

    made: list[tuple[str, int]] = []

    def make(gpu: GpuSpec, tables: object) -> tuple[str, int]:
        made.append((gpu.id, id(tables)))
        return (gpu.id, len(made))

    memo = PerGpu(make, limit=2)
    rules = tables()
    gpus = list(catalog_gpus().values())[:3]
    first = memo(gpus[0], rules)
    assert memo(gpus[0], rules) is first and len(made) == 1
    assert memo(dataclasses.replace(gpus[0]), rules) == (gpus[0].id, 2)  # an equal spec, another object
    assert memo(gpus[0], tables()) == (gpus[0].id, 3)  # another tables object
    memo(gpus[1], rules)
    memo(gpus[2], rules)  # a third id at limit 2: starts over
    assert memo(gpus[1], rules) == (gpus[1].id, 6)
