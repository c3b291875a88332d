"""Training time from FLOPs: work per token, the GPU's dense peak, utilisation per class and method, scaling,
and what the memory savers cost (measured ratios, host traffic of offloaded or paged state)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from rules.market.offers import GPUS_PER_NODE
from rules.tables import PerGpu, RuleTables
from rules.types import GpuSpec, Workload
from rules.workload.setup import DEFAULT_TRAIN_BATCH, Setup
from rules.workload.shapes import Shape

# Frameworks that train in FP8 (Transformer Engine in Megatron; torchao float8 in torchtitan and torchtune;
# Hugging Face Accelerate's fp8 mixed precision, also behind axolotl): full training and pretraining only.
FP8_FRAMEWORKS = ("megatron", "torchtitan", "torchtune", "hf", "axolotl")
# Generation classes for utilisation: data-centre Hopper and Blackwell (and AMD CDNA 3/4) reach a lower share
# of their much higher peak than Ampere-class cards (torchtitan's 8B on H100: 33-39 % MFU; A100 fine-tunes
# in the case table: 44-50 %).
HOPPER_CLASS_ARCHITECTURES = ("hopper", "blackwell", "cdna 3", "cdna 4")
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
_FP8_METHODS = ("full", "pretrain")
# RAIL_RINGS: beyond one node a collective crosses the fabric on every rail at once. NCCL builds one ring per
# channel and routes each channel's inter-node hop through a different NIC (a rail: GPU k of every node on
# NIC k); a ring moves (n-1)/n of the buffer over each of its hops, a channel carries 1/channels of the buffer,
# so the node's NICs together, not one GPU's, carry a GPU's (n-1)/n share: the inter-node bus bandwidth is the
# per-GPU fabric x GPUs per node, capped by the scale-up link inside the node (ring bus bandwidth as defined in
# nccl-tests doc/PERFORMANCE.md). Before, one GPU's NIC was taken as the ring's link, 8x too slow: a 7B FSDP
# pretrain on 16 H100 came out slower than on 8.


def flops_per_token(active_params_b: float, setup: Setup, shape: Shape | None = None) -> float:
    """6·N full/pretrain, ≈4·N LoRA (no weight gradients), +2·N when activations are recomputed; plus the
    attention matmuls when the shape is known (attention_flops_per_token)."""
    n = active_params_b * 1e9
    k = 6.0 if setup.method in ("full", "pretrain", "diffusion") else 4.0
    if setup.method == "inference":
        k = 2.0
    elif setup.checkpointing in ("full", "offloaded"):
        k += 2.0
    elif setup.checkpointing == "selective":
        k += 0.5
    return k * n + (attention_flops_per_token(shape, setup) if shape is not None else 0.0)


def attention_flops_per_token(shape: Shape, setup: Setup) -> float:
    """QKᵀ and AV per token: forward 2·2·s·d per layer over the causal half (FlashAttention skips the masked
    blocks), so 2·L·s·d; backward twice the forward; recomputation adds one forward (Korthikanti et al.
    2022, and PaLM appendix B's 12·L·d·s without the causal half). LoRA still back-propagates through
    attention, so the same count."""
    d = shape.heads * shape.attention_head_dim
    forward = 2.0 * shape.layers * setup.seq_len * d
    passes = 3.0 + (1.0 if setup.checkpointing in ("full", "offloaded") else 0.0)
    return passes * forward


def uses_fp8(gpu: GpuSpec, setup: Setup, precision: str | None) -> bool:
    """FP8 compute: asked for, on a GPU with FP8 tensor cores, in a framework that trains in FP8, full training."""
    return bool(precision == "fp8" and gpu.fp8_support and gpu.fp8_dense_tflops
                and setup.framework in FP8_FRAMEWORKS and setup.method in _FP8_METHODS)


def peak_tflops(gpu: GpuSpec, setup: Setup, precision: str | None) -> tuple[float, bool]:
    """Dense BF16 tensor peak the utilisation table applies to, and whether the run computes in FP8 (a
    measured speed-up on top: rule tables `training.fp8_speedup`)."""
    return gpu.bf16_dense_tflops or gpu.fp16_dense_tflops, uses_fp8(gpu, setup, precision)


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


def gpu_class(gpu: GpuSpec) -> str:
    """Utilisation class: consumer, workstation, datacenter (Ampere and older), hopper (Hopper, Blackwell, CDNA 3+)."""
    if gpu.segment == "datacenter" and gpu.architecture.lower().startswith(HOPPER_CLASS_ARCHITECTURES):
        return "hopper"
    return gpu.segment


def mfu_for(gpu: GpuSpec, setup: Setup, tables: RuleTables) -> float:
    method = {"pretrain": "full"}.get(setup.method, setup.method)
    return gpu_rates(gpu, tables).mfu_row[method]


def host_link_gbs(gpu: GpuSpec, tables: RuleTables) -> float:
    """Achieved host <-> GPU copy bandwidth (GB/s) for the card's PCIe generation."""
    return tables.training.host_link_gbs["pcie5" if _pcie5(gpu.architecture) else "pcie4"]


@dataclass(frozen=True, slots=True)
class GpuRates:
    """What the time model reads of one GPU under the rule tables (the functions above), worked out once."""

    gpu: GpuSpec
    tables: RuleTables
    peak_flops: float  # dense BF16 (else FP16) tensor peak, FLOP/s
    fp8_capable: bool  # FP8 tensor cores with a published FP8 peak (uses_fp8 adds the run's conditions)
    mfu_row: Mapping[str, float]  # utilisation by method for the GPU's class (else its segment)
    attention_utilisation: float | None  # the class's attention utilisation, None when the tables have none
    host_link_gbs: float
    collective_link_gbs: float  # what collectives cross: half the scale-up link's bidirectional GB/s, else PCIe

    def __init__(self, gpu: GpuSpec, tables: RuleTables, peak_flops: float, fp8_capable: bool,
                 mfu_row: Mapping[str, float], attention_utilisation: float | None, host_link_gbs: float,
                 collective_link_gbs: float) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "gpu", gpu)
        object.__setattr__(self, "tables", tables)
        object.__setattr__(self, "peak_flops", peak_flops)
        object.__setattr__(self, "fp8_capable", fp8_capable)
        object.__setattr__(self, "mfu_row", mfu_row)
        object.__setattr__(self, "attention_utilisation", attention_utilisation)
        object.__setattr__(self, "host_link_gbs", host_link_gbs)
        object.__setattr__(self, "collective_link_gbs", collective_link_gbs)




