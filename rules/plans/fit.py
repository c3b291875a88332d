"""Fit search: for each GPU the smallest plan that fits with headroom, or the reason it cannot."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from rules.market.offers import GPUS_PER_NODE
from rules.memory.diffusion import diffusion_parts, find_diffusion_model
from rules.memory.parts import MemoryParts, to_estimate
from rules.memory.training import estimate_parts
from rules.types import GpuSpec, Workload
from rules.verdict import MemoryEstimate, Rejection
from rules.plans.switches import OFFLOAD_ORDER, applicable, ladder, permission_for
from rules.workload.setup import Setup, changed, resolve_setup, with_switch
from rules.workload.shapes import Shape

NODE_COUNTS = (1, 2, 4, 8)
MULTINODE_COUNTS = (16, 32, 64)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One memory-feasible configuration (independent of the GPU type until `on_device`).

    The public estimate (band, breakdown) is made from the parts on first read: a search reads only the host
    state (`host_gib`, `cpu_offload_gib`, the estimate's figures from the parts), the shown plans the rest."""

    count: int
    switches: tuple[str, ...]
    setup: Setup
    parts: MemoryParts
    widen: float  # to_estimate's widening for an assumed model shape
    fixed_gib: float = 0.0  # what must fit on the card: the estimate without pageable optimizer state
    _estimate: MemoryEstimate | None = field(default=None, repr=False, compare=False)

    def __init__(self, count: int, switches: tuple[str, ...], setup: Setup, parts: MemoryParts, widen: float,
                 fixed_gib: float = 0.0, _estimate: MemoryEstimate | None = None) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "switches", switches)
        object.__setattr__(self, "setup", setup)
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "widen", widen)
        object.__setattr__(self, "fixed_gib", fixed_gib)
        object.__setattr__(self, "_estimate", _estimate)

    @property
    def estimate(self) -> MemoryEstimate:
        found = self._estimate
        if found is None:
            found = to_estimate(self.parts, self.setup, widen=self.widen)
            object.__setattr__(self, "_estimate", found)  # a cache of a pure function of the fields above
        return found

    @property
    def cpu_offload_gib(self) -> float:
        """The estimate's `cpu_offload_gib` (0 for NVMe offload), from the parts."""
        return 0.0 if self._nvme else round(self.parts.cpu_offload, 3)

    @property
    def host_gib(self) -> float:
        """The estimate's `cpu_offload_gib + nvme_offload_gib`: state kept in host RAM or on NVMe."""
        offloaded = round(self.parts.cpu_offload, 3)
        return 0.0 + offloaded if self._nvme else offloaded + 0.0

    @property
    def _nvme(self) -> bool:
        return self.setup.offload and self.setup.offload_target == "nvme"


@dataclass(frozen=True, slots=True)
class FitOutcome:
    """The GPU-independent result of a fit search: a candidate, or a rejection code and its numbers."""

    candidate: Candidate | None
    code: str
    needed_gib: float  # rejections: the per-GPU need on the most cards allowed, every switch on
    most_gpus: int

    def __init__(self, candidate: Candidate | None, code: str, needed_gib: float, most_gpus: int) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "candidate", candidate)
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "needed_gib", needed_gib)
        object.__setattr__(self, "most_gpus", most_gpus)


@dataclass(frozen=True, slots=True)
class Fit:
    gpu_id: str
    candidate: Candidate | None
    rejection: Rejection | None
    space: CandidateSpace | None = field(default=None, repr=False, compare=False)  # where `need_gib` is read
    first_count: int = 1

    def __init__(self, gpu_id: str, candidate: Candidate | None, rejection: Rejection | None,
                 space: CandidateSpace | None = None, first_count: int = 1) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "gpu_id", gpu_id)
        object.__setattr__(self, "candidate", candidate)
        object.__setattr__(self, "rejection", rejection)
        object.__setattr__(self, "space", space)
        object.__setattr__(self, "first_count", first_count)

    @property
    def need_gib(self) -> float:
        """Per-GPU need at the first count tried (one card), every allowed switch on; 0.0 without a space.

        Worked out on first read (once per space): only the notable rejects read it, and it costs every
        offload step's memory at that count."""
        return round(_least_need(self.space, self.first_count), 1) if self.space is not None else 0.0


