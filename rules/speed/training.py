"""Training time from FLOPs: work per token, the GPU's dense peak, utilisation per class and method, scaling,
and what the memory savers cost (measured ratios, host traffic of offloaded or paged state)."""

from __future__ import annotations

from rules.tables import RuleTables
from rules.types import GpuSpec, Workload
from rules.workload.setup import DEFAULT_TRAIN_BATCH, Setup

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
# Host link generation by architecture: PCIe 5.0 from Hopper and Blackwell (H100/H200/B200 datasheets,
# RTX 50 series), AMD CDNA 3 (MI300X: PCIe 5.0); earlier cards PCIe 4.0 (A100, Ada, Ampere).
PCIE5_ARCHITECTURES = ("hopper", "blackwell", "cdna 3", "cdna 4")


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


def saturation(tokens_per_micro_batch: float) -> float:
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


def host_link_gbs(gpu: GpuSpec, tables: RuleTables) -> float:
    """Achieved host <-> GPU copy bandwidth (GB/s) for the card's PCIe generation."""
    pcie5 = any(gpu.architecture.lower().startswith(a) for a in PCIE5_ARCHITECTURES)
    return tables.training.host_link_gbs["pcie5" if pcie5 else "pcie4"]


def host_seconds_per_step(setup: Setup, gpu: GpuSpec, count: int, host_gib: float, trainable_b: float,
                          tables: RuleTables) -> float:
    """Seconds per optimizer step spent on state kept in host RAM (or NVMe), per GPU rank.

    Paged optimizer state that does not fit is paged in and out at every step: its bytes cross PCIe once
    each way, concurrently (the link is full duplex), so its size / the link's one-way bandwidth.
    ZeRO-Offload runs the optimizer on the CPU: its throughput (params/s per rank, rule tables) covers
    the gradient and parameter copies. Offloaded weights (ZeRO-3/FSDP) cross PCIe twice per step
    (forward and backward). NVMe offload also reads and writes the states through the node's drive.
    """
    if host_gib <= 0:
        return 0.0
    link = host_link_gbs(gpu, tables) * 1e9
    host_bytes = host_gib * 2**30
    if not setup.offload:
        return host_bytes / link  # paged optimizer state: in and out once per step, full duplex
    seconds = trainable_b * 1e9 / max(count, 1) / tables.training.offload_params_per_s
    if setup.sharding in ("zero3", "fsdp"):
        seconds += 2 * host_bytes / link
    if setup.offload_target == "nvme":
        sharing = min(max(count, 1), 8)  # the GPUs of a node share its drive
        seconds += 2 * host_bytes * sharing / (tables.training.nvme_gbs * 1e9)
    return seconds


def tokens_per_step(setup: Setup, count: int, switches: tuple[str, ...]) -> float:
    """Tokens per optimizer step: the effective batch (micro-batch x accumulation) x sequence x data ranks."""
    batch = DEFAULT_TRAIN_BATCH if "micro_batch" in switches else setup.batch_size
    ranks = max(count // max(setup.context_parallel, 1), 1)
    return batch * setup.seq_len * ranks


def switch_factor(switches: tuple[str, ...], tables: RuleTables) -> float:
    """Product of the measured hours ratios of the switches that have one (rule tables)."""
    factor = 1.0
    for switch in switches:
        factor *= tables.training.switch_time_factor.get(switch, 1.0)
    return factor


def job_hours(tokens: float, active_params_b: float, gpu: GpuSpec, count: int, setup: Setup,
              tables: RuleTables, precision: str | None, *, switches: tuple[str, ...] = (),
              host_gib: float = 0.0, trainable_b: float = 0.0) -> float:
    """Wall-clock hours: FLOPs / (count · dense peak · MFU · scaling) x switch ratios + host traffic."""
    tflops, _ = peak_tflops(gpu, setup, precision)
    mfu = mfu_for(gpu, setup, tables) * saturation(setup.batch_size * setup.seq_len)
    rate = count * tflops * 1e12 * mfu * SCALING[link_class(gpu, count)]
    compute_s = tokens * flops_per_token(active_params_b, setup) / rate * switch_factor(switches, tables)
    steps = tokens / tokens_per_step(setup, count, switches)
    host_s = steps * host_seconds_per_step(setup, gpu, count, host_gib, trainable_b, tables)
    return (compute_s + host_s) / 3600.0
