"""Training time from FLOPs: work per token, the GPU's dense peak, utilisation per class and method, scaling."""

from __future__ import annotations

from rules.tables import RuleTables
from rules.types import GpuSpec, Workload
from rules.workload.setup import Setup

# Frameworks that can train in FP8 (Transformer Engine in Megatron; torchao float8 in torchtune).
FP8_FRAMEWORKS = ("megatron", "torchtune")
# Scaling efficiency of data-parallel / sharded training by link class (per plan, not per doubling).
SCALING = {"single": 1.0, "nvlink": 0.92, "pcie": 0.75, "multinode": 0.85}
# Below this many tokens per micro-batch the per-layer GEMMs do not fill the GPU (few 128-row tiles
# per SM) and fixed per-layer costs (launches, norms, QLoRA dequantisation) dominate: utilisation
# scales with tokens / SATURATION_TOKENS. Qwen README profiling (A100): the s=256 runs reach about
# a quarter of the utilisation of the s=2048 runs of the same models (docs/CALIBRATION.md).
SATURATION_TOKENS = 1024
# QLoRA dequantises every base weight twice per step (forward + backward); the MFU table's qlora
# column carries that penalty.


def flops_per_token(active_params_b: float, setup: Setup) -> float:
    """6·N full/pretrain, ≈4·N LoRA (no weight gradients), +2·N when activations are recomputed."""
    n = active_params_b * 1e9
    k = 6.0 if setup.method in ("full", "pretrain", "diffusion") else 4.0
    if setup.method == "inference":
        k = 2.0
    elif setup.checkpointing in ("full", "offloaded"):
        k += 2.0
    elif setup.checkpointing == "selective":
        k += 0.5
    return k * n


def peak_tflops(gpu: GpuSpec, setup: Setup, precision: str | None) -> tuple[float, bool]:
    """Dense tensor peak used for the run, and whether FP8 was used."""
    if precision == "fp8" and gpu.fp8_support and gpu.fp8_dense_tflops and setup.framework in FP8_FRAMEWORKS:
        return gpu.fp8_dense_tflops, True
    return gpu.bf16_dense_tflops or gpu.fp16_dense_tflops, False


def dataset_tokens(workload: Workload, setup: Setup) -> float | None:
    """Tokens processed: tokens × epochs, or samples × seq_len × epochs; None when unknown."""
    epochs = workload.epochs or 1.0
    if workload.tokens:
        return workload.tokens * epochs
    if workload.samples:
        return workload.samples * setup.seq_len * epochs
    return None


def saturation(tokens_per_micro_batch: int) -> float:
    """Share of the full-occupancy utilisation reached with this many tokens per micro-batch."""
    return min(1.0, tokens_per_micro_batch / SATURATION_TOKENS)


def link_class(gpu: GpuSpec, count: int) -> str:
    if count <= 1:
        return "single"
    if count > 8:
        return "multinode"
    return "nvlink" if gpu.has_nvlink_class_link else "pcie"


def mfu_for(gpu: GpuSpec, setup: Setup, tables: RuleTables) -> float:
    method = {"pretrain": "full"}.get(setup.method, setup.method)
    return tables.mfu[gpu.segment][method]


def job_hours(tokens: float, active_params_b: float, gpu: GpuSpec, count: int, setup: Setup,
              tables: RuleTables, precision: str | None) -> float:
    """Wall-clock hours: FLOPs / (count · dense peak · MFU · scaling)."""
    tflops, _ = peak_tflops(gpu, setup, precision)
    mfu = mfu_for(gpu, setup, tables) * saturation(setup.batch_size * setup.seq_len)
    rate = count * tflops * 1e12 * mfu * SCALING[link_class(gpu, count)]
    return tokens * flops_per_token(active_params_b, setup) / rate / 3600.0
