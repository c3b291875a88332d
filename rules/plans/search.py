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
from rules.plans.fit import Candidate, CandidateSpace, Fit, FitTable, fit_gpu, fit_outcome, rejection_of
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


def search(pool: Mapping[str, GpuSpec], space: CandidateSpace, counts: tuple[int, ...], work: Workload,
           offers_by_gpu: Mapping[str, Sequence[Offer]], shape: Shape, tables: RuleTables,
           providers: Mapping[str, Provider], book: OfferBook | None = None) -> Search:
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
            if option is not first:
                scaled.append(Finding("deadline.scaled", "info", {
                    "gpu": gpu_id, "gpus_from": first.count, "hours_from": first.job_hours or 0.0,
                    "gpus": option.count, "hours": option.job_hours or 0.0, "deadline_hours": deadline}))
        scored.append(option)
    return Search(scored, rejections, fits, scaled)


def _scale_for_deadline(first: PlanScore, fit: Fit, gpu: GpuSpec, space: CandidateSpace, counts: tuple[int, ...],
                        work: Workload, offers: Sequence[Offer], scorer: Scorer) -> PlanScore:
    """More GPUs of the same type until the job meets the deadline (the smallest such count), else the first plan."""
    assert fit.candidate is not None and work.deadline_hours is not None
    tables = scorer.tables
    host_ram = tables.training.host_ram_gib_per_gpu.get(gpu.segment, float("inf"))
    # Counts beyond one node are never a plan on a card limited to one (fit_gpu rejects them without a search).
    one_node = gpu.segment == "consumer" or not gpu.multinode_fabric
    for count in (c for c in counts if c > fit.candidate.count and (c <= GPUS_PER_NODE or not one_node)):
        larger = fit_gpu(gpu, space, (count,), tables.headroom_fraction, host_ram_gib=host_ram, with_need=False)
        if larger.candidate is None:
            continue
        hours = _hours_within_deadline(larger.candidate, gpu, work, scorer.shape, tables, scorer.memo)
        if hours is None:
            continue  # priced only when it keeps to the deadline: the hours alone decide
        option = scorer.score(larger.candidate, gpu, offers, known_hours=hours)
        if option.hours is not None and option.hours <= work.deadline_hours:
            return option
    return first


def _hours_within_deadline(candidate: Candidate, gpu: GpuSpec, work: Workload, shape: Shape,
                           tables: RuleTables, memo: PlanMemo) -> float | None:
    """The plan's hours when `score_option` would find them within the deadline (rounded as it rounds), else None."""
    assert work.deadline_hours is not None
    tokens = dataset_tokens(work, candidate.setup)
    if not candidate.setup.timed or tokens is None:
        return None
    hours = plan_hours(tokens, candidate, gpu, shape, tables, work, memo)
    return hours if round(hours, 3) <= work.deadline_hours else None
