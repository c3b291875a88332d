"""Published training throughputs (the cases' `throughput` text) against the FLOPs time model: MFU fit and error."""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rules.speed.training import flops_per_token, saturation
from rules.workload.setup import Setup

# Qwen README profiling: "batch size 1, gradient accumulation 8" -> one iteration = 8 micro-batches
# per GPU (the count comes from the case settings, `micro_batches_per_it`).
_PER_ITERATION = re.compile(r"^([\d.]+)\s*s/it\b")
_TGS = re.compile(r"TGS\s+([\d,]+)")  # LLaMA-Factory: tokens per GPU per second
_TOKENS_PER_S = re.compile(r"^([\d,.]+)\s*tokens/s\b")  # torchtune README: whole job, all GPUs
_PER_GPU = re.compile(r"^([\d,.]+)\s*tokens/GPU/s\b")  # torchtitan benchmarks: TPS per GPU
# A published rate implying more than this share of the dense bf16 peak is not a real-token rate
# on that GPU (the best published LLM training MFUs are ~0.55-0.65 on A100/H100: PaLM 46 %,
# Megatron-LM 2021 52 %, torchtitan Llama 3 8B ~0.6): such rows are reported, never fitted.
MAX_PLAUSIBLE_MFU = 0.75


@dataclass(frozen=True, slots=True)
class ThroughputCase:
    """One published throughput turned into the MFU our FLOPs model implies."""

    case_id: str
    segment: str  # utilisation class of the GPU that ran it: consumer, workstation, datacenter, hopper
    method: str  # full, lora, qlora (pretrain counts as full)
    held_out: bool
    tokens_per_gpu_s: float
    observed_mfu: float  # the utilisation the measured rate implies under the time model


@dataclass(frozen=True, slots=True)
class TimeError:
    """Signed % error of predicted hours for one case under a given MFU table."""

    case_id: str
    held_out: bool
    error_pct: float


def tokens_per_gpu_s(text: str | None, *, seq_len: int, batch_size: int, gpus: int,
                     micro_batches_per_it: int | None = None) -> float | None:
    """Tokens per GPU per second from a case's throughput text; None when it gives no token rate."""
    if not text:
        return None
    if match := _TGS.search(text):
        return float(match.group(1).replace(",", ""))
    if match := _PER_GPU.search(text):
        return float(match.group(1).replace(",", ""))
    if (match := _PER_ITERATION.search(text)) and micro_batches_per_it:
        return micro_batches_per_it * batch_size * seq_len / float(match.group(1))
    if match := _TOKENS_PER_S.search(text):
        return float(match.group(1).replace(",", "")) / max(gpus, 1)
    return None


def observed_mfu(tokens_gpu_s: float, active_params_b: float, setup: Setup, peak_tflops: float) -> float:
    """Utilisation at full GEMM occupancy implied by a measured rate (same formula the time model uses)."""
    raw = tokens_gpu_s * flops_per_token(active_params_b, setup) / (peak_tflops * 1e12)
    return raw / saturation(setup.batch_size * setup.seq_len)


def fit_mfu(cases: Sequence[ThroughputCase]) -> dict[tuple[str, str], float]:
    """Median observed MFU per (segment, method) over the cases that are not held out."""
    groups: dict[tuple[str, str], list[float]] = {}
    for case in cases:
        if not case.held_out and case.observed_mfu <= MAX_PLAUSIBLE_MFU:
            groups.setdefault((case.segment, case.method), []).append(case.observed_mfu)
    return {key: round(statistics.median(values), 3) for key, values in sorted(groups.items())}


def time_errors(cases: Sequence[ThroughputCase], mfu: Mapping[str, Mapping[str, float]]) -> list[TimeError]:
    """Predicted hours vs measured: hours scale as 1/MFU, so error = observed / table - 1."""
    return [TimeError(c.case_id, c.held_out, 100.0 * (c.observed_mfu / mfu[c.segment][c.method] - 1.0))
            for c in cases]


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def time_error_summary(cases: Sequence[ThroughputCase],
                       errors: Mapping[str, float]) -> list[tuple[str, int, float, float]]:
    """(group, n, median |%|, p90 |%|) for plausible rates: all, tuned, held-out."""
    plausible = [c for c in cases if c.observed_mfu <= MAX_PLAUSIBLE_MFU]
    groups = {"all": plausible, "tuned": [c for c in plausible if not c.held_out],
              "held-out": [c for c in plausible if c.held_out]}
    out = []
    for label, rows in groups.items():
        values = [abs(errors[c.case_id]) for c in rows]
        out.append((label, len(values), percentile(values, 0.5), percentile(values, 0.9)))
    return out
