"""One pass of the fit search over a pool of GPUs: each GPU's smallest fitting plan, priced and scored.

`score_option` gives the ranking numbers of a fitting plan (rules.plans.ranking); the exact cost per
job (`with_cost`) and the option's findings (`with_findings`) are added for the shown options only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from rules.market.book import OfferBook
from rules.market.cost import offer_cost
from rules.market.offers import GPUS_PER_NODE, price_findings
from rules.plans.fit import Candidate, CandidateSpace, Fit, FitTable, fit_outcome, rejection_of
from rules.plans.guidance import option_findings
from rules.plans.ranking import Scored
from rules.plans.scoring import PlanMemo as PlanMemo, PlanScore, Scorer, gpu_facts, plan_hours as plan_hours
from rules.speed.training import dataset_tokens
from rules.tables import RuleTables
from rules.types import GpuSpec, Offer, Provider, Workload
from rules.verdict import Finding, Option, Rejection
from rules.workload.setup import Setup
from rules.workload.shapes import Shape


@dataclass(frozen=True, slots=True)
class Search:
    """One pass of the fit search over a pool of GPUs."""

    scored: list[Scored]
    rejections: list[Rejection]
    fits: Mapping[str, Fit]
    scaled: list[Finding] = field(default_factory=list)  # `deadline.scaled`: plans grown to meet a deadline


def score_option(fit: Fit, gpu: GpuSpec, offers: Sequence[Offer], workload: Workload,
                 shape: Shape, tables: RuleTables, providers: Mapping[str, Provider],
                 book: OfferBook | None = None, *, known_hours: float | None = None,
                 memo: PlanMemo | None = None) -> Scored:
    """The option (exact Decimal cost filled in later, for shown options only) and its ranking numbers.

    `known_hours`: the plan's hours for the workload's dataset when the caller has already worked them out."""
    assert fit.candidate is not None
    return Scorer(workload, shape, tables, providers, book, memo).score(fit.candidate, gpu, offers,
                                                                        known_hours=known_hours)


def with_cost(option: Option, workload: Workload, tables: RuleTables) -> Option:
    """The exact per-job cost (billing increments, spot rework) on the option's offer."""
    if option.offer is None or option.hours is None:
        return option
    rework = tables.spot_rework_fraction if workload.spot else 0.0
    return replace(option, cost_usd=offer_cost(option.offer, option.count, option.hours, rework=rework,
                                               minimum_s=tables.billing_minimum_s))


def with_findings(option: Option, gpu: GpuSpec, setup: Setup, workload: Workload, tables: RuleTables,
                  offers: Sequence[Offer], *, extra: tuple[Finding, ...] = ()) -> Option:
    """Findings are computed for the shown options only (keeps evaluate() fast); `extra` follow them."""
    prices = price_findings(option, gpu, offers, spot=bool(workload.spot))
    return replace(option, findings=option_findings(option, gpu, setup, workload, tables) + prices + extra)


# "Fastest" grows the plans of the SPEED_SCALE_TOP quickest GPUs to more cards of their type, while each step
# cuts the job's hours by at least MIN_SPEEDUP (doubling the cards for less is money for nothing; and beyond
# one node the collectives of a sharded plan can make it slower, rules.speed.training.comm_seconds).
SPEED_SCALE_TOP = 8
MIN_SPEEDUP = 1.1
# ... and at no less than half the parallel efficiency of the smallest plan: four times its cards must at least
# halve its hours.
MIN_EFFICIENCY = 0.5
# Beyond one node only for a job that one node of the card would still be at for more than a day: a cluster of
# several nodes is provisioned and wired for long runs, and a job one node finishes within the day gains
# minutes at the price of bringing up a multi-node fabric (an assumption, stated in the finding's numbers).
MULTINODE_MIN_HOURS = 24.0


