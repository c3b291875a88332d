"""Serving fit search: per GPU the fewest cards (1/2/4/8, then nodes on datacenter GPUs) and the
least-quantised precision that hold the weights and every sequence's cache; its rates and its price.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from rules.market.book import OfferBook, cheapest_in
from rules.market.offers import GPUS_PER_NODE, cheapest
from rules.memory.parts import GIB
from rules.memory.serving import (
    ServingMemory,
    is_large_card,
    limit_gib,
    max_sequences_default,
    serving_memory,
    sharding_name,
    sustained_sequences,
    to_serving_estimate,
)
from rules.plans.ranking import plan_usd_per_hour
from rules.speed.serving import DecodeWork, Rate, decode_work, offload_rate, pcie_tensor_parallel, rate_of
from rules.tables import RuleTables, ServingTables
from rules.types import GpuSpec, Offer, Provider, Workload
from rules.verdict import Option, Rejection, Throughput
from rules.workload.serving import PAGED_ENGINES, ServingSetup, ladder, pick_engine, resolve_serving
from rules.workload.shapes import Shape

SERVING_COUNTS = (1, 2, 4, 8)
MAX_REPLICA_GPUS = 64  # copies of a setup stop here, as the training search stops at 64 GPUs
MULTINODE_COUNTS = (16, 32)
HOURS_PER_MONTH = 730.0  # 8760 h / 12: a month at 24/7


@dataclass(frozen=True, slots=True)
class ServingPlan:
    """One GPU type at one count and precision: its memory, whether it fits and how many sequences it holds."""

    gpu: GpuSpec
    setup: ServingSetup
    memory: ServingMemory
    needed_gib: float  # per GPU at the sized concurrency
    has_gib: float  # per GPU, what the engine may use
    sustained: int  # sequences at the context the memory holds (capped by the engine's default maximum)
    replicas: int = 1  # independent copies of the setup (data parallel) that a total tokens/s target needs

    def __init__(self, gpu: GpuSpec, setup: ServingSetup, memory: ServingMemory, needed_gib: float,
                 has_gib: float, sustained: int, replicas: int = 1) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "gpu", gpu)
        object.__setattr__(self, "setup", setup)
        object.__setattr__(self, "memory", memory)
        object.__setattr__(self, "needed_gib", needed_gib)
        object.__setattr__(self, "has_gib", has_gib)
        object.__setattr__(self, "sustained", sustained)
        object.__setattr__(self, "replicas", replicas)

    @property
    def fits(self) -> bool:
        return self.needed_gib <= self.has_gib

    @property
    def total_gpus(self) -> int:
        return self.setup.gpus * self.replicas


class ServingSpace:
    """Memory per (engine, precision, count, card class), computed once per workload and shared by all GPUs."""

    def __init__(self, workload: Workload, shape: Shape, method: str, tables: RuleTables) -> None:
        self.workload, self.shape, self.method, self.tables = workload, shape, method, tables
        assert tables.serving is not None
        self.serving: ServingTables = tables.serving
        self._memory: dict[tuple[str, str, int, bool, bool], tuple[ServingSetup, ServingMemory, float]] = {}
        # fit_serving outcomes by what they depend on (engine, card class, usable GiB, counts, ladder): every
        # 80 GB data-centre card shares one search. A tokens/s target makes the outcome per GPU.
        self.fits: dict[tuple[object, ...], tuple[int, str] | None] = {}
        self._work: dict[tuple[int, int], DecodeWork] = {}  # by (id of a memoised setup, batch)
        # The precision ladder and the valid counts by what they read of a GPU (most cards share them).
        self._ladders: dict[tuple[object, ...], tuple[str, ...]] = {}
        self._counts: dict[tuple[object, ...], tuple[int, ...]] = {}

    def ladder(self, gpu: GpuSpec, engine: str) -> tuple[str, ...]:
        """`rules.workload.serving.ladder` for this workload: it reads the GPU's FP8 and BF16 support, vendor and
        architecture only."""
        key = (engine, gpu.fp8_support, gpu.bf16_support, gpu.vendor, gpu.architecture)
        found = self._ladders.get(key)
        if found is None:
            found = self._ladders[key] = ladder(self.workload, self.shape, gpu, engine)
        return found

    def valid_counts(self, gpu: GpuSpec, engine: str, counts: tuple[int, ...]) -> tuple[int, ...]:
        """`valid_counts` for this shape: it reads the GPU's segment, multi-node fabric and one-GPU machines only."""
        key = (engine, gpu.segment, bool(gpu.multinode_fabric), bool(gpu.unified_memory or gpu.laptop), counts)
        found = self._counts.get(key)
        if found is None:
            found = self._counts[key] = valid_counts(gpu, self.shape, engine, counts)
        return found

    def engine(self, gpu: GpuSpec) -> str:
        return pick_engine(self.workload, self.method, gpu)

    def sized(self, engine: str, precision: str, count: int, large: bool,
              unified: bool) -> tuple[ServingSetup, ServingMemory, float]:
        """The setup, its memory and the GiB per GPU it needs at the sized concurrency (memoised)."""
        key = (engine, precision, count, large, unified)
        found = self._memory.get(key)
        if found is None:
            setup = resolve_serving(self.workload, method=self.method, engine=engine, weight_format=precision,
                                    gpus=count, max_context=self.shape.max_context)
            memory = serving_memory(self.shape, setup, large=large, unified=unified)
            found = self._memory[key] = (setup, memory, memory.needed(setup.concurrency) / GIB)
        return found

    def plan(self, gpu: GpuSpec, count: int, precision: str, engine: str | None = None) -> ServingPlan:
        engine = engine or self.engine(gpu)
        setup, memory, needed = self.sized(engine, precision, count, is_large_card(gpu),
                                           bool(getattr(gpu, "unified_memory", False)))
        has = limit_gib(gpu, engine, self.tables.headroom_fraction)
        sustained = sustained_sequences(memory, has)
        if engine in PAGED_ENGINES:  # vLLM schedules at most max_num_seqs (its default unless the user asks more)
            sustained = min(sustained, max(max_sequences_default(gpu), setup.concurrency))
        return ServingPlan(gpu, setup, memory, needed, has, sustained)

    def rate(self, plan: ServingPlan) -> Rate:
        """Decode at the sized concurrency, or at full load when the user gave none (serving); a plan of several
        replicas serves that many times the sequences and tokens, each user at one replica's speed."""
        batch = max(plan.sustained, 1) if plan.setup.full_load else plan.setup.concurrency
        key = (id(plan.setup), batch)
        work = self._work.get(key)
        if work is None:
            work = self._work[key] = decode_work(self.shape, plan.setup, batch=batch,
                                                 kv_len=plan.setup.context_tokens)
        one = rate_of(work, plan.setup, plan.gpu, self.serving)
        if plan.replicas == 1:
            return one
        r = plan.replicas
        return Rate(one.batch * r, one.output_tokens_per_s * r, one.output_tokens_per_s_per_user,
                    one.prefill_tokens_per_s * r, one.basis)

    def by_replicas(self) -> bool:
        """Whether a total tokens/s target is met by copies of the smallest setup (data parallel) rather than by a
        larger tensor-parallel one: serving at full load (no number of users given) with a total target. Copies
        keep every GPU's throughput (tensor parallelism loses to its all-reduces: rules.speed.serving)."""
        work = self.workload
        return bool(work.tokens_per_s) and work.tokens_per_s_scope == "total" and work.concurrency is None \
            and self.method == "serving"

    def replicated(self, plan: ServingPlan) -> ServingPlan:
        """The plan as copies enough to sustain the total target (at most MAX_REPLICA_GPUS GPUs in all)."""
        target = float(self.workload.tokens_per_s or 0.0)
        total = self.rate(plan).output_tokens_per_s
        if total <= 0 or total >= target:
            return plan
        copies = min(math.ceil(target / total), max(MAX_REPLICA_GPUS // plan.setup.gpus, 1))
        return replace(plan, replicas=copies) if copies > 1 else plan

    def offload(self, plan: ServingPlan) -> Rate:
        """llama.cpp with what does not fit in host RAM (-ngl below all layers): an upper bound."""
        share = max(min(plan.has_gib / max(plan.needed_gib, 1e-9), 1.0), 0.0)
        return offload_rate(self.shape, plan.setup, plan.gpu, self.serving, on_gpu_share=share,
                            kv_len=plan.setup.context_tokens)

    def throughput(self, plan: ServingPlan, rate: Rate) -> Throughput:
        low, high = self.serving.band
        if pcie_tensor_parallel(plan.setup, plan.gpu):  # the calibrated rate assumes P2P between the cards
            low *= self.serving.tp_pcie_low
        return Throughput(
            concurrency=rate.batch, output_tokens_per_s=round(rate.output_tokens_per_s, 2),
            output_tokens_per_s_per_user=round(rate.output_tokens_per_s_per_user, 2),
            prefill_tokens_per_s=round(rate.prefill_tokens_per_s, 1),
            low_tokens_per_s=round(rate.output_tokens_per_s * low, 2),
            high_tokens_per_s=round(rate.output_tokens_per_s * high, 2), basis=rate.basis,
            max_concurrency=plan.sustained * plan.replicas)


def valid_counts(gpu: GpuSpec, shape: Shape, engine: str, counts: Sequence[int]) -> tuple[int, ...]:
    """Counts this card may serve at: tensor parallelism must divide the attention heads (vLLM
    ModelConfig.verify_with_parallel_config: num_attention_heads % tensor_parallel_size == 0) and the KV
    heads or be a multiple of them; more than one node only on datacenter GPUs with a cluster fabric. An
    Apple-silicon Mac or a laptop has one GPU: "2x M3 Max" is not a machine anyone can buy or rent."""
    out = []
    single = bool(gpu.unified_memory or gpu.laptop)
    for count in counts:
        if count > GPUS_PER_NODE and (gpu.segment == "consumer" or not gpu.multinode_fabric):
            continue
        if count > 1 and single:
            continue
        tp = min(count, GPUS_PER_NODE)
        if engine in PAGED_ENGINES and tp > 1:
            kv = shape.kv_heads
            if shape.heads % tp or (kv >= tp and kv % tp) or (kv < tp and tp % kv):
                continue
        out.append(count)
    return tuple(out)


def meets_target(workload: Workload, rate: Rate) -> bool:
    """The tokens/s the user asked for, per user or in total (no target: always)."""
    if not workload.tokens_per_s:
        return True
    if workload.tokens_per_s_scope == "total":
        return rate.output_tokens_per_s >= workload.tokens_per_s
    return rate.output_tokens_per_s_per_user >= workload.tokens_per_s


def fit_serving(gpu: GpuSpec, space: ServingSpace, counts: tuple[int, ...]) -> ServingPlan | Rejection:
    """Fewest cards first, then the least-quantised precision that fits (and meets a tokens/s target);
    else why not: the need per GPU with the most compressed precision on the most cards allowed."""
    engine = space.engine(gpu)
    allowed = space.valid_counts(gpu, engine, counts)
    steps = space.ladder(gpu, engine)
    large, unified = is_large_card(gpu), bool(getattr(gpu, "unified_memory", False))
    has = limit_gib(gpu, engine, space.tables.headroom_fraction)
    replicas = space.by_replicas()
    per_gpu_target = bool(space.workload.tokens_per_s) and not replicas
    key = (engine, large, unified, has, allowed, steps, gpu.id if per_gpu_target else None)
    if key not in space.fits:
        space.fits[key] = _search_fit(gpu, space, engine, allowed, steps, large, unified, has, per_gpu_target)
    found = space.fits[key]
    if found is not None:
        plan = space.plan(gpu, found[0], found[1], engine)
        return space.replicated(plan) if replicas else plan
    most = allowed[-1] if allowed else counts[0]
    plan = space.plan(gpu, most, steps[-1], engine)
    code = "fit.vram" if allowed else "fit.tensor_parallel"
    return Rejection(gpu.id, code, {"needed_gib": round(plan.needed_gib, 1), "has_gib": round(plan.has_gib, 1),
                                    "gpus": most, "precision": steps[-1], "max_gpus_tried": counts[-1]})


def _search_fit(gpu: GpuSpec, space: ServingSpace, engine: str, allowed: tuple[int, ...], steps: tuple[str, ...],
                large: bool, unified: bool, has: float, per_gpu_target: bool) -> tuple[int, str] | None:
    first_fit: tuple[int, str] | None = None
    for count in allowed:
        for precision in steps:
            if space.sized(engine, precision, count, large, unified)[2] > has:
                continue
            if not per_gpu_target or meets_target(space.workload,
                                                  space.rate(space.plan(gpu, count, precision, engine))):
                return count, precision
            first_fit = first_fit or (count, precision)
    return first_fit  # fits but misses the tokens/s target everywhere: the smallest, flagged in the verdict


def price(plan: ServingPlan, offers: Sequence[Offer], workload: Workload, tables: RuleTables,
          providers: Mapping[str, Provider], book: OfferBook | None) -> Offer | None:
    """The cheapest offer able to provide the plan's cards (NVLink-class preferred under TP)."""
    count, gpu = plan.setup.gpus, plan.gpu
    prefer_link = count > 1 and plan.setup.engine in PAGED_ENGINES and gpu.has_nvlink_class_link
    rework = tables.spot_rework_fraction
    if book is not None:
        pick = cheapest_in(book, gpu.id, count, None, spot=bool(workload.spot), rework=rework, providers=providers,
                           minimum_s=tables.billing_minimum_s, prefer_link=prefer_link)
    else:
        pick = cheapest(offers, count, None, spot=bool(workload.spot), rework=rework, providers=providers,
                        minimum_s=tables.billing_minimum_s, prefer_link=prefer_link)
    return pick.offer


@dataclass(frozen=True, slots=True)
class Scored:
    """A fitting plan with its offer and rates: what ranking needs, before the full option is built."""

    plan: ServingPlan
    offer: Offer | None
    rate: Rate | None  # None until asked for (`scored_rate`): an unpriced plan's rate ranks only by speed
    usd_per_hour: float | None
    usd_per_million: float | None  # plan $/hour / (all sequences' tokens/s x 3600) x 1e6

    def __init__(self, plan: ServingPlan, offer: Offer | None, rate: Rate | None, usd_per_hour: float | None,
                 usd_per_million: float | None) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "plan", plan)
        object.__setattr__(self, "offer", offer)
        object.__setattr__(self, "rate", rate)
        object.__setattr__(self, "usd_per_hour", usd_per_hour)
        object.__setattr__(self, "usd_per_million", usd_per_million)


def score(plan: ServingPlan, space: ServingSpace, offer: Offer | None, *, rate_now: bool = True) -> Scored:
    """`rate_now=False`: a plan without a price leaves its rate to `scored_rate` (the cheapest-first ranking puts
    it after every priced plan by GPU id alone, so most of the catalog's rates are never read)."""
    per_hour = plan_usd_per_hour(offer, plan.setup.gpus)
    if per_hour is None and not rate_now:
        return Scored(plan, offer, None, None, None)
    rate = space.rate(plan)
    if per_hour is not None:
        per_hour *= plan.replicas  # each copy on its own instance of the offer
    per_million = None
    if per_hour is not None and rate.output_tokens_per_s > 0:
        per_million = per_hour / (rate.output_tokens_per_s * 3600.0) * 1e6
    return Scored(plan, offer, rate, per_hour, per_million)


def scored_rate(scored: Scored, space: ServingSpace) -> Rate:
    """The plan's rate, computed on first use when `score` left it for later (kept on the object)."""
    rate = scored.rate
    if rate is None:
        rate = space.rate(scored.plan)
        object.__setattr__(scored, "rate", rate)
    return rate


def to_option(scored: Scored, space: ServingSpace) -> Option:
    """The public option: memory at the sized concurrency, rates, $/M output tokens and $/month."""
    plan, setup = scored.plan, scored.plan.setup
    sequences = max(plan.sustained, setup.concurrency) if setup.full_load else setup.concurrency
    estimate = to_serving_estimate(plan.memory, setup, sequences)
    per_month = round(scored.usd_per_hour * HOURS_PER_MONTH, 2) if scored.usd_per_hour is not None else None
    per_million = round(scored.usd_per_million, 4) if scored.usd_per_million is not None else None
    count = plan.total_gpus
    nodes = setup.nodes * plan.replicas if setup.gpus > GPUS_PER_NODE else max(math.ceil(count / GPUS_PER_NODE), 1)
    return Option(plan.gpu.id, count, nodes, sharding_name(setup), (), estimate, None, None, scored.offer,
                  (), precision=setup.weight_format, engine=setup.engine,
                  throughput=space.throughput(plan, scored_rate(scored, space)), usd_per_million_output_tokens=per_million,
                  usd_per_month=per_month, replicas=plan.replicas)


def rank_serving(scored: list[Scored], objective: str, space: ServingSpace) -> list[Scored]:
    """Cheapest per million output tokens (default), fastest per user, or simplest (fewest cards); ties by
    fewer cards then GPU id; plans without a price after those with one."""
    inf = float("inf")

    def cost(s: Scored) -> float:
        return s.usd_per_million if s.usd_per_million is not None else inf

    if objective == "fastest":
        return sorted(scored, key=lambda s: (-scored_rate(s, space).output_tokens_per_s_per_user, cost(s),
                                             s.plan.gpu.id))
    if objective == "simplest":
        return sorted(scored, key=lambda s: (s.plan.setup.nodes, s.plan.setup.gpus, cost(s), s.plan.gpu.id))
    return sorted(scored, key=lambda s: (cost(s), s.plan.setup.gpus, s.plan.gpu.id))
