"""Constraints rank (issue 17 item 5): a deadline or a budget removes and names the plans that break it.

Prices are set by hand (as in test_rules_ranking.py). The deadlines and budgets are placed between two
plans' hours or costs, so the expected pick follows from the ordering, not from a copied number.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

from test_rules_support import catalog_gpus, model, providers, tables

from rules.engine import evaluate
from rules.plans.constraints import gpus_needed
from rules.types import Offer, Provider, Workload

GPUS = catalog_gpus()
STAMP = datetime(2026, 1, 1, tzinfo=UTC)
POOL = ("h100-sxm-80gb", "rtx-4090", "a100-sxm-80gb")
PRICES = {"h100-sxm-80gb": "2.50", "rtx-4090": "0.30", "a100-sxm-80gb": "1.40"}
JOB = Workload(model=model("meta-llama/Llama-3.1-8B"), method="qlora", seq_len=2048, tokens=3e8)


def offer(gpu_id: str, usd: str, count: int = 1) -> Offer:
    price = Decimal(usd)
    return Offer(gpu_id, "secs", f"{gpu_id}-{count}", count, "us", "on-demand", price * count, price, 1,
                 "NVLink", STAMP, "test")


def run(workload: Workload):
    gpus = {g: GPUS[g] for g in POOL}
    offers = {g: tuple(offer(g, PRICES[g], n) for n in (1, 2, 4, 8)) for g in POOL}
    return evaluate(workload, gpus=gpus, offers_by_gpu=offers, providers=providers(), tables=tables())


def finding(verdict, code):
    return next(f for f in verdict.findings if f.code == code)


def hours_of(verdict, gpu_id):
    return next(o.hours for o in verdict.options if o.gpu_id == gpu_id)


def test_a_deadline_changes_the_pick_and_names_what_it_removed():
    """Cheapest per job is one $0.30 RTX 4090 (165 TFLOPS at a third of an H100's price per FLOP). A deadline
    shorter than what even eight 4090s take (PCIe-only cards, one node at most) removes the 4090, by name, and
    the cheapest plan that meets the deadline wins."""
    cheapest = run(replace(JOB, objective="cheapest"))
    assert cheapest.options[0].gpu_id == "rtx-4090" and cheapest.options[0].count == 1
    eight = run(replace(JOB, objective="cheapest", gpus=8, gpu="rtx-4090"))
    slowest_ok = hours_of(eight, "rtx-4090")
    deadline = slowest_ok * 0.8
    verdict = run(replace(JOB, deadline_hours=deadline))
    top = verdict.options[0]
    assert top.gpu_id != "rtx-4090" and top.hours <= deadline
    assert all(o.hours <= deadline for o in verdict.options)
    miss = next(r for r in verdict.rejected if r.gpu_id == "rtx-4090")
    assert miss.code == "deadline.miss" and miss.numbers["hours"] > deadline == miss.numbers["deadline_hours"]
    decided = finding(verdict, "rank.decided_by")
    assert decided.numbers["constraint"] == "deadline" and decided.numbers["unconstrained_gpu"] == "rtx-4090"
    assert decided.numbers["gpu"] == top.gpu_id and decided.numbers["deadline_hours"] == deadline


def test_a_looser_deadline_grows_the_cheapest_plan():
    """A deadline half of one 4090's hours: two or more 4090s meet it and stay the cheapest per job; the card
    says the plan grew (`deadline.scaled`)."""
    single = hours_of(run(replace(JOB, objective="cheapest")), "rtx-4090")
    verdict = run(replace(JOB, deadline_hours=single / 2))
    top = verdict.options[0]
    assert top.gpu_id == "rtx-4090" and top.count >= 2 and top.hours <= single / 2
    grew = finding(verdict, "deadline.scaled")
    assert grew.numbers["gpus_from"] == 1 and grew.numbers["gpus"] == top.count


def test_a_tight_deadline_adds_gpus_of_the_same_type():
    """A deadline a third of one H100's hours: sharded over an NVLink node, hours fall about as 1/GPUs, so
    the H100 plan grows to 4 or more cards rather than being dropped."""
    one = run(replace(JOB, objective="fastest", gpus=1))
    single = hours_of(one, "h100-sxm-80gb")
    verdict = run(replace(JOB, deadline_hours=single / 3))
    h100 = next(o for o in verdict.options if o.gpu_id == "h100-sxm-80gb")
    assert h100.count >= 4 and h100.hours <= single / 3


def test_a_deadline_nobody_meets_keeps_the_plans_and_says_so():
    verdict = run(replace(JOB, deadline_hours=1e-4))
    assert verdict.options
    none = finding(verdict, "deadline.none_meets")
    assert none.outcome == "fail" and none.numbers["best_hours"] > 1e-4


def test_a_deadline_nobody_meets_shows_the_nearest_plans_and_how_many_cards_it_would_take():
    """70B pretraining on 15T tokens in 30 days: 6 x 70e9 x 15e12 = 6.3e24 FLOPs, at most ~4e14 FLOP/s per H100 at
    ~40 % of its 989 TFLOPS: ~4.4M H100-hours (Meta's model card: 6.4M for Llama 3 70B), some 6,000 H100s for
    720 h. Nothing within 64 cards meets it: each card's plan grows to its soonest finish (64 H100s, not the
    fewest that fit), the nearest miss ranks first, and the finding says how many cards it would take at
    best: the plan's GPU-hours / the deadline."""
    job = Workload(params_b=70.0, method="pretrain", tokens=15e12, deadline_hours=720.0)
    cluster = {**providers(), "secs": Provider("secs", "Per-second cloud", "neocloud", 1, "NVLink, InfiniBand", "test")}
    gpus = {g: GPUS[g] for g in POOL}
    offers = {g: tuple(offer(g, PRICES[g], n) for n in (1, 2, 4, 8)) for g in POOL}
    verdict = evaluate(job, gpus=gpus, offers_by_gpu=offers, providers=cluster, tables=tables())
    hours = [o.hours for o in verdict.options]
    assert hours == sorted(hours)
    h100 = next(o for o in verdict.options if o.gpu_id == "h100-sxm-80gb")
    assert h100.count == 64
    assert 4.0e6 <= h100.count * h100.hours <= 8.0e6  # GPU-hours, against the 6.4M published
    none = finding(verdict, "deadline.none_meets")
    assert none.numbers["gpu"] == verdict.options[0].gpu_id and none.numbers["gpus"] == 64
    assert none.numbers["gpus_needed"] == math.ceil(64 * none.numbers["best_hours"] / 720.0)
    assert none.numbers["gpus_needed"] > 5000
    assert not any(f.code == "deadline.scaled" for f in verdict.findings)  # grown, but not to meet it


def test_gpus_needed_is_the_plans_gpu_hours_over_the_deadline():
    assert gpus_needed(8, 100.0, 50.0) == 16
    assert gpus_needed(8, 100.0, 30.0) == 27  # 26.67 rounded up
    assert gpus_needed(8, 10.0, 50.0) == 8  # never fewer than the plan has


def test_a_budget_removes_what_costs_more():
    """Costs per job follow $/GPU-h / throughput; a budget between the cheapest and the dearest plan removes
    the dearer ones and names them."""
    unconstrained = run(replace(JOB, objective="cheapest"))
    costs = sorted(float(o.cost_usd) for o in unconstrained.options)
    budget = Decimal(str(round((costs[0] + costs[1]) / 2, 2)))
    verdict = run(replace(JOB, budget_usd=budget))
    assert all(o.cost_usd is not None and o.cost_usd <= budget for o in verdict.options)
    over = [r for r in verdict.rejected if r.code == "budget.over"]
    assert over and all(r.numbers["cost_usd"] > float(budget) for r in over)


def test_objectives_are_honoured_within_the_constraint():
    fastest = run(replace(JOB, objective="fastest"))
    hours = [o.hours for o in fastest.options]
    assert hours == sorted(hours)
    simplest = run(replace(JOB, objective="simplest"))
    assert [o.count for o in simplest.options] == sorted(o.count for o in simplest.options)
    decided = finding(fastest, "rank.decided_by")
    assert decided.numbers["constraint"] == "objective" and decided.numbers["objective"] == "fastest"


def test_fastest_grows_a_plan_to_more_cards_of_its_type():
    """'Fastest' is not the fewest cards that fit: sharded over an NVLink node the hours fall about as 1/GPUs, so
    each quick plan grows (`speed.scaled`), here to a whole node, and at least at half the parallel efficiency
    of its one-card plan (8 cards: at least 4x faster)."""
    single = run(replace(JOB, objective="fastest", gpus=1))
    verdict = run(replace(JOB, objective="fastest"))
    top = verdict.options[0]
    assert top.count > 1 and top.hours < hours_of(single, top.gpu_id)
    for grew in (f for f in verdict.findings if f.code == "speed.scaled"):
        ratio = grew.numbers["gpus"] / grew.numbers["gpus_from"]
        assert grew.numbers["hours_from"] / grew.numbers["hours"] >= 0.5 * ratio
    assert any(f.code == "speed.scaled" and f.numbers["gpu"] == top.gpu_id for f in verdict.findings)


def test_fastest_stays_in_one_node_for_a_job_a_node_finishes_within_a_day():
    verdict = run(replace(JOB, objective="fastest"))
    assert verdict.options[0].hours < 24 and all(o.count <= 8 for o in verdict.options)


def test_cheapest_and_balanced_keep_the_fewest_cards():
    for objective in ("cheapest", "balanced"):
        verdict = run(replace(JOB, objective=objective))
        assert not any(f.code == "speed.scaled" for f in verdict.findings)


def test_a_pick_that_would_run_for_months_says_so_unless_a_deadline_was_given():
    """7B pretraining on 1e12 tokens is 6 x 7e9 x 1e12 = 4.2e22 FLOPs: even an H100 at its 989 TFLOPS dense BF16
    peak would take 4.2e22 / 9.89e14 / 3600 = 11,800 h alone, so the cheapest plan in this three-GPU pool runs
    far beyond three months (2,160 h): the card says so. With a deadline it is that constraint's to say."""
    job = Workload(params_b=7.0, method="pretrain", tokens=1e12, objective="cheapest", gpus=1)
    verdict = run(job)  # one card, as the user said: their plan, flagged
    long = finding(verdict, "time.long")
    assert long.numbers["hours"] > 2160 and long.numbers["gpu"] == verdict.options[0].gpu_id
    assert not any(f.code == "time.long" for f in run(replace(job, deadline_hours=720.0)).findings)
    assert not any(f.code == "time.long" for f in run(JOB).findings)  # a fine-tune of hours


def test_with_no_deadline_a_plan_of_months_is_replanned_to_finish_within_three_months():
    """The same job with no count: the cheapest plan runs past 2,160 h, and 8 H100s can do it in about
    11,800 / 8 = 1,475 h at peak (more at a real MFU, still within three months in this pool): the answer is
    planned to finish within 2,160 h and says which plan it replaced and why (`deadline.assumed`)."""
    verdict = run(Workload(params_b=7.0, method="pretrain", tokens=1e12, objective="cheapest"))
    note = finding(verdict, "deadline.assumed")
    assert note.numbers["deadline_hours"] == 2160 and note.numbers["from_wall_hours"] > 2160
    assert verdict.options[0].hours is not None and verdict.options[0].hours <= 2160
    assert not any(f.code == "time.long" for f in verdict.findings)
    assert "deadline_hours" in verdict.defaulted
    # the deadline is assumed, not the user's: no "your deadline" wording (a scaled plan says it as such)
    assert not any(f.code == "deadline.scaled" for f in verdict.findings)
    assert not any(f.code == "rank.decided_by" and f.numbers.get("constraint") == "deadline" for f in verdict.findings)