def _work_out_rates(gpu: GpuSpec, tables: RuleTables) -> GpuRates:
    klass = gpu_class(gpu)
    host = host_link_gbs(gpu, tables)
    # A scale-up link with no published bandwidth (0 in the catalog) is costed as the host link.
    link = gpu.scaleup_bw_gbs / 2 if gpu.has_nvlink_class_link and gpu.scaleup_bw_gbs > 0 else host
    return GpuRates(gpu, tables, (gpu.bf16_dense_tflops or gpu.fp16_dense_tflops) * 1e12,
                    bool(gpu.fp8_support and gpu.fp8_dense_tflops), tables.mfu.get(klass) or tables.mfu[gpu.segment],
                    tables.training.attention_utilisation.get(klass), host, link)


# GpuRates for the GpuSpec and tables objects they were made from.
gpu_rates: PerGpu[GpuRates] = PerGpu(_work_out_rates)


@functools.lru_cache(maxsize=256)
def _pcie5(architecture: str) -> bool:
    return any(architecture.lower().startswith(a) for a in PCIE5_ARCHITECTURES)


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


def comm_seconds_per_step(gpu: GpuSpec, count: int, setup: Setup, params_b: float, trainable_b: float,
                          tables: RuleTables) -> float:
    """Collective traffic of one micro-step per GPU over the slowest link it crosses.

    FSDP / ZeRO-3: the weights are all-gathered for forward and again for backward (compute precision;
    NF4 for QLoRA) and the trainable gradients reduce-scattered (fp32 under mixed precision, as FSDP2's
    reduce_dtype in torchtitan, else bf16); DDP / ZeRO-1/2: one all-reduce of the gradients (2x their
    bytes). A ring moves (n-1)/n of the buffer per GPU. Links: NVLink-class at half the catalog's
    bidirectional GB/s, PCIe cards through the host link, and beyond 8 GPUs the node's rails together (rule
    tables `training.fabric_gbs` per GPU x 8, RAIL_RINGS) where they are slower, each at the tables' achieved share.
    """
    volume = comm_volume(count, setup, params_b, trainable_b)
    return 0.0 if volume is None else comm_seconds(volume, count, gpu_rates(gpu, tables), tables)


