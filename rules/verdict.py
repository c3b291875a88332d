"""Result types of the advice engine: `Verdict` and its parts (`Finding`, `MemoryEstimate`, `Option`, ...).

These are the stable interface the cards helper renders: no display text, only codes and numbers.
Memory is in GiB (2**30 bytes), time in hours, money in `Decimal` US dollars.
Finding codes are stable ids (`fit.vram`, `link.pcie_many`, `spot.checkpoint`): see docs/CALIBRATION.md
for the list. The engine that produces them is `rules.engine.evaluate`; nothing here imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from rules.types import Offer, Workload

Outcome = Literal["pass", "fail", "warn", "info"]
TierName = Literal["consumer", "workstation", "datacenter", "frontier"]
Number = float | int | str

# Keys of `MemoryEstimate.breakdown`, in display order.
BREAKDOWN_KEYS: tuple[str, ...] = (
    "weights",
    "kv_cache",  # serving and running only
    "gradients",
    "optimizer",
    "adapters",
    "activations",
    "logits",
    "overhead",
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One conclusion: a stable code, its outcome and the numbers behind it (units in the keys)."""

    code: str  # e.g. "fit.vram", "spot.checkpoint"
    outcome: Outcome
    numbers: Mapping[str, Number]

    def __init__(self, code: str, outcome: Outcome, numbers: Mapping[str, Number]) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "outcome", outcome)
        object.__setattr__(self, "numbers", numbers)


@dataclass(frozen=True, slots=True)
class MemoryEstimate:
    """Peak memory per GPU with a low/high band; `breakdown` (GiB) has the BREAKDOWN_KEYS."""

    per_gpu_gib: float  # expected peak per GPU
    low_gib: float
    high_gib: float
    breakdown: Mapping[str, float]
    gpus: int  # GPU count this estimate is for
    sharding: str  # none, ddp, zero1, zero2, zero3, fsdp
    cpu_offload_gib: float  # state moved to host RAM per GPU (0 without offload)
    nvme_offload_gib: float = 0.0  # state moved to NVMe per GPU (ZeRO-Infinity; then cpu_offload_gib is 0)

    def __init__(self, per_gpu_gib: float, low_gib: float, high_gib: float, breakdown: Mapping[str, float],
                 gpus: int, sharding: str, cpu_offload_gib: float, nvme_offload_gib: float = 0.0) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "per_gpu_gib", per_gpu_gib)
        object.__setattr__(self, "low_gib", low_gib)
        object.__setattr__(self, "high_gib", high_gib)
        object.__setattr__(self, "breakdown", breakdown)
        object.__setattr__(self, "gpus", gpus)
        object.__setattr__(self, "sharding", sharding)
        object.__setattr__(self, "cpu_offload_gib", cpu_offload_gib)
        object.__setattr__(self, "nvme_offload_gib", nvme_offload_gib)


@dataclass(frozen=True, slots=True)
class Throughput:
    """Serving rates of one plan: decode tokens/s for all sequences and per user, prefill tokens/s, a band."""

    concurrency: int  # sequences decoding together (the batch the rates are for)
    output_tokens_per_s: float  # all sequences together
    output_tokens_per_s_per_user: float
    prefill_tokens_per_s: float
    low_tokens_per_s: float  # band on output_tokens_per_s (calibration spread)
    high_tokens_per_s: float
    basis: str  # "bandwidth" (memory-bound roofline x fitted efficiency), "compute", "offload" (upper bound)
    max_concurrency: int  # sequences at the context that the memory sustains

    def __init__(self, concurrency: int, output_tokens_per_s: float, output_tokens_per_s_per_user: float,
                 prefill_tokens_per_s: float, low_tokens_per_s: float, high_tokens_per_s: float, basis: str,
                 max_concurrency: int) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "concurrency", concurrency)
        object.__setattr__(self, "output_tokens_per_s", output_tokens_per_s)
        object.__setattr__(self, "output_tokens_per_s_per_user", output_tokens_per_s_per_user)
        object.__setattr__(self, "prefill_tokens_per_s", prefill_tokens_per_s)
        object.__setattr__(self, "low_tokens_per_s", low_tokens_per_s)
        object.__setattr__(self, "high_tokens_per_s", high_tokens_per_s)
        object.__setattr__(self, "basis", basis)
        object.__setattr__(self, "max_concurrency", max_concurrency)


@dataclass(frozen=True, slots=True)
class Option:
    """A plan for one GPU type: how many, how sharded, which switches, memory, time and cost."""

    gpu_id: str
    count: int  # total GPUs
    nodes: int
    sharding: str
    switches: tuple[str, ...]  # switches the plan needed: "checkpointing", "8bit_optimizer", "qlora", "offload"
    memory: MemoryEstimate
    hours: float | None  # wall-clock hours for the job; None when the dataset size is unknown
    cost_usd: Decimal | None  # per job on `offer` (billing increments applied); None without price or hours
    offer: Offer | None  # cheapest matching offer used for cost
    findings: tuple[Finding, ...]
    # Serving and running only (None for training):
    precision: str | None = None  # weight format the plan stores (bf16, fp8, awq, gguf-q4_k_m, ...)
    engine: str | None = None
    throughput: Throughput | None = None
    usd_per_million_output_tokens: float | None = None  # plan $/hour / (all sequences' tokens/s x 3600) x 1e6
    usd_per_month: float | None = None  # plan $/hour x 730 h (24/7)
    replicas: int = 1  # serving: independent copies of a `count // replicas`-GPU setup (data parallel)

    def __init__(self, gpu_id: str, count: int, nodes: int, sharding: str, switches: tuple[str, ...],
                 memory: MemoryEstimate, hours: float | None, cost_usd: Decimal | None, offer: Offer | None,
                 findings: tuple[Finding, ...], precision: str | None = None, engine: str | None = None,
                 throughput: Throughput | None = None, usd_per_million_output_tokens: float | None = None,
                 usd_per_month: float | None = None, replicas: int = 1) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "gpu_id", gpu_id)
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "sharding", sharding)
        object.__setattr__(self, "switches", switches)
        object.__setattr__(self, "memory", memory)
        object.__setattr__(self, "hours", hours)
        object.__setattr__(self, "cost_usd", cost_usd)
        object.__setattr__(self, "offer", offer)
        object.__setattr__(self, "findings", findings)
        object.__setattr__(self, "precision", precision)
        object.__setattr__(self, "engine", engine)
        object.__setattr__(self, "throughput", throughput)
        object.__setattr__(self, "usd_per_million_output_tokens", usd_per_million_output_tokens)
        object.__setattr__(self, "usd_per_month", usd_per_month)
        object.__setattr__(self, "replicas", replicas)


