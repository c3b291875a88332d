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


# Historic name used in the brief; both names refer to the same type.
Plan = Option


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a GPU type got no plan, e.g. code "fit.vram" with needed_gib / has_gib."""

    gpu_id: str
    code: str
    numbers: Mapping[str, Number]


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