class FitTable(Mapping[str, Fit]):
    """A search's fits by GPU id; each `Fit` is built on first read (a search reads a few of ~115: the
    pinned GPU's, the popular cards')."""

    def __init__(self, space: CandidateSpace, first_count: int) -> None:
        self._space, self._first_count = space, first_count
        self._entries: dict[str, tuple[Candidate | None, Rejection | None]] = {}
        self._built: dict[str, Fit] = {}

    def add(self, gpu_id: str, candidate: Candidate | None, rejection: Rejection | None) -> None:
        self._entries[gpu_id] = (candidate, rejection)

    def __getitem__(self, gpu_id: str) -> Fit:
        fit = self._built.get(gpu_id)
        if fit is None:
            candidate, rejection = self._entries[gpu_id]
            fit = self._built[gpu_id] = Fit(gpu_id, candidate, rejection, self._space, self._first_count)
        return fit

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


class CandidateSpace:
    """Memory estimates per (count, switches), computed once per workload and shared by all GPUs."""

    def __init__(self, workload: Workload, shape: Shape, method: str, widen: float, family: str = "llm", *,
                 unified: bool = False) -> None:
        """`unified`: plans for Apple silicon, without the savers its frameworks lack (UNIFIED_UNAVAILABLE)."""
        self._workload, self._shape, self._method, self._widen = workload, shape, method, widen
        self._family = family
        self._preset = find_diffusion_model(workload.model, workload.params_b) if family == "diffusion" else None
        self._permission = permission_for(workload, unified=unified)
        self._cache: dict[tuple[int, tuple[str, ...]], Candidate] = {}
        self._ladders: dict[int, list[tuple[str, ...]]] = {}
        self._bases: dict[int, Setup] = {}
        self._setups: dict[tuple[int, tuple[str, ...]], Setup] = {}  # ladder steps, built once each
        self._needs: dict[tuple[int, tuple[str, ...]], float] = {}
        # A plan's setup and memory parts, computed once; the public estimate (band, breakdown) is made only
        # for the plans a caller asks for (`candidate`): the fit search reads only the need.
        self._parts: dict[tuple[int, tuple[str, ...]], tuple[Setup, MemoryParts]] = {}
        self._offload_steps: dict[int, list[tuple[str, ...]]] = {}
        self._offload_kinds: dict[int, dict[str, tuple[str, ...]]] = {}
        # fit_gpu results by what a fit depends on (VRAM, headroom, whether cards may span nodes, counts):
        # GPUs sharing those (every 80 GB data-centre card) share one search.
        self.fits: dict[tuple[float, float, str, bool, tuple[int, ...], float], FitOutcome] = {}
        self.least_needs: dict[int, float] = {}  # _least_need per count: the same for every GPU

    def base_setup(self, count: int) -> Setup:
        if count not in self._bases:
            self._bases[count] = self._base_setup(count)
        return self._bases[count]

    def _base_setup(self, count: int) -> Setup:
        setup = resolve_setup(self._workload, method=self._method, gpus=count, family=self._family)
        if count > 1 and self._workload.sharding is None:
            if setup.method == "inference":
                setup = changed(setup, sharding="tensor_parallel")
            elif setup.is_diffusion:
                setup = changed(setup, sharding="fsdp")  # FSDP shards the denoiser (diffusers/accelerate, SimpleTuner)
            else:
                setup = changed(setup, sharding="zero3" if setup.framework == "deepspeed" else "fsdp")
        return setup

    def ladders(self, count: int) -> list[tuple[str, ...]]:
        if count not in self._ladders:
            self._ladders[count] = self._ladder(count)
        return self._ladders[count]

    def _ladder(self, count: int) -> list[tuple[str, ...]]:
        steps = ladder(self.base_setup(count), self._permission)
        for switches, setup in steps:
            self._setups[(count, switches)] = setup
        return [switches for switches, _ in steps]

    def offload_steps(self, count: int) -> list[tuple[str, ...]]:
        """After every count failed without them, each a form of offload on top of the full ladder: paged
        optimizer state that pages out to host RAM, else CPU offload, else NVMe offload."""
        if count not in self._offload_steps:
            self._offload_steps[count] = self._offload_ladder(count)
        return self._offload_steps[count]

    def _offload_ladder(self, count: int) -> list[tuple[str, ...]]:
        last = self.ladders(count)[-1]
        setup = self._setups[(count, last)]
        out: list[tuple[str, ...]] = []
        for switch in OFFLOAD_ORDER:  # each replaces the one before: alternatives, not a ladder
            if applicable(switch, setup, self._permission):
                out.append(last + (switch,))
                self._setups[(count, out[-1])] = with_switch(setup, switch)
        return out

    def need(self, count: int, switches: tuple[str, ...]) -> float:
        """Per-GPU need (GiB) of one plan, computed on first use (the fit search reads only these).

        The candidate's `estimate.per_gpu_gib` (the device peak to 3 decimals) or, when paged optimizer state
        may page out (an offload step), its `fixed_gib`; from the parts, without building the estimate.
        """
        key = (count, switches)
        found = self._needs.get(key)
        if found is None:
            setup, parts = self._setup_parts(key)
            per_gpu = round(parts.device_peak, 3)
            paging = "paged_optimizer" in switches or setup.offload
            found = self._needs[key] = round(per_gpu - parts.paged, 3) if paging else per_gpu
        return found

    def first_fitting(self, count: int, limit_gib: float) -> tuple[str, ...] | None:
        """The first step of `count`'s ladder whose need fits in `limit_gib`, else None (needs computed on first use)."""
        needs = self._needs
        for switches in self.ladders(count):
            need = needs.get((count, switches))
            if need is None:
                need = self.need(count, switches)
            if need <= limit_gib:
                return switches
        return None

    def offload_step(self, count: int, kind: str) -> tuple[str, ...] | None:
        """The offload step of `count` that ends in `kind` (paged, CPU or NVMe offload), if it applies."""
        if count not in self._offload_kinds:
            self._offload_kinds[count] = {switches[-1]: switches for switches in self.offload_steps(count)}
        return self._offload_kinds[count].get(kind)

    def full_need(self, count: int) -> float:
        """The need at `count` cards with every allowed switch on (the last ladder step)."""
        return self.need(count, self.ladders(count)[-1])

    def candidate(self, count: int, switches: tuple[str, ...]) -> Candidate:
        key = (count, switches)
        if key not in self._cache:
            setup, parts = self._setup_parts(key)
            fixed = round(parts.device_peak, 3) - parts.paged  # the estimate's per_gpu_gib less paged state
            self._cache[key] = Candidate(count, switches, setup, parts, self._widen, round(fixed, 3))
        return self._cache[key]

    def _setup_parts(self, key: tuple[int, tuple[str, ...]]) -> tuple[Setup, MemoryParts]:
        found = self._parts.get(key)
        if found is None:
            setup = self._setups.get(key) or self._setup_off_ladder(*key)
            found = self._parts[key] = (setup, self.parts(setup))
        return found

    def on_device(self, candidate: Candidate, usable_gib: float) -> Candidate:
        """The candidate on a card with `usable_gib`: pageable optimizer state beyond it lives on the host."""
        if candidate.parts.paged <= 0:
            return candidate
        parts = self.parts(candidate.setup, device_gib=usable_gib)
        return Candidate(candidate.count, candidate.switches, candidate.setup, parts, candidate.widen,
                         candidate.fixed_gib)

    def host_ram_ok(self, candidate: Candidate, host_gib_per_gpu: float) -> bool:
        """CPU offload needs the offloaded states in host RAM (per GPU); NVMe offload does not."""
        if candidate.setup.offload_target == "nvme":
            return True
        return candidate.cpu_offload_gib <= host_gib_per_gpu  # NVMe plans report 0 here

    def _setup_off_ladder(self, count: int, switches: tuple[str, ...]) -> Setup:
        """A plan's setup when its switches are not this count's ladder (a caller's own list): applied in order."""
        setup = self.base_setup(count)
        for switch in switches:
            setup = with_switch(setup, switch)
        return setup

    def parts(self, setup: Setup, device_gib: float | None = None) -> MemoryParts:
        if self._preset is not None:
            return diffusion_parts(self._preset, setup)
        return estimate_parts(self._shape, setup, device_gib=device_gib)


