"""One pass of the fit search over a pool of GPUs: each GPU's smallest fitting plan, priced and scored.

`score_option` gives the ranking numbers of a fitting plan (rules.plans.ranking); the exact cost per
job (`with_cost`) and the option's findings (`with_findings`) are added for the shown options only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from rules.market.book import OfferBook, cheapest_in
from rules.market.cost import offer_cost
from rules.market.offers import GPUS_PER_NODE, SHARDED, cheapest, price_findings
from rules.memory.training import trainable_params
from rules.plans.fit import Candidate, CandidateSpace, Fit, fit_gpu
from rules.plans.guidance import option_findings
from rules.plans.ranking import REFERENCE_TOKENS, Scored, capacity_of, plan_usd_per_hour
from rules.speed.training import PlanTerms, dataset_tokens, gpu_rates, hours_on, plan_terms
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
    fits: dict[str, Fit]
    scaled: list[Finding] = field(default_factory=list)  # `deadline.scaled`: plans grown to meet a deadline


def score_option(fit: Fit, gpu: GpuSpec, offers: Sequence[Offer], workload: Workload,
                 shape: Shape, tables: RuleTables, providers: Mapping[str, Provider],
                 book: OfferBook | None = None, *, known_hours: float | None = None,
                 memo: PlanMemo | None = None) -> Scored:
    """The option (exact Decimal cost filled in later, for shown options only) and its ranking numbers.

    `known_hours`: the plan's hours for the workload's dataset when the caller has already worked them out."""
    candidate = fit.candidate
    assert candidate is not None
    setup = candidate.setup
    tokens = dataset_tokens(workload, setup)
    timed = setup.timed
    hours = ref_hours = None
    if timed and tokens is not None:
        hours = known_hours
        if hours is None:
            hours = plan_hours(tokens, candidate, gpu, shape, tables, workload, memo)
    if timed:
        ref_hours = hours if hours is not None else plan_hours(REFERENCE_TOKENS, candidate, gpu, shape, tables,
                                                                workload, memo)
    rework = tables.spot_rework_fraction
    prefer_link = candidate.count > 1 and setup.sharding in SHARDED and gpu.has_nvlink_class_link
    if book is not None:  # the same pick from the snapshot's index (rules.market.book)
        pick = cheapest_in(book, gpu.id, candidate.count, hours, spot=bool(workload.spot), rework=rework,
                           providers=providers, minimum_s=tables.billing_minimum_s, prefer_link=prefer_link)
    else:
        pick = cheapest(offers, candidate.count, hours, spot=bool(workload.spot), rework=rework,
                        providers=providers, minimum_s=tables.billing_minimum_s, prefer_link=prefer_link)
    offer, cost = pick.offer, pick.usd
    per_hour = plan_usd_per_hour(offer, candidate.count)
    work_usd = cost
    if work_usd is None and per_hour is not None and ref_hours is not None:
        work_usd = per_hour * ref_hours * (1.0 + (rework if workload.spot else 0.0))
    nodes = max(1, -(-candidate.count // 8))
    option = Option(gpu.id, candidate.count, nodes, setup.sharding, candidate.switches, candidate.estimate,
                    round(hours, 3) if hours is not None else None, None, offer, ())
    pcie_many = candidate.count > 2 and not gpu.has_nvlink_class_link
    return Scored(option, work_usd, per_hour, ref_hours, capacity_of(gpu, candidate.count, setup.method), pcie_many)


# A search's plan terms by plan object and tokens (one search, one workload, shape and tables): the GPUs
# sharing a fit share its candidate object. The candidate is kept with its terms, so an id is never reused.
PlanMemo = dict[tuple[int, float], tuple[Candidate, PlanTerms]]


def plan_hours(tokens: float, candidate: Candidate, gpu: GpuSpec, shape: Shape, tables: RuleTables,
               workload: Workload, memo: PlanMemo | None = None) -> float:
    """Hours of one plan: its setup, switches and the state it keeps on the host.

    `memo`: plan terms already worked out in this search (for this workload, shape and tables only)."""
    key = (id(candidate), tokens)
    found = memo.get(key) if memo is not None else None
    if found is not None and found[0] is candidate:
        terms = found[1]
    else:
        setup = candidate.setup
        terms = plan_terms(tokens, shape.active_params_b, candidate.count, setup, tables, workload.precision,
                           switches=candidate.switches,
                           host_gib=candidate.estimate.cpu_offload_gib + candidate.estimate.nvme_offload_gib,
                           trainable_b=trainable_params(shape, setup) / 1e9, shape=shape)
        if memo is not None:
            memo[key] = (candidate, terms)
    return hours_on(terms, gpu_rates(gpu, tables))


def with_cost(option: Option, workload: Workload, tables: RuleTables) -> Option:
    """The exact per-job cost (billing increments, spot rework) on the option's offer."""
    if option.offer is None or option.hours is None:
        return option
    rework = tables.spot_rework_fraction if workload.spot else 0.0
    return replace(option, cost_usd=offer_cost(option.offer, option.count, option.hours, rework=rework,
                                               minimum_s=tables.billing_minimum_s))


