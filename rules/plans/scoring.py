"""Scoring a search's fitting plans: each plan's hours and cheapest offer on each GPU that shares it.

A search scores every fitting GPU (~100 per request) and shows three. What a plan costs to score is the same
on every GPU that shares it (its time terms, sharding, nodes: `PlanCosting`), and what a GPU adds is the same
for every plan (its rates and links: `GpuFacts`); both are worked out once, and the `Option` is built only
for the plans that are read as options (`PlanScore`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rules.market.book import OfferBook, cheapest_in
from rules.market.offers import SHARDED, cheapest
from rules.memory.training import trainable_params
from rules.plans.fit import Candidate
from rules.plans.ranking import REFERENCE_TOKENS, Scored, plan_usd_per_hour
from rules.speed.training import GpuRates, PlanTerms, dataset_tokens, gpu_rates, hours_on, plan_terms
from rules.tables import PerGpu, RuleTables
from rules.types import GpuSpec, Offer, Provider, Workload
from rules.verdict import Option
from rules.workload.shapes import Shape

# A search's plan terms by plan object and tokens (one search, one workload, shape and tables): the GPUs
# sharing a fit share its candidate object. The candidate is kept with its terms, so an id is never reused.
PlanMemo = dict[tuple[int, float], tuple[Candidate, PlanTerms]]


def plan_hours(tokens: float, candidate: Candidate, gpu: GpuSpec, shape: Shape, tables: RuleTables,
               workload: Workload, memo: PlanMemo | None = None) -> float:
    """Hours of one plan: its setup, switches and the state it keeps on the host.

    `memo`: plan terms already worked out in this search (for this workload, shape and tables only)."""
    return hours_on(plan_terms_of(tokens, candidate, shape, tables, workload, memo), gpu_rates(gpu, tables))


def plan_terms_of(tokens: float, candidate: Candidate, shape: Shape, tables: RuleTables, workload: Workload,
                  memo: PlanMemo | None = None) -> PlanTerms:
    """The GPU-independent terms of `plan_hours` (from `memo` when this search has worked them out)."""
    key = (id(candidate), tokens)
    found = memo.get(key) if memo is not None else None
    if found is not None and found[0] is candidate:
        return found[1]
    setup = candidate.setup
    terms = plan_terms(tokens, shape.active_params_b, candidate.count, setup, tables, workload.precision,
                       switches=candidate.switches,
                       host_gib=candidate.host_gib,
                       trainable_b=trainable_params(shape, setup) / 1e9, shape=shape)
    if memo is not None:
        memo[key] = (candidate, terms)
    return terms


class PlanScore(Scored):
    """A search's score of one GPU's plan: the `Option` is built on first read (the shown plans only)."""

    __slots__ = ("_candidate",)

    def __init__(self, gpu_id: str, candidate: Candidate, nodes: int, job_hours: float | None, offer: Offer | None,
                 work_usd: float | None, plan_usd_per_hour: float | None, hours: float | None, capacity: float,
                 pcie_many: bool) -> None:
        self._option = None
        self._candidate = candidate
        self.gpu_id, self.count, self.nodes, self.switches = gpu_id, candidate.count, nodes, candidate.switches
        self.job_hours, self.offer, self.work_usd, self.plan_usd_per_hour = job_hours, offer, work_usd, plan_usd_per_hour
        self.hours, self.capacity, self.pcie_many = hours, capacity, pcie_many

    def _build(self) -> Option:
        candidate = self._candidate
        return Option(self.gpu_id, self.count, self.nodes, candidate.setup.sharding, self.switches,
                      candidate.estimate, self.job_hours, None, self.offer, ())


@dataclass(frozen=True, slots=True)
class PlanCosting:
    """What scoring reads of one plan, the same on every GPU that shares it: the hours' terms (for the dataset,
    else the reference amount of work) and the plan's shape."""

    candidate: Candidate
    terms: PlanTerms | None  # None: no time model for the method
    dataset_known: bool  # the terms are for the workload's dataset (else REFERENCE_TOKENS)
    sharded: bool  # more than one card, sharded: an NVLink-class offer is preferred on cards that have one
    nodes: int
    inference: bool  # capacity is memory bandwidth (decode), else the dense peak (ranking.capacity_of)

    def __init__(self, candidate: Candidate, terms: PlanTerms | None, dataset_known: bool, sharded: bool,
                 nodes: int, inference: bool) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "candidate", candidate)
        object.__setattr__(self, "terms", terms)
        object.__setattr__(self, "dataset_known", dataset_known)
        object.__setattr__(self, "sharded", sharded)
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "inference", inference)