def counts_for(workload: Workload, method: str) -> tuple[int, ...]:
    if workload.gpus:
        return (workload.gpus,)
    if method == "inference" or method == "diffusion":
        return NODE_COUNTS
    return NODE_COUNTS + MULTINODE_COUNTS


def usable_gib(gpu: GpuSpec, headroom_fraction: float) -> float:
    """Catalog VRAM as marketed ("80 GB" HBM = 80 GiB) minus the headroom kept free; on Apple silicon the share
    of unified memory macOS lets the GPU wire (`gpu_usable_fraction`, knowledge/data/SOURCES.md), as serving uses."""
    if gpu.unified_memory:
        return gpu.vram_gb * gpu.gpu_usable_fraction
    return gpu.vram_gb * (1.0 - headroom_fraction)


def margin_numbers(gpu: GpuSpec, headroom_fraction: float) -> dict[str, float | int | str]:
    """What a plan may use of the card (`usable_gib`) and, on a Mac, the share macOS gives the GPU (`gpu_share`,
    a fraction): the renderer names the rest as the safety margin, or as what macOS keeps."""
    out: dict[str, float | int | str] = {"usable_gib": round(usable_gib(gpu, headroom_fraction), 1)}
    if gpu.unified_memory:
        out["gpu_share"] = gpu.gpu_usable_fraction
    return out


