"""The parts every memory estimate is made of: GiB, the CUDA context and allocator reserve, the band.

`MemoryParts` (bytes per GPU by part, in GiB) becomes the public `MemoryEstimate` through `to_estimate`,
whatever the workload (training, diffusion, serving).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rules.verdict import MemoryEstimate
from rules.workload.setup import Setup

GIB = float(2**30)

# CUDA context + cuBLAS/cuDNN workspaces as nvidia-smi shows them on A100/H100 with PyTorch 2.x
# (0.5-0.9 GiB; PyTorch CUDA semantics notes). Calibrated value; see docs/CALIBRATION.md.
CUDA_CONTEXT_GIB = 0.6
# The caching allocator reserves more than it hands out: fragmentation over the dynamic
# (per-step) tensors. Calibrated; see docs/CALIBRATION.md.
RESERVE_FRACTION = 0.08
# Relative uncertainty of each part (low, high): states are exact to a few %, activations depend
# on kernels and library versions, logits on how the loss upcasts (8-18 B per logit element).
DYNAMIC_BAND = (0.30, 0.40)
LOGIT_BAND = (0.55, 0.10)
STATE_BAND = (0.04, 0.06)
# No blanket band: the band is the sum of the part-wise uncertainties above. What a source or a
# user did not state (checkpointing, batch, sequence length, model shape) widens it by evaluating
# the alternatives (rules/memory/calibration.py `unknown`; `widen` for an assumed model shape).


@dataclass(frozen=True, slots=True)
class MemoryParts:
    """Bytes per GPU by part (GiB) plus the three levels a measurement can report."""

    weights: float
    gradients: float
    optimizer: float
    adapters: float
    activations: float
    logits: float
    context: float
    reserve: float
    cpu_offload: float
    allocated_peak: float  # what torch.cuda.max_memory_allocated would show
    # bitsandbytes paged optimizer state resident on the GPU: unified memory (cudaMallocManaged) that
    # PyTorch's allocator counters never see, so it counts only on the device level (nvidia-smi).
    paged: float = 0.0

    def __init__(self, weights: float, gradients: float, optimizer: float, adapters: float, activations: float,
                 logits: float, context: float, reserve: float, cpu_offload: float, allocated_peak: float,
                 paged: float = 0.0) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "gradients", gradients)
        object.__setattr__(self, "optimizer", optimizer)
        object.__setattr__(self, "adapters", adapters)
        object.__setattr__(self, "activations", activations)
        object.__setattr__(self, "logits", logits)
        object.__setattr__(self, "context", context)
        object.__setattr__(self, "reserve", reserve)
        object.__setattr__(self, "cpu_offload", cpu_offload)
        object.__setattr__(self, "allocated_peak", allocated_peak)
        object.__setattr__(self, "paged", paged)

    @property
    def reserved_peak(self) -> float:
        return self.allocated_peak + self.reserve

    @property
    def device_peak(self) -> float:
        return self.reserved_peak + self.context + self.paged

    @property
    def fixed_peak(self) -> float:
        """Device memory that must fit: everything but paged state, which pages out when the card is full."""
        return self.reserved_peak + self.context



def to_estimate(parts: MemoryParts, setup: Setup, *, widen: float = 0.0) -> MemoryEstimate:
    """The public estimate: expected device peak and a band; `widen` adds uncertainty for defaults."""
    static = parts.weights + parts.optimizer + parts.adapters + parts.paged
    dynamic = parts.device_peak - static - parts.context - parts.logits
    expected = parts.device_peak
    low = (static * (1 - STATE_BAND[0]) + dynamic * (1 - DYNAMIC_BAND[0] - widen)
           + parts.logits * (1 - LOGIT_BAND[0]) + parts.context * 0.5)
    high = (static * (1 + STATE_BAND[1]) + dynamic * (1 + DYNAMIC_BAND[1] + 2 * widen)
            + parts.logits * (1 + LOGIT_BAND[1]) + parts.context)
    if widen:
        low = min(low, expected * (1 - widen))
        high = max(high, expected * (1 + 2 * widen))
    breakdown = {
        "weights": parts.weights, "gradients": parts.gradients, "optimizer": parts.optimizer + parts.paged,
        "adapters": parts.adapters, "activations": parts.activations, "logits": parts.logits,
        "overhead": parts.context + parts.reserve,
    }
    residual = parts.device_peak - sum(breakdown.values())
    breakdown["overhead"] += residual  # keeps the breakdown summing to the peak
    nvme = setup.offload and setup.offload_target == "nvme"
    return MemoryEstimate(
        per_gpu_gib=round(expected, 3), low_gib=round(max(low, 0.0), 3),
        high_gib=round(high, 3), breakdown={k: round(v, 3) for k, v in breakdown.items()},
        gpus=setup.gpus, sharding=setup.sharding, cpu_offload_gib=0.0 if nvme else round(parts.cpu_offload, 3),
        nvme_offload_gib=round(parts.cpu_offload, 3) if nvme else 0.0,
    )


def on_basis(estimate: MemoryEstimate, parts: MemoryParts, basis: str) -> MemoryEstimate:
    """The estimate on the level a measurement reports: `allocated` (torch max allocated/active), `reserved`
    (the caching allocator's reserve), else `device` (nvidia-smi: reserved + CUDA context + resident paged
    optimizer state, which PyTorch's counters never see). The band moves with the level."""
    level = {"allocated": parts.allocated_peak, "reserved": parts.reserved_peak}.get(basis)
    if level is None:
        return estimate
    shift = level - estimate.per_gpu_gib
    breakdown = dict(estimate.breakdown)
    paged = max(breakdown.get("optimizer", 0.0) - parts.optimizer, 0.0)  # resident paged state in the estimate
    breakdown["optimizer"] = round(breakdown.get("optimizer", 0.0) - paged, 3)
    breakdown["overhead"] = round(breakdown.get("overhead", 0.0) + shift + paged, 3)
    return replace(estimate, per_gpu_gib=round(level, 3), low_gib=round(max(estimate.low_gib + shift, 0.0), 3),
                   high_gib=round(estimate.high_gib + shift, 3), breakdown=breakdown)
