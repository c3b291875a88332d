"""Ranking the fitting plans by the user's objective: cost per job, time, simplicity, or a documented balance.

Objectives (DESIGN §3 "Ranking"):
- cheapest (the default when a budget is mentioned): lowest cost per job when the hours are known
  (the engine assumes a stated default dataset when none is given), else the lowest $/hour of the
  whole plan (instances x instance $/hour), i.e. inference and diffusion, which have no hours;
- fastest: fewest hours (or most delivered compute), then cost;
- simplest: fewest nodes, GPUs and switches, then cost;
- balanced (no budget, no objective): cost per job of the work, with a small surcharge for
  operational burden (+5 % per extra GPU, +25 % for more than two cards without an NVLink-class
  link, +10 % per extra node, +5 % per memory-saving switch, +50 % for CPU offload);
  plans whose balanced cost is within 5 % of each other (log-spaced bands from the best) are
  ordered by hours, so a faster plan wins only when it is (nearly) as cheap per job. When the
  dataset is unknown, the cost per job is taken for a reference amount of work: the ordering
  does not depend on the amount (every plan's hours scale with it), only billing rounding does.
"""

from __future__ import annotations

import math
from rules.types import GpuSpec, Offer, Workload
from rules.verdict import Option

REFERENCE_TOKENS = 1e8  # amount of work used to compare plans when the dataset size is unknown
BALANCED_BAND = 0.05
GPU_SURCHARGE = 0.05
PCIE_MANY_SURCHARGE = 0.25
NODE_SURCHARGE = 0.10
SWITCH_SURCHARGE = {"offload": 0.50}
DEFAULT_SWITCH_SURCHARGE = 0.05


class Scored:
    """An option with what ranking needs: cost of the work, plan $/hour, hours (job or reference).

    Ranking, constraints and buy-vs-rent read only the numbers and the plan's GPU, count, nodes, switches, job
    hours and offer, kept here as they are on the option; a search scores every fitting GPU (~100 per request) and
    shows three, so its scores build the `Option` on first read (`PlanScore` in rules.plans.search).
    """

    __slots__ = ("gpu_id", "count", "nodes", "switches", "job_hours", "offer", "work_usd", "plan_usd_per_hour", "hours",
                 "capacity", "pcie_many", "_option")

    def __init__(self, option: Option, work_usd: float | None, plan_usd_per_hour: float | None,
                 hours: float | None, capacity: float, pcie_many: bool = False) -> None:
        self._option: Option | None = option
        self.gpu_id, self.count, self.nodes = option.gpu_id, option.count, option.nodes
        self.switches: tuple[str, ...] = option.switches
        self.job_hours: float | None = option.hours  # the option's (rounded) job hours; None when unknown
        self.offer: Offer | None = option.offer
        self.work_usd = work_usd  # cost per job (real hours) or per reference job; None without offer or hours
        self.plan_usd_per_hour = plan_usd_per_hour  # whole plan on its offer; None without offer
        self.hours = hours  # job hours, else reference hours; None for methods without a time model
        self.capacity = capacity  # delivered compute proxy (count x peak), for options without hours
        self.pcie_many = pcie_many  # more than two cards joined only by PCIe

    @property
    def option(self) -> Option:
        """The plan as shown (built on first read for a search's scores)."""
        option = self._option
        if option is None:
            option = self._option = self._build()
        return option

    def _build(self) -> Option:
        raise AssertionError("a Scored made from an option always has it")


def objective_for(workload: Workload) -> str:
    """The user's objective; a budget or a deadline means the cheapest plan that keeps to it."""
    if workload.objective:
        return workload.objective
    if (workload.budget_usd is not None or workload.budget_usd_per_hour is not None
            or workload.deadline_hours is not None):
        return "cheapest"
    return "balanced"


def plan_usd_per_hour(offer: Offer | None, count: int) -> float | None:
    """What the plan costs per hour: whole instances needed x instance price."""
    if offer is None:
        return None
    instances = -(-count // offer.gpu_count) if offer.gpu_count > 1 else count
    return float(offer.usd_per_hour) * instances


def capacity_of(gpu: GpuSpec, count: int, method: str) -> float:
    """Delivered compute proxy: bandwidth for inference (decode is memory bound), else dense peak."""
    per_gpu = gpu.memory_bandwidth_gbs if method == "inference" else (gpu.bf16_dense_tflops or gpu.fp16_dense_tflops)
    return count * per_gpu


def _surcharge(s: Scored) -> float:
    extra = GPU_SURCHARGE * (s.count - 1) + NODE_SURCHARGE * (s.nodes - 1)
    extra += sum(SWITCH_SURCHARGE.get(switch, DEFAULT_SWITCH_SURCHARGE) for switch in s.switches)
    return 1.0 + extra + (PCIE_MANY_SURCHARGE if s.pcie_many else 0.0)


def _work(s: Scored) -> float:
    """Cost of the work; without hours, $/hour per unit of delivered capacity."""
    if s.work_usd is not None:
        return s.work_usd
    if s.plan_usd_per_hour is not None:
        return s.plan_usd_per_hour / max(s.capacity, 1e-9)
    return math.inf


def _balanced(s: Scored) -> float:
    return _work(s) * _surcharge(s)


SortKey = tuple[float | str, ...]  # compared element by element: numbers first, the GPU id last


def rank(scored: list[Scored], objective: str, hours_known: bool) -> list[Option]:
    """Options best first; ties broken by GPU id so the same input gives the same order."""
    return [s.option for s in rank_scored(scored, objective, hours_known)]


def rank_scored(scored: list[Scored], objective: str, hours_known: bool) -> list[Scored]:
    """As `rank`, keeping each option's ranking numbers."""
    if objective == "cheapest":
        def key(s: Scored) -> SortKey:
            cost = s.work_usd if hours_known and s.work_usd is not None else s.plan_usd_per_hour
            return (cost if cost is not None else math.inf, s.hours or 0.0, s.gpu_id)
    elif objective == "fastest":
        def key(s: Scored) -> SortKey:
            hours = s.hours if s.hours is not None else 1.0 / max(s.capacity, 1e-9)
            return (hours, _work(s), s.gpu_id)
    elif objective == "simplest":
        def key(s: Scored) -> SortKey:
            return (s.nodes, s.count, len(s.switches), _work(s), s.gpu_id)
    else:
        balanced = {id(s): _balanced(s) for s in scored}  # once per plan: the best and every key read it
        best = min(balanced.values(), default=math.inf)
        step = math.log(1.0 + BALANCED_BAND)

        def key(s: Scored) -> SortKey:
            value = balanced[id(s)]
            band = math.floor(math.log(value / best) / step + 1e-9) \
                if math.isfinite(value) and 0 < best < math.inf else math.inf
            hours = s.hours if s.hours is not None else 1.0 / max(s.capacity, 1e-9)
            return (band, hours, s.gpu_id)
    return sorted(scored, key=key)