def usable_counts(gpu: GpuSpec, counts: tuple[int, ...]) -> tuple[int, ...]:
    """Counts this card may be offered at: one node for consumer cards and cards without a fabric."""
    if gpu.segment == "consumer" or not gpu.multinode_fabric:
        return tuple(c for c in counts if c <= GPUS_PER_NODE) or counts[:1]
    return counts


def fit_gpu(gpu: GpuSpec, space: CandidateSpace, counts: tuple[int, ...], headroom: float, *,
            host_ram_gib: float = float("inf"), with_need: bool = True) -> Fit:
    """Smallest count (then fewest switches) whose per-GPU estimate fits; else why not (memoised per space).

    Savers first, then more GPUs, then offload (CPU while the host RAM per GPU holds the offloaded state,
    else NVMe). A rejection reports the per-GPU need on the most cards this GPU may be offered at, with
    every allowed switch on: how far off the best it could do is, not the unoptimised one-card figure.
    `with_need=False` leaves `need_gib` at 0.0, for callers that read only the plan (it costs every
    step at the first count).
    """
    outcome = fit_outcome(gpu, space, counts, headroom, host_ram_gib)
    single = space if with_need else None
    if outcome.candidate is not None:
        return Fit(gpu.id, outcome.candidate, None, single, counts[0])
    return Fit(gpu.id, None, rejection_of(gpu, outcome, counts, headroom), single, counts[0])


def fit_outcome(gpu: GpuSpec, space: CandidateSpace, counts: tuple[int, ...], headroom: float,
                host_ram_gib: float) -> FitOutcome:
    """`fit_gpu`'s GPU-independent result, memoised per space by what the search reads of the GPU."""
    key = (usable_gib(gpu, headroom), headroom, gpu.segment, bool(gpu.multinode_fabric), counts, host_ram_gib)
    outcome = space.fits.get(key)
    if outcome is None:
        outcome = space.fits[key] = _search_fit(gpu, space, counts, headroom, host_ram_gib)
    return outcome


def rejection_of(gpu: GpuSpec, outcome: FitOutcome, counts: tuple[int, ...], headroom: float) -> Rejection:
    """Why `gpu` got no plan (an outcome without a candidate), with the need against what the card has."""
    numbers: dict[str, float | int | str] = {
        "needed_gib": outcome.needed_gib, "has_gib": gpu.vram_gb, "gpus": outcome.most_gpus, "max_gpus_tried": counts[-1],
        **margin_numbers(gpu, headroom),  # what a plan may fill: the rest is the safety margin
    }
    return Rejection(gpu.id, outcome.code, numbers)


def _least_need(space: CandidateSpace, count: int) -> float:
    """The per-GPU need at `count` with every allowed switch on, offload included (once per space and count)."""
    found = space.least_needs.get(count)
    if found is None:
        steps = space.offload_steps(count)
        found = space.least_needs[count] = min([space.full_need(count)] + [space.need(count, s) for s in steps])
    return found


def _search_fit(gpu: GpuSpec, space: CandidateSpace, counts: tuple[int, ...], headroom: float,
                host_ram_gib: float) -> FitOutcome:
    """fit_gpu's search; reads only the GPU's VRAM, segment and multi-node fabric (the memo key)."""
    limit = usable_gib(gpu, headroom)
    one_node = gpu.segment == "consumer" or not gpu.multinode_fabric
    allowed = tuple(c for c in counts if c <= GPUS_PER_NODE or not one_node)
    for count in allowed:
        found = space.first_fitting(count, limit)
        if found is not None:
            return FitOutcome(space.on_device(space.candidate(count, found), limit), "", 0.0, 0)
    for kind in OFFLOAD_ORDER:  # paged state, then CPU offload at any count, NVMe only when RAM runs out
        for count in allowed:
            switches = space.offload_step(count, kind)
            if switches is None or space.need(count, switches) > limit:  # cheap test first: on_device
                continue  # recomputes the parts
            candidate = space.on_device(space.candidate(count, switches), limit)
            if space.host_ram_ok(candidate, host_ram_gib):
                return FitOutcome(candidate, "", 0.0, 0)
    blocked: str | None = None
    if one_node and any(c > GPUS_PER_NODE and _least_need(space, c) <= limit for c in counts):
        blocked = "segment.consumer_multinode" if gpu.segment == "consumer" else "link.no_fabric"
    most = usable_counts(gpu, counts)[-1]
    return FitOutcome(None, blocked or "fit.vram", round(_least_need(space, most), 1), most)
