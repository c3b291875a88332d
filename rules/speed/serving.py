"""Serving throughput: decode from memory bandwidth (a roofline bounded below by compute), prefill from FLOPs.

A decode step reads every weight the batch touches once (MoE: the shared part plus the experts the batch's
tokens route to) and every sequence's KV cache; it cannot go faster than the step's FLOPs allow either:
    step = max(bytes / (bandwidth x efficiency x TP efficiency), FLOPs / (peak x utilisation))
tokens/s per user = 1 / step, in total = batch / step. Prefill: (2·N_active + attention) FLOPs per token.
The efficiencies are fitted on published measurements (rules/data/rule_tables.json "serving").
"""

from __future__ import annotations

from dataclasses import dataclass

from rules.memory.serving import kv_bytes_per_sequence, model_weight_bytes
from rules.tables import ServingTables
from rules.types import GpuSpec
from rules.workload.formats import weight_format
from rules.workload.serving import GGUF_ENGINES, PAGED_ENGINES, ServingSetup
from rules.workload.shapes import Shape

# Host memory a desktop holds offloaded layers in: dual-channel DDR5-5600 = 2 channels x 8 B x 5600 MT/s
# = 89.6 GB/s (JEDEC DDR5 data rate; the common desktop configuration of 2024-25).
HOST_RAM_GBS = 89.6


@dataclass(frozen=True, slots=True)
class Rate:
    """Decode and prefill rates of one plan at one batch, and which bound set the decode step."""

    batch: int
    output_tokens_per_s: float  # all sequences together
    output_tokens_per_s_per_user: float
    prefill_tokens_per_s: float
    basis: str  # "bandwidth" (memory-bound roofline), "compute", or "offload"

    def __init__(self, batch: int, output_tokens_per_s: float, output_tokens_per_s_per_user: float,
                 prefill_tokens_per_s: float, basis: str) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "batch", batch)
        object.__setattr__(self, "output_tokens_per_s", output_tokens_per_s)
        object.__setattr__(self, "output_tokens_per_s_per_user", output_tokens_per_s_per_user)
        object.__setattr__(self, "prefill_tokens_per_s", prefill_tokens_per_s)
        object.__setattr__(self, "basis", basis)


def engine_class(setup: ServingSetup, gpu: GpuSpec) -> str:
    """The efficiency row: paged (vLLM-style on CUDA), paged_rocm, gguf_cuda, apple (llama.cpp or MLX on
    Metal), other (ExLlama, transformers)."""
    if getattr(gpu, "unified_memory", False):
        return "apple"
    if setup.engine in PAGED_ENGINES:
        return "paged_rocm" if gpu.software_stack.lower() == "rocm" else "paged"
    if setup.engine in GGUF_ENGINES:
        return "gguf_cuda"
    return "other"


def read_bytes_per_step(shape: Shape, setup: ServingSetup, batch: int) -> float:
    """Weight bytes one decode step reads (all GPUs): everything but the input embedding (a lookup of
    `batch` rows) for dense models; MoE: the shared part plus the experts touched. With uniform routing of
    k of E experts, a layer's batch touches E·(1 - (1 - k/E)^batch) distinct experts on average."""
    total = model_weight_bytes(shape, setup.weight_format)
    embed = 0.0 if shape.tied_embeddings else shape.vocab_size * shape.hidden_size * 2.0
    if weight_format(setup.weight_format).whole_model:
        embed *= weight_format(setup.weight_format).bits / 16
    if not shape.moe_experts or shape.moe_experts <= shape.moe_active_experts:
        return total - embed
    experts, k = shape.moe_experts, max(shape.moe_active_experts, 1)
    per_expert = max(shape.params_b - shape.active_params_b, 0.0) / (experts - k)
    shared = max(shape.active_params_b - k * per_expert, 0.0)
    touched = experts * (1.0 - (1.0 - k / experts) ** batch)
    scale = total / (shape.params_b * 1e9)  # bytes per parameter in this format
    return (shared + touched * per_expert) * 1e9 * scale - embed


def _decode_flops(shape: Shape, batch: int, kv_len: int) -> float:
    """2·N_active per token plus attention over the cache (QK and AV: 4 · layers · len · q width)."""
    attention = 4.0 * shape.layers * kv_len * shape.heads * shape.attention_head_dim
    return batch * (2.0 * shape.active_params_b * 1e9 + attention)


# Formats whose GEMMs run on fp8 (or faster fp4) tensor cores where the GPU has them: fp8 W8A8; NVFP4 and
# MXFP4 on Blackwell run at the fp4 rate, at least the fp8 one (the catalog holds no fp4 column, so fp8 is
# the conservative peak).
LOW_PRECISION_COMPUTE = frozenset({"fp8", "nvfp4", "mxfp4"})