def comm_volume(count: int, setup: Setup, params_b: float, trainable_b: float) -> float | None:
    """Collective bytes per GPU and micro-step (comm_seconds_per_step); None when there are no collectives."""
    if count <= 1 or setup.offload:
        return None
    weight_b = 0.516 if setup.weight_format == "nf4" else 2.0
    grad_b = 4.0 if setup.recipe == "mixed" else 2.0
    ring = (count - 1) / count
    if setup.sharding in ("fsdp", "zero3"):
        return (2 * params_b * weight_b + trainable_b * grad_b) * 1e9 * ring
    return 2 * trainable_b * grad_b * 1e9 * ring


def comm_seconds(volume: float, count: int, rates: GpuRates, tables: RuleTables) -> float:
    """Seconds to move `volume` bytes over the slowest link the collectives cross (comm_seconds_per_step)."""
    training = tables.training
    bandwidth = rates.collective_link_gbs * training.link_efficiency
    if count > GPUS_PER_NODE:  # the node's rails together carry a ring's inter-node hops (RAIL_RINGS)
        bandwidth = min(bandwidth, training.fabric_gbs * GPUS_PER_NODE * training.link_efficiency)
    return volume / (bandwidth * 1e9)


def job_hours(tokens: float, active_params_b: float, gpu: GpuSpec, count: int, setup: Setup,
              tables: RuleTables, precision: str | None, *, switches: tuple[str, ...] = (),
              host_gib: float = 0.0, trainable_b: float = 0.0, shape: Shape | None = None) -> float:
    """Wall-clock hours: per micro-step, compute (FLOPs / (dense peak · utilisation · FP8 speed-up)) or the
    collectives, whichever is longer (FSDP overlaps them), x the measured switch ratios, plus host traffic."""
    terms = plan_terms(tokens, active_params_b, count, setup, tables, precision, switches=switches,
                       host_gib=host_gib, trainable_b=trainable_b, shape=shape)
    return hours_on(terms, gpu_rates(gpu, tables))


@dataclass(frozen=True, slots=True)
class PlanTerms:
    """What `job_hours` works out of a plan and a dataset alone, the same on every GPU (the GPU's part is
    `GpuRates`): a search prices one plan on every GPU that shares it."""

    tables: RuleTables
    count: int
    method: str  # the utilisation table's column
    fp8_eligible: bool  # FP8 asked for, in a framework and method that train in FP8 (uses_fp8 without the GPU)
    saturation: float
    framework_speed: float
    compile_speedup: float | None
    ring_attention: bool  # context parallel over 4+ GPUs
    micro_tokens_per_gpu: float  # tokens of one micro-step / count
    micro_steps: float
    attention: float  # attention FLOPs per token
    dense: float  # dense FLOPs per token (before the FP8 speed-up)
    switch_factor: float
    comm_volume: float | None  # collective bytes per GPU and micro-step; None: no collectives
    host_gib: float
    host_steps: float  # optimizer steps
    host_base_s: float  # offload: the CPU optimizer's seconds per step
    host_offload: bool
    host_sharded: bool
    host_nvme_s: float | None  # NVMe offload: seconds per step through the node's drive

    def __init__(self, tables: RuleTables, count: int, method: str, fp8_eligible: bool, saturation: float,
                 framework_speed: float, compile_speedup: float | None, ring_attention: bool,
                 micro_tokens_per_gpu: float, micro_steps: float, attention: float, dense: float,
                 switch_factor: float, comm_volume: float | None, host_gib: float, host_steps: float,
                 host_base_s: float, host_offload: bool, host_sharded: bool, host_nvme_s: float | None) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "tables", tables)
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "fp8_eligible", fp8_eligible)
        object.__setattr__(self, "saturation", saturation)
        object.__setattr__(self, "framework_speed", framework_speed)
        object.__setattr__(self, "compile_speedup", compile_speedup)
        object.__setattr__(self, "ring_attention", ring_attention)
        object.__setattr__(self, "micro_tokens_per_gpu", micro_tokens_per_gpu)
        object.__setattr__(self, "micro_steps", micro_steps)
        object.__setattr__(self, "attention", attention)
        object.__setattr__(self, "dense", dense)
        object.__setattr__(self, "switch_factor", switch_factor)
        object.__setattr__(self, "comm_volume", comm_volume)
        object.__setattr__(self, "host_gib", host_gib)
        object.__setattr__(self, "host_steps", host_steps)
        object.__setattr__(self, "host_base_s", host_base_s)
        object.__setattr__(self, "host_offload", host_offload)
        object.__setattr__(self, "host_sharded", host_sharded)
        object.__setattr__(self, "host_nvme_s", host_nvme_s)


