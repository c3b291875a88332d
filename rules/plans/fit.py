"""Fit search: for each GPU the smallest plan that fits with headroom, or the reason it cannot."""

from __future__ import annotations

from dataclasses import dataclass, replace

from rules.market.offers import GPUS_PER_NODE
from rules.memory.diffusion import diffusion_parts, find_diffusion_model
from rules.memory.parts import MemoryParts, to_estimate
from rules.memory.training import estimate_parts
from rules.types import GpuSpec, Workload
from rules.verdict import MemoryEstimate, Rejection
from rules.workload.setup import Setup, resolve_setup, with_switch
from rules.workload.shapes import Shape

# micro_batch: micro-batch 1 with gradient accumulation keeps the effective batch (same maths, same
# tokens per optimizer step) and halves activations and logits; offered only when the user gave no batch.
SWITCH_ORDER = ("checkpointing", "micro_batch", "8bit_optimizer", "qlora", "offload")
NODE_COUNTS = (1, 2, 4, 8)
MULTINODE_COUNTS = (16, 32, 64)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One memory-feasible configuration (independent of the GPU type)."""

    count: int
    switches: tuple[str, ...]
    setup: Setup
    estimate: MemoryEstimate


@dataclass(frozen=True, slots=True)
class FitOutcome:
    """The GPU-independent result of a fit search: a candidate, or a rejection code and its numbers."""

    candidate: Candidate | None
    code: str
    needed_gib: float  # rejections: the per-GPU need on the most cards allowed, every switch on
    most_gpus: int
    single: float


@dataclass(frozen=True, slots=True)
class Fit:
    gpu_id: str
    candidate: Candidate | None
    rejection: Rejection | None
    need_gib: float = 0.0  # per-GPU need at the first count tried (one card), every allowed switch on


def _applicable(switch: str, setup: Setup) -> bool:
    if not setup.is_training:
        return False
    if switch == "checkpointing":
        return setup.checkpointing == "none"
    if switch == "micro_batch":
        return setup.batch_size > 1
    if switch == "8bit_optimizer":
        return setup.method in ("full", "pretrain", "diffusion") and "8bit" not in setup.optimizer
    if switch == "qlora":
        return setup.method == "lora"
    return not setup.offload


def ladder_setups(setup: Setup, allowed: frozenset[str]) -> list[tuple[tuple[str, ...], Setup]]:
    """(), then switches added one at a time in SWITCH_ORDER, only those allowed and applicable; each step
    with its setup (the previous step's with one more switch on, so no step re-applies the ones before)."""
    steps: list[tuple[tuple[str, ...], Setup]] = [((), setup)]
    current = setup
    for switch in SWITCH_ORDER:
        if switch in allowed and _applicable(switch, current):
            current = with_switch(current, switch)
            steps.append((steps[-1][0] + (switch,), current))
    return steps


class CandidateSpace:
    """Memory estimates per (count, switches), computed once per workload and shared by all GPUs."""

    def __init__(self, workload: Workload, shape: Shape, method: str, widen: float) -> None:
        self._workload, self._shape, self._method, self._widen = workload, shape, method, widen
        self._cache: dict[tuple[int, tuple[str, ...]], Candidate] = {}
        self._ladders: dict[int, list[tuple[str, ...]]] = {}
        self._bases: dict[int, Setup] = {}
        self._setups: dict[tuple[int, tuple[str, ...]], Setup] = {}  # ladder steps, built once each
        self._needs: dict[tuple[int, tuple[str, ...]], float] = {}
        # fit_gpu results by what a fit depends on (VRAM, headroom, whether cards may span nodes, counts):
        # GPUs sharing those (every 80 GB data-centre card) share one search.
        self.fits: dict[tuple[float, float, bool, bool, tuple[int, ...]], FitOutcome] = {}

    def base_setup(self, count: int) -> Setup:
        if count not in self._bases:
            self._bases[count] = self._base_setup(count)
        return self._bases[count]

    def _base_setup(self, count: int) -> Setup:
        setup = resolve_setup(self._workload, method=self._method, gpus=count)
        if count > 1 and self._workload.sharding is None:
            if setup.method == "inference":
                setup = replace(setup, sharding="tensor_parallel")
            elif setup.method == "diffusion":
                setup = replace(setup, sharding="ddp")
            else:
                setup = replace(setup, sharding="zero3" if setup.framework == "deepspeed" else "fsdp")
        return setup

    def ladders(self, count: int) -> list[tuple[str, ...]]:
        if count not in self._ladders:
            self._ladders[count] = self._ladder(count)
        return self._ladders[count]

    def _ladder(self, count: int) -> list[tuple[str, ...]]:
        allowed = self._workload.allowed_switches
        if self._workload.grad_checkpointing is None:
            allowed = allowed | {"checkpointing"}  # not constrained by the user: free to turn on
        if self._workload.batch_size is None:
            allowed = allowed | {"micro_batch"}
        steps = ladder_setups(self.base_setup(count), allowed)
        for switches, setup in steps:
            self._setups[(count, switches)] = setup
        return [switches for switches, _ in steps]

    def need(self, count: int, switches: tuple[str, ...]) -> float:
        """Per-GPU need (GiB) of one plan, computed on first use (the fit search reads only these)."""
        key = (count, switches)
        found = self._needs.get(key)
        if found is None:
            found = self._needs[key] = self.candidate(count, switches).estimate.per_gpu_gib
        return found

    def full_need(self, count: int) -> float:
        """The need at `count` cards with every allowed switch on (the last ladder step)."""
        return self.need(count, self.ladders(count)[-1])

    def candidate(self, count: int, switches: tuple[str, ...]) -> Candidate:
        key = (count, switches)
        if key not in self._cache:
            setup = self._setups.get(key) or self._setup_off_ladder(count, switches)
            estimate = to_estimate(self.parts(setup), setup, widen=self._widen)
            self._cache[key] = Candidate(count, switches, setup, estimate)
        return self._cache[key]

    def _setup_off_ladder(self, count: int, switches: tuple[str, ...]) -> Setup:
        """A plan's setup when its switches are not this count's ladder (a caller's own list): applied in order."""
        setup = self.base_setup(count)
        for switch in switches:
            setup = with_switch(setup, switch)
        return setup

    def parts(self, setup: Setup) -> MemoryParts:
        if setup.method == "diffusion":
            preset = find_diffusion_model(self._workload.model, self._workload.params_b)
            return diffusion_parts(preset, setup)
        return estimate_parts(self._shape, setup)


def counts_for(workload: Workload, method: str) -> tuple[int, ...]:
    if workload.gpus:
        return (workload.gpus,)
    if method == "diffusion":
        return (1,)
    if method == "inference":
        return NODE_COUNTS
    return NODE_COUNTS + MULTINODE_COUNTS


def usable_gib(gpu: GpuSpec, headroom_fraction: float) -> float:
    """Catalog VRAM as marketed ("80 GB" HBM = 80 GiB) minus the headroom kept free."""
    return gpu.vram_gb * (1.0 - headroom_fraction)


def usable_counts(gpu: GpuSpec, counts: tuple[int, ...]) -> tuple[int, ...]:
    """Counts this card may be offered at: one node for consumer cards and cards without a fabric."""
    if gpu.segment == "consumer" or not gpu.multinode_fabric:
        return tuple(c for c in counts if c <= GPUS_PER_NODE) or counts[:1]
    return counts


def fit_gpu(gpu: GpuSpec, space: CandidateSpace, counts: tuple[int, ...], headroom: float) -> Fit:
    """Smallest count (then fewest switches) whose per-GPU estimate fits; else why not (memoised per space).

    A rejection reports the per-GPU need on the most cards this GPU may be offered at, with every
    allowed switch on: how far off the best it could do is, not the unoptimised one-card figure.
    """
    key = (gpu.vram_gb, headroom, gpu.segment == "consumer", bool(gpu.multinode_fabric), counts)
    outcome = space.fits.get(key)
    if outcome is None:
        outcome = space.fits[key] = _search_fit(gpu, space, counts, headroom)
    if outcome.candidate is not None:
        return Fit(gpu.id, outcome.candidate, None, outcome.single)
    numbers: dict[str, float | int | str] = {
        "needed_gib": outcome.needed_gib, "has_gib": gpu.vram_gb, "gpus": outcome.most_gpus, "max_gpus_tried": counts[-1],
    }
    return Fit(gpu.id, None, Rejection(gpu.id, outcome.code, numbers), outcome.single)


def _search_fit(gpu: GpuSpec, space: CandidateSpace, counts: tuple[int, ...], headroom: float) -> FitOutcome:
    """fit_gpu's search; reads only the GPU's VRAM, segment and multi-node fabric (the memo key)."""
    limit = usable_gib(gpu, headroom)
    single = round(space.full_need(counts[0]), 1)
    one_node = gpu.segment == "consumer" or not gpu.multinode_fabric
    blocked: str | None = None
    for count in counts:
        if count > GPUS_PER_NODE and one_node:
            if blocked is None and space.full_need(count) <= limit:
                blocked = "segment.consumer_multinode" if gpu.segment == "consumer" else "link.no_fabric"
            continue
        for switches in space.ladders(count):
            if space.need(count, switches) <= limit:
                return FitOutcome(space.candidate(count, switches), "", 0.0, 0, single)
    most = usable_counts(gpu, counts)[-1]
    return FitOutcome(None, blocked or "fit.vram", round(space.full_need(most), 1), most, single)