def search(pool: Mapping[str, GpuSpec], space: CandidateSpace, counts: tuple[int, ...], work: Workload,
           offers_by_gpu: Mapping[str, Sequence[Offer]], shape: Shape, tables: RuleTables,
           providers: Mapping[str, Provider], book: OfferBook | None = None, *, fastest: bool = False) -> Search:
    """`fastest`: the objective is speed and the user named no count (see SPEED_SCALE_TOP)."""
    scored: list[Scored] = []
    rejections: list[Rejection] = []
    scaled: list[Finding] = []
    scorer = Scorer(work, shape, tables, providers, book)
    headroom = tables.headroom_fraction
    deadline = work.deadline_hours
    fits = FitTable(space, counts[0])
    no_offers: tuple[Offer, ...] = ()
    for gpu_id, gpu in pool.items():
        facts = gpu_facts(gpu, tables)
        outcome = fit_outcome(gpu, space, counts, headroom, facts.host_ram_gib)
        candidate = outcome.candidate
        if candidate is None:
            rejection = rejection_of(gpu, outcome, counts, headroom)
            fits.add(gpu_id, None, rejection)
            rejections.append(rejection)
            continue
        fits.add(gpu_id, candidate, None)
        option = scorer.score(candidate, gpu, offers_by_gpu.get(gpu_id, no_offers) if book is None else no_offers,
                              facts=facts)
        if deadline is not None and (option.hours or 0.0) > deadline:  # the unrounded hours, as scaling reads them
            first = option
            option = _scale_for_deadline(option, fits[gpu_id], gpu, space, counts, work,
                                         offers_by_gpu.get(gpu_id, ()), scorer)
            if option is not first and (option.hours or 0.0) <= deadline:
                scaled.append(Finding("deadline.scaled", "info", {
                    "gpu": gpu_id, "gpus_from": first.count, "hours_from": first.job_hours or 0.0,
                    "gpus": option.count, "hours": option.job_hours or 0.0, "deadline_hours": deadline}))
        scored.append(option)
    if fastest and len(counts) > 1:
        _scale_fastest(scored, scaled, pool, fits, space, counts, work, offers_by_gpu, scorer, book is None)
    return Search(scored, rejections, fits, scaled)


def _scale_fastest(scored: list[Scored], scaled: list[Finding], pool: Mapping[str, GpuSpec], fits: FitTable,
                   space: CandidateSpace, counts: tuple[int, ...], work: Workload,
                   offers_by_gpu: Mapping[str, Sequence[Offer]], scorer: Scorer, own_offers: bool) -> None:
    """The quickest plans grown to the card count that finishes soonest (in place), each with `speed.scaled`."""
    # The quickest priced plans first (the answer shows priced plans first), then the unpriced.
    timed = sorted((i for i, s in enumerate(scored) if s.hours is not None),
                   key=lambda i: (scored[i].offer is None, scored[i].hours or 0.0))
    for i in timed[:SPEED_SCALE_TOP]:
        first = scored[i]
        assert isinstance(first, PlanScore)
        gpu = pool[first.gpu_id]
        offers = offers_by_gpu.get(first.gpu_id, ()) if own_offers else ()
        option = _scale_for_speed(first, fits[first.gpu_id], gpu, space, counts, work, offers, scorer)
        if option is not first:
            scored[i] = option
            scaled.append(Finding("speed.scaled", "info", {
                "gpu": first.gpu_id, "gpus_from": first.count, "hours_from": first.job_hours or 0.0,
                "gpus": option.count, "hours": option.job_hours or 0.0}))