def with_findings(option: Option, gpu: GpuSpec, setup: Setup, workload: Workload, tables: RuleTables,
                  offers: Sequence[Offer]) -> Option:
    """Findings are computed for the shown options only (keeps evaluate() fast)."""
    prices = price_findings(option, gpu, offers, spot=bool(workload.spot))
    return replace(option, findings=option_findings(option, gpu, setup, workload, tables) + prices)


def search(pool: Mapping[str, GpuSpec], space: CandidateSpace, counts: tuple[int, ...], work: Workload,
           offers_by_gpu: Mapping[str, Sequence[Offer]], shape: Shape, tables: RuleTables,
           providers: Mapping[str, Provider], book: OfferBook | None = None) -> Search:
    scored: list[Scored] = []
    rejections: list[Rejection] = []
    fits: dict[str, Fit] = {}
    scaled: list[Finding] = []
    memo: PlanMemo = {}
    for gpu_id, gpu in pool.items():
        fit = fit_gpu(gpu, space, counts, tables.headroom_fraction,
                      host_ram_gib=tables.training.host_ram_gib_per_gpu.get(gpu.segment, float("inf")))
        fits[gpu_id] = fit
        if fit.rejection is not None:
            rejections.append(fit.rejection)
        else:
            option = score_option(fit, gpu, offers_by_gpu.get(gpu_id, ()), work, shape, tables, providers, book,
                                  memo=memo)
            if work.deadline_hours is not None and (option.hours or 0.0) > work.deadline_hours:
                first = option
                option = _scale_for_deadline(option, fit, gpu, space, counts, work, offers_by_gpu.get(gpu_id, ()),
                                             shape, tables, providers, book, memo)
                if option is not first:
                    scaled.append(Finding("deadline.scaled", "info", {
                        "gpu": gpu_id, "gpus_from": first.option.count, "hours_from": first.option.hours or 0.0,
                        "gpus": option.option.count, "hours": option.option.hours or 0.0,
                        "deadline_hours": work.deadline_hours}))
            scored.append(option)
    return Search(scored, rejections, fits, scaled)


def _scale_for_deadline(first: Scored, fit: Fit, gpu: GpuSpec, space: CandidateSpace, counts: tuple[int, ...],
                        work: Workload, offers: Sequence[Offer], shape: Shape, tables: RuleTables,
                        providers: Mapping[str, Provider], book: OfferBook | None, memo: PlanMemo) -> Scored:
    """More GPUs of the same type until the job meets the deadline (the smallest such count), else the first plan."""
    assert fit.candidate is not None and work.deadline_hours is not None
    host_ram = tables.training.host_ram_gib_per_gpu.get(gpu.segment, float("inf"))
    # Counts beyond one node are never a plan on a card limited to one (fit_gpu rejects them without a search).
    one_node = gpu.segment == "consumer" or not gpu.multinode_fabric
    for count in (c for c in counts if c > fit.candidate.count and (c <= GPUS_PER_NODE or not one_node)):
        larger = fit_gpu(gpu, space, (count,), tables.headroom_fraction, host_ram_gib=host_ram, with_need=False)
        if larger.candidate is None:
            continue
        hours = _hours_within_deadline(larger.candidate, gpu, work, shape, tables, memo)
        if hours is None:
            continue  # priced only when it keeps to the deadline: the hours alone decide
        option = score_option(larger, gpu, offers, work, shape, tables, providers, book, known_hours=hours,
                              memo=memo)
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