def plan_terms(tokens: float, active_params_b: float, count: int, setup: Setup, tables: RuleTables,
               precision: str | None, *, switches: tuple[str, ...] = (), host_gib: float = 0.0,
               trainable_b: float = 0.0, shape: Shape | None = None) -> PlanTerms:
    """The GPU-independent part of `job_hours` (same arithmetic, same order)."""
    training = tables.training
    fp8 = precision == "fp8" and setup.framework in FP8_FRAMEWORKS and setup.method in _FP8_METHODS
    micro_tokens = setup.batch_size * setup.seq_len * max(count // max(setup.context_parallel, 1), 1)
    params_b = shape.params_b if shape is not None else active_params_b
    volume = comm_volume(count, setup, params_b, trainable_b or params_b)
    host_base = 0.0
    nvme = None
    if host_gib > 0 and setup.offload:  # host_seconds_per_step
        host_base = trainable_b * 1e9 / max(count, 1) / training.offload_params_per_s
        if setup.offload_target == "nvme":
            sharing = min(max(count, 1), 8)  # the GPUs of a node share its drive
            nvme = 2 * (host_gib * 2**30) * sharing / (training.nvme_gbs * 1e9)
    return PlanTerms(
        tables, count, "full" if setup.method == "pretrain" else setup.method, fp8,
        saturation(setup.batch_size * setup.seq_len / max(setup.context_parallel, 1)),
        training.framework_speed.get(setup.framework, 1.0),
        training.compile_speedup if setup.compile else None, setup.context_parallel >= 4,
        micro_tokens / count, tokens / micro_tokens,
        attention_flops_per_token(shape, setup) if shape is not None else 0.0,
        flops_per_token(active_params_b, setup), switch_factor(switches, tables), volume,
        host_gib, tokens / tokens_per_step(setup, count, switches), host_base, setup.offload,
        setup.sharding in ("zero3", "fsdp"), nvme)


def hours_on(terms: PlanTerms, rates: GpuRates) -> float:
    """`job_hours` of a plan on one GPU: its terms under the GPU's rates.

    Host traffic, per optimizer step and GPU rank, of state kept in host RAM (or NVMe):

    Paged optimizer state that does not fit is paged in and out at every step: its bytes cross PCIe once
    each way, concurrently (the link is full duplex), so its size / the link's one-way bandwidth.
    ZeRO-Offload runs the optimizer on the CPU: its throughput (params/s per rank, rule tables) covers
    the gradient and parameter copies. Offloaded weights (ZeRO-3/FSDP) cross PCIe twice per step
    (forward and backward). NVMe offload also reads and writes the states through the node's drive.
    """
    training = terms.tables.training
    mfu = rates.mfu_row[terms.method] * terms.saturation
    rate = rates.peak_flops * mfu * terms.framework_speed
    if terms.compile_speedup is not None:
        rate *= terms.compile_speedup
    # FP8 speeds up the linear layers (Float8Linear / Transformer Engine); attention stays in BF16 and runs
    # at its own utilisation (FlashAttention), lower again when a ring spreads it over 4+ GPUs.
    utilisation = rates.attention_utilisation
    attention_rate = rates.peak_flops * min(mfu, utilisation if utilisation is not None else mfu)
    if terms.ring_attention:
        attention_rate *= training.ring_attention_efficiency
    dense = terms.dense / (training.fp8_speedup if terms.fp8_eligible and rates.fp8_capable else 1.0)
    compute_s = terms.micro_tokens_per_gpu * (dense / rate + terms.attention / attention_rate)
    comm_s = 0.0 if terms.comm_volume is None else comm_seconds(terms.comm_volume, terms.count, rates, terms.tables)
    step_s = max(compute_s * terms.switch_factor, comm_s)
    if terms.count > 8:
        step_s /= training.multinode_efficiency
    host_s = 0.0
    if terms.host_gib > 0:
        link = rates.host_link_gbs * 1e9
        host_bytes = terms.host_gib * 2**30
        if not terms.host_offload:
            seconds = host_bytes / link
        else:
            seconds = terms.host_base_s
            if terms.host_sharded:
                seconds += 2 * host_bytes / link
            if terms.host_nvme_s is not None:
                seconds += terms.host_nvme_s
        host_s = terms.host_steps * seconds
    return (terms.micro_steps * step_s + host_s) / 3600.0
