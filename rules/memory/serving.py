"""Memory per GPU of a served or locally run model: weights in their format, KV cache, workspace, engine reserve.

Under tensor parallelism every GPU holds 1/TP of the weights and of the KV heads (vLLM
`ModelConfig.get_num_kv_heads`: max(1, kv_heads // TP), i.e. heads are replicated when TP exceeds them;
MLA caches one latent "head" that every TP rank keeps whole: `if self.use_mla: return 1`); across nodes the
layers are split (pipeline parallel). llama.cpp splits layers between GPUs (-sm layer), so weights and
cache divide by the GPU count.
"""

from __future__ import annotations

from dataclasses import dataclass

from rules.workload.formats import KV_BYTES, weight_bytes, weight_format
from rules.memory.parts import CUDA_CONTEXT_GIB, GIB
from rules.types import GpuSpec
from rules.verdict import MemoryEstimate
from rules.workload.serving import GGUF_ENGINES, PAGED_ENGINES, ServingSetup
from rules.workload.shapes import Shape

# vLLM pre-allocates this share of the card (CacheConfig.gpu_memory_utilization: 0.9 through v0.11, 0.92 in
# current main, vllm/config/cache.py); the command we print sets it explicitly, so the fit does not depend
# on the version's default. The CUDA context lives in the share it leaves.
GPU_MEMORY_UTILIZATION = 0.90
# Memory vLLM's profile counts besides weights and activations (vllm-project/vllm logs):
# "non_torch_memory takes 0.16GiB" on one GPU (PR #12126, H100; the same in generative-computing/mellea
# PR #416); NCCL / custom all-reduce buffers under TP: 3.58 - 1.79 = 1.79 GiB more per GPU at TP 2 than at
# TP 1 for Llama-3-8B on H100 (PR #10511 "non_torch_memory" lines).
NON_TORCH_GIB = 0.16
TP_COMMUNICATION_GIB = 1.79
# CUDA graphs of the decode batch sizes: "Graph capturing finished in 14 secs, took 0.21 GiB" for
# Llama-3.2-1B, 16 layers (vLLM PR #11349); graph memory grows with the layers captured.
CUDA_GRAPH_GIB_PER_LAYER = 0.21 / 16
# vLLM's profile run pushes max_num_batched_tokens through the model and samples max_num_seqs rows
# (vllm/engine/arg_utils.py get_batch_defaults, OpenAI server: 8192 tokens and 1024 sequences on cards
# with >= 70 GiB that are not A100, else 2048 and 256).
BATCHED_TOKENS = {"large": 8192, "small": 2048}
DEFAULT_MAX_SEQS = {"large": 1024, "small": 256}
# Transient elements per batched token in the profile's peak: residual/norm copies (4h), QKV (q + 2 kv)
# and the gated MLP (gate, up, act: 3f), in bf16; plus fp32 logits and one working copy per sampled row.
# Check: Llama-3-8B, 8192 tokens x 65,536 elements x 2 B = 1.00 GiB + 256 x 128,256 x 8 B = 0.24 GiB
# -> 1.25 GiB; vLLM PR #10511 measured "PyTorch activation peak memory 1.26GiB", also at TP 2, so the
# transient is not divided by TP here.
SAMPLER_BYTES_PER_LOGIT = 8.0
# llama.cpp's compute buffer is dominated by the fp32 logits of one micro-batch: n_ubatch (512, llama.cpp
# common/common.h default) x vocabulary x 4 B. Logs: "CUDA0 compute buffer size = 300.75 MiB" for a
# 151,936-token vocabulary (512 x 151,936 x 4 B = 296.8 MiB; SciSharp/LLamaSharp issue #1099) and 105.00 MiB
# for a 50,688-token one (99.0 MiB; mozilla-ai/llamafile PR #552).
LLAMA_CPP_UBATCH = 512
# Relative uncertainty (low, high) of each part: weights are exact to the format's layout; the KV cache is
# exact; the workspace and the engine reserve vary with versions and settings.
WORKSPACE_BAND = (0.5, 0.5)
WEIGHT_BAND = (0.02, 0.03)