def compute_peak_tflops(gpu: GpuSpec, weight_format_name: str) -> float:
    """Dense tensor peak the GEMMs run at: fp8 where the weights are fp8/fp4 and the GPU has fp8 units, else
    bf16 (fp16 on cards without bf16); weight-only int8/4-bit kernels dequantise to 16-bit."""
    if weight_format_name in LOW_PRECISION_COMPUTE and gpu.fp8_support and gpu.fp8_dense_tflops:
        return gpu.fp8_dense_tflops
    return gpu.bf16_dense_tflops or gpu.fp16_dense_tflops


def tp_efficiency(gpu: GpuSpec, setup: ServingSetup, tables: ServingTables) -> float:
    """Share of the GPUs' summed bandwidth (or peak) a multi-GPU plan keeps. Tensor parallel: all GPUs work
    on every layer at once, less the all-reduces. A layer split (llama.cpp -sm layer) runs the GPUs one
    after the other for each token: one GPU's worth."""
    if setup.gpus == 1:
        return 1.0
    if setup.engine not in PAGED_ENGINES:
        return 1.0 / setup.gpus
    return tables.tp_efficiency[link_class(gpu)]


def allreduce_seconds(work: DecodeWork, setup: ServingSetup, gpu: GpuSpec, tables: ServingTables) -> float:
    """The latency of a tensor-parallel step's all-reduces, which no batch amortises: two per layer (after
    attention and after the MLP or the experts, as Megatron-style tensor parallelism places them), each on the
    critical path of every decode step (rule tables `serving.tp_allreduce_ms` by link class)."""
    if setup.gpus == 1 or setup.engine not in PAGED_ENGINES:
        return 0.0
    return 2 * work.layers * tables.tp_allreduce_ms.get(link_class(gpu), 0.0) / 1e3


def moe_seconds(work: DecodeWork, setup: ServingSetup, gpu: GpuSpec, tables: ServingTables) -> float:
    """The fixed cost of a fine-grained MoE model's expert layers in one decode step, which no batch amortises:
    per layer, the router, top-k, the alignment of tokens to experts and the grouped expert GEMMs' launches
    (rule tables `serving.moe_layer_ms`, by expert kernel: weight-only 4-bit or other). Paged engines only, for
    models with at least `serving.moe_min_experts` routed experts (DeepSeek-V3/R1: 256; Mixtral's 8 are not).
    Every layer is counted: DeepSeek-V3's 3 dense layers of 61 are within the fit."""
    if not tables.moe_min_experts or work.moe_experts < tables.moe_min_experts or \
            engine_class(setup, gpu) not in ("paged", "paged_rocm"):
        return 0.0
    fmt = weight_format(setup.weight_format)
    # weight-only 4-bit (AWQ, GPTQ, int4, NF4) dequantises in the expert kernels; NVFP4/MXFP4 run on tensor cores
    kernel = "int4" if fmt.family == "4bit" and fmt.name not in LOW_PRECISION_COMPUTE else "other"
    return work.layers * tables.moe_layer_ms.get(kernel, 0.0) / 1e3


def pcie_tensor_parallel(setup: ServingSetup, gpu: GpuSpec) -> bool:
    """Whether a decode step all-reduces over PCIe: tensor parallelism in a paged engine on cards without an
    NVLink-class link (allreduce_seconds). Its tokens/s assume peer-to-peer transfers; the low end of its range
    allows for cards without them (rule tables `serving.tp_pcie_low`)."""
    return setup.gpus > 1 and setup.engine in PAGED_ENGINES and link_class(gpu) == "pcie"


def link_class(gpu: GpuSpec) -> str:
    """The rule tables' link class of a multi-GPU plan: nvlink (NVLink-class scale-up), else pcie."""
    return "nvlink" if gpu.has_nvlink_class_link else "pcie"


@dataclass(frozen=True, slots=True)
class DecodeWork:
    """What one decode step and one prompt token cost, independent of the GPU that runs them."""

    batch: int
    bytes_per_gpu: float  # weights touched / GPUs + every sequence's KV on one GPU
    layers: int  # the model's layers (two all-reduces each under tensor parallelism: allreduce_seconds)
    step_flops: float  # all GPUs together
    prefill_flops_per_token: float
    moe_experts: int = 0  # routed experts per MoE layer (0: dense): moe_seconds

    def __init__(self, batch: int, bytes_per_gpu: float, layers: int, step_flops: float,
                 prefill_flops_per_token: float, moe_experts: int = 0) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "batch", batch)
        object.__setattr__(self, "bytes_per_gpu", bytes_per_gpu)
        object.__setattr__(self, "layers", layers)
        object.__setattr__(self, "step_flops", step_flops)
        object.__setattr__(self, "prefill_flops_per_token", prefill_flops_per_token)
        object.__setattr__(self, "moe_experts", moe_experts)