# Historic name used in the brief; both names refer to the same type.
Plan = Option


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a GPU type got no plan, e.g. code "fit.vram" with needed_gib / has_gib."""

    gpu_id: str
    code: str
    numbers: Mapping[str, Number]

    def __init__(self, gpu_id: str, code: str, numbers: Mapping[str, Number]) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "gpu_id", gpu_id)
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "numbers", numbers)


@dataclass(frozen=True, slots=True)
class PrecisionFit:
    """One row of the fit matrix: the model at one precision on the named or recommended hardware."""

    precision: str
    fits: bool
    needed_gib: float  # per GPU, at the sized concurrency and context
    has_gib: float  # per GPU, what the engine may use
    code: str  # quality caveat finding code: quant.none, quant.fp8, quant.int8, quant.4bit, quant.gguf

    def __init__(self, precision: str, fits: bool, needed_gib: float, has_gib: float, code: str) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "precision", precision)
        object.__setattr__(self, "fits", fits)
        object.__setattr__(self, "needed_gib", needed_gib)
        object.__setattr__(self, "has_gib", has_gib)
        object.__setattr__(self, "code", code)


@dataclass(frozen=True, slots=True)
class Pinned:
    """The verdict for exactly the hardware the user named."""

    gpu: str
    count: int
    fits: bool  # weights and cache fit in the GPUs' usable memory at `precision`
    precision: str  # the least-quantised precision that fits, the requested one, or the smallest tried
    needed_gib: float  # per GPU
    has_gib: float  # per GPU, usable
    offload_gib: float  # what would have to live in host RAM (0 when it fits)
    throughput: Throughput | None

    def __init__(self, gpu: str, count: int, fits: bool, precision: str, needed_gib: float, has_gib: float,
                 offload_gib: float, throughput: Throughput | None) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "gpu", gpu)
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "fits", fits)
        object.__setattr__(self, "precision", precision)
        object.__setattr__(self, "needed_gib", needed_gib)
        object.__setattr__(self, "has_gib", has_gib)
        object.__setattr__(self, "offload_gib", offload_gib)
        object.__setattr__(self, "throughput", throughput)


@dataclass(frozen=True, slots=True)
class Command:
    """A launch line for the chosen setup: environment variables and arguments (no display text), and the
    hardware it is for (`gpu` id, `gpus` in all): the named hardware when the model runs on it, else the first
    option."""

    engine: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    gpu: str = ""
    gpus: int = 0

    def __init__(self, engine: str, argv: tuple[str, ...], env: tuple[tuple[str, str], ...] = (), gpu: str = "",
                 gpus: int = 0) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "engine", engine)
        object.__setattr__(self, "argv", argv)
        object.__setattr__(self, "env", env)
        object.__setattr__(self, "gpu", gpu)
        object.__setattr__(self, "gpus", gpus)


@dataclass(frozen=True, slots=True)
class Verdict:
    """Everything the engine concluded for one workload."""

    workload: Workload
    assumptions: Mapping[str, Number | bool]  # every resolved input (given or defaulted)
    defaulted: tuple[str, ...]  # the assumption keys the user did not give
    memory: MemoryEstimate  # for the top option, else a one-GPU reference estimate
    options: tuple[Option, ...]  # top three, best first
    rejected: tuple[Rejection, ...]  # notable rejects, most relevant first
    findings: tuple[Finding, ...]  # workload-level guidance
    tier: TierName
    # Serving and running only:
    pinned: Pinned | None = None  # the user's own hardware, when named
    command: Command | None = None
    precisions: tuple[PrecisionFit, ...] = ()  # the fit matrix

    def __init__(self, workload: Workload, assumptions: Mapping[str, Number | bool], defaulted: tuple[str, ...],
                 memory: MemoryEstimate, options: tuple[Option, ...], rejected: tuple[Rejection, ...],
                 findings: tuple[Finding, ...], tier: TierName, pinned: Pinned | None = None,
                 command: Command | None = None, precisions: tuple[PrecisionFit, ...] = ()) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "workload", workload)
        object.__setattr__(self, "assumptions", assumptions)
        object.__setattr__(self, "defaulted", defaulted)
        object.__setattr__(self, "memory", memory)
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "rejected", rejected)
        object.__setattr__(self, "findings", findings)
        object.__setattr__(self, "tier", tier)
        object.__setattr__(self, "pinned", pinned)
        object.__setattr__(self, "command", command)
        object.__setattr__(self, "precisions", precisions)