@dataclass(frozen=True, slots=True)
class ServingMemory:
    """Bytes per GPU: fixed parts and the KV cache of one sequence at the context."""

    weights: float
    kv_per_sequence: float
    activations: float
    reserve: float  # engine reserve: non-torch memory, communication buffers, CUDA graphs
    context: float  # CUDA context (0 on Apple silicon)

    def __init__(self, weights: float, kv_per_sequence: float, activations: float, reserve: float,
                 context: float) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "kv_per_sequence", kv_per_sequence)
        object.__setattr__(self, "activations", activations)
        object.__setattr__(self, "reserve", reserve)
        object.__setattr__(self, "context", context)

    @property
    def fixed(self) -> float:
        return self.weights + self.activations + self.reserve + self.context

    def needed(self, sequences: int) -> float:
        return self.fixed + sequences * self.kv_per_sequence


def is_large_card(gpu: GpuSpec) -> bool:
    """vLLM's larger batching defaults: >= 70 GiB and not an A100."""
    return gpu.vram_gb >= 70 and "a100" not in gpu.id


def kv_bytes_per_token(shape: Shape, kv_dtype: str) -> float:
    """KV bytes per token for the whole model: 2 · layers · kv_heads · head_dim · bytes (MLA: one latent of
    kv_lora_rank + qk_rope_head_dim per layer). Sliding-window layers count here as full layers."""
    element = KV_BYTES[kv_dtype]
    if shape.kv_lora_rank:
        return shape.layers * (shape.kv_lora_rank + shape.qk_rope_head_dim) * element
    return 2 * shape.layers * shape.kv_heads * shape.attention_head_dim * element


def _cached_tokens(shape: Shape, context: int) -> float:
    """Tokens cached per layer, averaged over layers: sliding-window layers keep at most the window."""
    sliding = min(shape.sliding_layers, shape.layers) if shape.sliding_window else 0
    full = shape.layers - sliding
    return (full * context + sliding * min(context, shape.sliding_window)) / max(shape.layers, 1)