@dataclass(frozen=True, slots=True)
class GpuFacts:
    """What scoring reads of one GPU under the rule tables (worked out once per GpuSpec and tables object)."""

    gpu: GpuSpec
    tables: RuleTables
    rates: GpuRates
    linked: bool  # an NVLink-class scale-up link (GpuSpec.has_nvlink_class_link)
    host_ram_gib: float  # host RAM per GPU for its segment (rule tables), what CPU offload may fill
    dense_tflops: float  # ranking.capacity_of's per-GPU figures: dense peak, else memory bandwidth (inference)
    bandwidth_gbs: float

    def __init__(self, gpu: GpuSpec, tables: RuleTables, rates: GpuRates, linked: bool, host_ram_gib: float,
                 dense_tflops: float, bandwidth_gbs: float) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "gpu", gpu)
        object.__setattr__(self, "tables", tables)
        object.__setattr__(self, "rates", rates)
        object.__setattr__(self, "linked", linked)
        object.__setattr__(self, "host_ram_gib", host_ram_gib)
        object.__setattr__(self, "dense_tflops", dense_tflops)
        object.__setattr__(self, "bandwidth_gbs", bandwidth_gbs)


def _work_out_facts(gpu: GpuSpec, tables: RuleTables) -> GpuFacts:
    return GpuFacts(gpu, tables, gpu_rates(gpu, tables), gpu.has_nvlink_class_link,
                    tables.training.host_ram_gib_per_gpu.get(gpu.segment, float("inf")),
                    gpu.bf16_dense_tflops or gpu.fp16_dense_tflops, gpu.memory_bandwidth_gbs)


gpu_facts: PerGpu[GpuFacts] = PerGpu(_work_out_facts)


class Scorer:
    """`score_option` for one search (one workload, shape, tables, providers and book): the plan-level part is
    worked out once per plan object, then each GPU adds only its own rates and offer."""

    def __init__(self, workload: Workload, shape: Shape, tables: RuleTables, providers: Mapping[str, Provider],
                 book: OfferBook | None, memo: PlanMemo | None = None) -> None:
        self.workload, self.shape, self.tables, self.providers, self.book = workload, shape, tables, providers, book
        self.memo: PlanMemo = memo if memo is not None else {}
        self.spot = bool(workload.spot)
        self.rework = tables.spot_rework_fraction
        self.minimum_s = tables.billing_minimum_s
        self._plans: dict[int, PlanCosting] = {}

    def costing(self, candidate: Candidate) -> PlanCosting:
        found = self._plans.get(id(candidate))
        if found is None or found.candidate is not candidate:
            found = self._plans[id(candidate)] = self._work_out(candidate)
        return found

    def _work_out(self, candidate: Candidate) -> PlanCosting:
        setup = candidate.setup
        tokens = dataset_tokens(self.workload, setup)
        terms = None
        if setup.timed:  # the terms plan_hours prices (the same memo)
            terms = plan_terms_of(REFERENCE_TOKENS if tokens is None else tokens, candidate, self.shape,
                                  self.tables, self.workload, self.memo)
        return PlanCosting(candidate, terms, tokens is not None, candidate.count > 1 and setup.sharding in SHARDED,
                           max(1, -(-candidate.count // 8)), setup.method == "inference")

    def score(self, candidate: Candidate, gpu: GpuSpec, offers: Sequence[Offer], *,
              known_hours: float | None = None, facts: GpuFacts | None = None) -> PlanScore:
        """`score_option` of `candidate` on `gpu` (same arithmetic in the same order); `offers` are read only
        without a book."""
        plan = self.costing(candidate)
        if facts is None:
            facts = gpu_facts(gpu, self.tables)
        hours = ref_hours = None
        if plan.terms is not None:
            if plan.dataset_known:
                hours = known_hours if known_hours is not None else hours_on(plan.terms, facts.rates)
                ref_hours = hours
            else:
                ref_hours = hours_on(plan.terms, facts.rates)
        count = candidate.count
        linked = count > 1 and facts.linked
        if self.book is not None:  # the same pick from the snapshot's index (rules.market.book)
            pick = cheapest_in(self.book, gpu.id, count, hours, spot=self.spot, rework=self.rework,
                               providers=self.providers, minimum_s=self.minimum_s, prefer_link=plan.sharded and linked)
        else:
            pick = cheapest(offers, count, hours, spot=self.spot, rework=self.rework, providers=self.providers,
                            minimum_s=self.minimum_s, prefer_link=plan.sharded and linked)
        offer, work_usd = pick.offer, pick.usd
        per_hour = plan_usd_per_hour(offer, count) if offer is not None else None
        if work_usd is None and per_hour is not None and ref_hours is not None:
            work_usd = per_hour * ref_hours * (1.0 + (self.rework if self.spot else 0.0))
        capacity = count * (facts.bandwidth_gbs if plan.inference else facts.dense_tflops)
        return PlanScore(gpu.id, candidate, plan.nodes, round(hours, 3) if hours is not None else None, offer,
                         work_usd, per_hour, ref_hours, capacity, count > 2 and not linked)