def _scale_for_speed(first: PlanScore, fit: Fit, gpu: GpuSpec, space: CandidateSpace, counts: tuple[int, ...],
                     work: Workload, offers: Sequence[Offer], scorer: Scorer) -> PlanScore:
    """More GPUs of the same type: the largest count MIN_SPEEDUP faster than the best so far and at least
    MIN_EFFICIENCY parallel efficiency against the smallest plan (hours x cards within 1 / MIN_EFFICIENCY)."""
    assert fit.candidate is not None and first.hours is not None
    tables = scorer.tables
    host_ram = tables.training.host_ram_gib_per_gpu.get(gpu.segment, float("inf"))
    one_node = gpu.segment == "consumer" or not gpu.multinode_fabric
    best: tuple[float, Candidate] | None = None
    best_hours = first.hours
    for count in (c for c in counts if c > fit.candidate.count and (c <= GPUS_PER_NODE or not one_node)):
        # the outcome alone (memoised per space): a count that does not fit needs no rejection built
        larger = fit_outcome(gpu, space, (count,), tables.headroom_fraction, host_ram)
        if larger.candidate is None:
            continue
        tokens = dataset_tokens(work, larger.candidate.setup)
        if not larger.candidate.setup.timed or tokens is None:
            return first
        if count > GPUS_PER_NODE and best_hours <= MULTINODE_MIN_HOURS:
            break
        hours = plan_hours(tokens, larger.candidate, gpu, scorer.shape, tables, work, scorer.memo)
        if hours <= 0:
            continue
        if best_hours / hours >= MIN_SPEEDUP and first.hours / hours >= MIN_EFFICIENCY * count / fit.candidate.count:
            best, best_hours = (hours, larger.candidate), hours
    if best is None:
        return first
    return scorer.score(best[1], gpu, offers, known_hours=best[0])


def _scale_for_deadline(first: PlanScore, fit: Fit, gpu: GpuSpec, space: CandidateSpace, counts: tuple[int, ...],
                        work: Workload, offers: Sequence[Offer], scorer: Scorer) -> PlanScore:
    """More GPUs of the same type until the job meets the deadline (the smallest such count). When no count meets
    it, the count that finishes soonest, if MIN_SPEEDUP faster than the first plan: the nearest this card comes
    (constraints' `deadline.none_meets` then says how far off it is); else the first plan."""
    assert fit.candidate is not None and work.deadline_hours is not None
    tables = scorer.tables
    host_ram = tables.training.host_ram_gib_per_gpu.get(gpu.segment, float("inf"))
    # Counts beyond one node are never a plan on a card limited to one (the fit search rejects them without one).
    one_node = gpu.segment == "consumer" or not gpu.multinode_fabric
    soonest: tuple[float, Candidate] | None = None
    for count in (c for c in counts if c > fit.candidate.count and (c <= GPUS_PER_NODE or not one_node)):
        # the outcome alone (memoised per space): a count that does not fit needs no rejection built
        larger = fit_outcome(gpu, space, (count,), tables.headroom_fraction, host_ram)
        if larger.candidate is None:
            continue
        hours = _plan_hours_of(larger.candidate, gpu, work, scorer.shape, tables, scorer.memo)
        if hours is None:
            return first  # untimed: the hours alone decide, and there are none
        if round(hours, 3) > work.deadline_hours:
            if hours > 0 and (soonest is None or hours < soonest[0]):
                soonest = (hours, larger.candidate)
            continue  # priced only when it keeps to the deadline, or is the nearest miss
        option = scorer.score(larger.candidate, gpu, offers, known_hours=hours)
        if option.hours is not None and option.hours <= work.deadline_hours:
            return option
    if soonest is not None and first.hours is not None and first.hours / soonest[0] >= MIN_SPEEDUP:
        return scorer.score(soonest[1], gpu, offers, known_hours=soonest[0])
    return first


def _plan_hours_of(candidate: Candidate, gpu: GpuSpec, work: Workload, shape: Shape, tables: RuleTables,
                   memo: PlanMemo) -> float | None:
    """The plan's hours for the workload's dataset, None for an untimed plan or an unknown dataset."""
    tokens = dataset_tokens(work, candidate.setup)
    if not candidate.setup.timed or tokens is None:
        return None
    return plan_hours(tokens, candidate, gpu, shape, tables, work, memo)