def kv_bytes_per_sequence(shape: Shape, setup: ServingSetup) -> float:
    """One sequence's KV cache on one GPU at the setup's context."""
    element = KV_BYTES[setup.kv_cache_dtype]
    tokens = _cached_tokens(shape, setup.context_tokens)
    if setup.engine not in PAGED_ENGINES:  # layer split: every GPU holds its layers' whole cache
        return kv_bytes_per_token(shape, setup.kv_cache_dtype) * tokens / setup.gpus
    layers = shape.layers / setup.nodes
    if shape.kv_lora_rank:
        return layers * (shape.kv_lora_rank + shape.qk_rope_head_dim) * element * tokens
    local_heads = max(1, shape.kv_heads // setup.tensor_parallel)
    return 2 * layers * local_heads * shape.attention_head_dim * element * tokens


def model_weight_bytes(shape: Shape, fmt_name: str) -> float:
    """All the weights in the format (MoE: every expert is stored)."""
    embed = float(shape.vocab_size * shape.hidden_size)
    head = 0.0 if shape.tied_embeddings else embed
    return weight_bytes(shape.params_b * 1e9, embed, head, weight_format(fmt_name))


def max_sequences_default(gpu: GpuSpec) -> int:
    return DEFAULT_MAX_SEQS["large" if is_large_card(gpu) else "small"]


def _activation_bytes(shape: Shape, setup: ServingSetup, large: bool) -> float:
    if setup.engine in GGUF_ENGINES or setup.engine == "mlx":
        # MLX has no published buffer measurement: sized as llama.cpp's logits buffer.
        return LLAMA_CPP_UBATCH * shape.vocab_size * 4.0
    h, kv = shape.heads * shape.attention_head_dim, shape.kv_heads * shape.attention_head_dim
    ffn = shape.intermediate_size * max(shape.moe_active_experts, 1)
    per_token = 2.0 * (4 * shape.hidden_size + h + 2 * kv + 3 * ffn)
    size = "large" if large else "small"
    tokens = BATCHED_TOKENS[size] if setup.engine in PAGED_ENGINES else min(setup.context_tokens, 2048)
    rows = DEFAULT_MAX_SEQS[size] if setup.full_load else setup.concurrency
    return tokens * per_token + rows * shape.vocab_size * SAMPLER_BYTES_PER_LOGIT


def _reserve_bytes(shape: Shape, setup: ServingSetup) -> float:
    if setup.engine not in PAGED_ENGINES:
        return 0.0
    graphs = CUDA_GRAPH_GIB_PER_LAYER * shape.layers / setup.nodes
    comm = TP_COMMUNICATION_GIB if setup.tensor_parallel > 1 else 0.0
    return (NON_TORCH_GIB + comm + graphs) * GIB


def serving_memory(shape: Shape, setup: ServingSetup, *, large: bool, unified: bool) -> ServingMemory:
    """Per-GPU memory of the setup; `large`: vLLM's larger batching defaults; `unified`: Apple silicon."""
    return ServingMemory(
        weights=model_weight_bytes(shape, setup.weight_format) / setup.gpus,
        kv_per_sequence=kv_bytes_per_sequence(shape, setup),
        activations=_activation_bytes(shape, setup, large),
        reserve=_reserve_bytes(shape, setup),
        context=0.0 if unified else CUDA_CONTEXT_GIB * GIB,
    )


def device_gib(gpu: GpuSpec) -> float:
    """Memory the GPU has: VRAM, or on Apple silicon the unified memory macOS lets the GPU use."""
    if getattr(gpu, "unified_memory", False):
        return gpu.vram_gb * float(getattr(gpu, "gpu_usable_fraction", 1.0) or 1.0)
    return gpu.vram_gb


def limit_gib(gpu: GpuSpec, engine: str, headroom: float) -> float:
    """The most a plan may need per GPU: vLLM-style engines claim GPU_MEMORY_UTILIZATION of the card (the
    CUDA context sits outside that claim); others may use the card but the stated headroom; Apple silicon
    the share macOS gives the GPU."""
    if getattr(gpu, "unified_memory", False):
        return device_gib(gpu)
    if engine in PAGED_ENGINES:
        return gpu.vram_gb * GPU_MEMORY_UTILIZATION + CUDA_CONTEXT_GIB
    return gpu.vram_gb * (1.0 - headroom)


def sustained_sequences(memory: ServingMemory, limit: float) -> int:
    """Sequences at the context whose KV cache fits beside the fixed parts (0 when not even one does)."""
    free = limit * GIB - memory.fixed
    if free <= 0 or memory.kv_per_sequence <= 0:
        return 0
    return int(free // memory.kv_per_sequence)


def to_serving_estimate(memory: ServingMemory, setup: ServingSetup, sequences: int) -> MemoryEstimate:
    """The public estimate for `sequences` in flight; the breakdown carries `kv_cache`."""
    kv = sequences * memory.kv_per_sequence
    workspace = memory.activations + memory.reserve
    expected = memory.needed(sequences)
    low = memory.weights * (1 - WEIGHT_BAND[0]) + kv + workspace * (1 - WORKSPACE_BAND[0]) + memory.context * 0.5
    high = memory.weights * (1 + WEIGHT_BAND[1]) + kv + workspace * (1 + WORKSPACE_BAND[1]) + memory.context
    breakdown = {"weights": memory.weights / GIB, "kv_cache": kv / GIB, "activations": memory.activations / GIB,
                 "overhead": (memory.reserve + memory.context) / GIB}
    return MemoryEstimate(
        per_gpu_gib=round(expected / GIB, 3), low_gib=round(low / GIB, 3), high_gib=round(high / GIB, 3),
        breakdown={k: round(v, 3) for k, v in breakdown.items()}, gpus=setup.gpus,
        sharding=sharding_name(setup), cpu_offload_gib=0.0,
    )


def sharding_name(setup: ServingSetup) -> str:
    """How the model is spread: none, tensor_parallel (vLLM-style), layer_split (llama.cpp)."""
    if setup.gpus == 1:
        return "none"
    return "tensor_parallel" if setup.engine in PAGED_ENGINES else "layer_split"