def decode_work(shape: Shape, setup: ServingSetup, *, batch: int, kv_len: int) -> DecodeWork:
    batch = max(batch, 1)
    kv = kv_bytes_per_sequence(shape, _at(setup, kv_len))
    per_token = 2.0 * shape.active_params_b * 1e9 + 2.0 * shape.layers * kv_len * shape.heads * shape.attention_head_dim
    return DecodeWork(batch, read_bytes_per_step(shape, setup, batch) / setup.gpus + batch * kv, shape.layers,
                      _decode_flops(shape, batch, kv_len), per_token, shape.moe_experts)


def rate_of(work: DecodeWork, setup: ServingSetup, gpu: GpuSpec, tables: ServingTables,
            bandwidth_gbs: float | None = None) -> Rate:
    """The step time on `gpu`: bytes over bandwidth x efficiency plus the step overhead, bounded by compute."""
    bandwidth = (bandwidth_gbs or gpu.memory_bandwidth_gbs) * 1e9
    row = engine_class(setup, gpu)
    scaling = tp_efficiency(gpu, setup, tables)
    memory_s = work.bytes_per_gpu / (bandwidth * tables.bandwidth_efficiency[row] * scaling) + \
        tables.step_overhead_ms[row] / 1e3 + allreduce_seconds(work, setup, gpu, tables) + \
        moe_seconds(work, setup, gpu, tables)
    peak = compute_peak_tflops(gpu, setup.weight_format) * 1e12 * setup.gpus * scaling
    compute_s = work.step_flops / (peak * tables.decode_compute_utilisation)
    step = max(memory_s, compute_s)
    return Rate(work.batch, work.batch / step, 1.0 / step,
                peak * prefill_utilisation(row, tables, work.moe_experts) / work.prefill_flops_per_token,
                "bandwidth" if memory_s >= compute_s else "compute")


def prefill_utilisation(row: str, tables: ServingTables, moe_experts: int = 0) -> float:
    """The share of dense peak prefill reaches for an engine class: the paged engines' own where fitted, and
    for a fine-grained MoE model in them that times `moe_prefill`."""
    if row not in ("paged", "paged_rocm"):
        return tables.prefill_compute_utilisation
    paged = tables.prefill_paged_compute_utilisation
    share = paged if paged is not None else tables.prefill_compute_utilisation
    if tables.moe_min_experts and moe_experts >= tables.moe_min_experts:
        share *= tables.moe_prefill
    return share


def decode_rate(shape: Shape, setup: ServingSetup, gpu: GpuSpec, tables: ServingTables, *, batch: int,
                kv_len: int, bandwidth_gbs: float | None = None) -> Rate:
    """Decode and prefill rates at `batch` sequences each holding `kv_len` cached tokens."""
    return rate_of(decode_work(shape, setup, batch=batch, kv_len=kv_len), setup, gpu, tables, bandwidth_gbs)


def prefill_rate(shape: Shape, gpu: GpuSpec, setup: ServingSetup, tables: ServingTables, prompt: int) -> float:
    """Prompt tokens/s: peak x utilisation over (2·N_active + attention at half the prompt) per token."""
    per_token = 2.0 * shape.active_params_b * 1e9 + 2.0 * shape.layers * prompt * shape.heads * shape.attention_head_dim
    peak = compute_peak_tflops(gpu, setup.weight_format) * 1e12 * setup.gpus * tp_efficiency(gpu, setup, tables)
    return peak * prefill_utilisation(engine_class(setup, gpu), tables, shape.moe_experts) / per_token


def offload_rate(shape: Shape, setup: ServingSetup, gpu: GpuSpec, tables: ServingTables, *, on_gpu_share: float,
                 kv_len: int) -> Rate:
    """llama.cpp with only part of the layers on the GPU (-ngl < all): each token streams the GPU's share
    from VRAM and the rest from host RAM (HOST_RAM_GBS) at the CPU decode efficiency."""
    total = read_bytes_per_step(shape, setup, 1) + kv_bytes_per_sequence(shape, _at(setup, kv_len)) * setup.gpus
    gpu_eff = tables.bandwidth_efficiency[engine_class(setup, gpu)]
    on_gpu = total * on_gpu_share
    step = on_gpu / (gpu.memory_bandwidth_gbs * 1e9 * gpu_eff) + \
        (total - on_gpu) / (HOST_RAM_GBS * 1e9 * tables.host_bandwidth_efficiency)
    return Rate(1, 1.0 / step, 1.0 / step, prefill_rate(shape, gpu, setup, tables, kv_len), "offload")


def _at(setup: ServingSetup, kv_len: int) -> ServingSetup:
    """`replace(setup, context_tokens=...)`, built directly: once per GPU and rate, and dataclasses.replace runs
    as Python."""
    return ServingSetup(setup.method, setup.engine, setup.weight_format, setup.kv_cache_dtype, setup.concurrency,
                        max(kv_len, 0), setup.gpus, setup.full_load)
