"""Plain typed values the rule engine works on: GPU facts, model shapes, providers, offers, workloads.

`knowledge/` builds these from the database; `bot/` builds a `Workload` from a parsed request.
Nothing here holds display text. Field names carry their units.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import date, datetime
from decimal import Decimal
from typing import Literal

Segment = Literal["consumer", "workstation", "datacenter"]
# "inference" is the legacy name: running for one user, serving when concurrency > 1 (rules.workload.serving).
Method = Literal["full", "pretrain", "lora", "qlora", "inference", "diffusion", "serving", "running"]
TokensPerSecondScope = Literal["per_user", "total"]
Tier = Literal["on-demand", "spot", "reserved"]
# How a price is set (DESIGN §2 Prices): a fixed on-demand rate, an interruptible spot rate, an auction's clearing or
# reserve price (Mithril), a marketplace's median listing (Vast, SimplePod, aggregators), a committed reservation.
Market = Literal["on-demand", "spot", "auction", "marketplace", "reserved"]
MARKETS: tuple[Market, ...] = ("on-demand", "spot", "auction", "marketplace", "reserved")
Sharding = Literal["none", "ddp", "zero1", "zero2", "zero3", "fsdp"]
Checkpointing = Literal["none", "full", "selective", "offloaded"]
Objective = Literal["cheapest", "fastest", "simplest", "balanced"]
ModelKind = Literal["llm", "vlm", "speech", "encoder", "encoder-decoder", "embedding", "diffusion"]


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """One accelerator as the catalog knows it. TFLOPS are dense (no sparsity)."""

    id: str  # stable slug, e.g. "h100-sxm-80gb"
    name: str  # e.g. "H100 SXM 80GB"
    vendor: str  # NVIDIA, AMD, Intel
    architecture: str  # Hopper, Ampere, CDNA 3 ... (English; locales translate)
    vram_gb: float
    memory_type: str
    memory_bandwidth_gbs: float
    bf16_dense_tflops: float | None  # None where BF16 is unsupported (V100, T4)
    fp16_dense_tflops: float
    fp8_dense_tflops: float | None  # None where FP8 is unsupported
    fp32_tflops: float
    tdp_w: int
    release_year: int
    segment: Segment
    form_factor: str  # SXM, PCIe, OAM, board, superchip
    scaleup_link: str  # "NVLink 4", "Infinity Fabric", "PCIe 4.0" (PCIe = no scale-up link)
    scaleup_bw_gbs: float  # per GPU, bidirectional, GB/s
    multinode_fabric: bool  # sold in InfiniBand/RoCE-class clusters
    mig_instances: int  # 0 = no MIG
    bf16_support: bool
    fp8_support: bool
    software_stack: str  # CUDA, ROCm, MLX/Metal, XLA, Neuron, Gaudi, oneAPI
    purchase_usd: Decimal | None
    source: str
    # Apple silicon: vram_gb is the whole unified memory, of which the GPU may use this share.
    unified_memory: bool = False
    gpu_usable_fraction: float = 1.0
    laptop: bool = False  # a laptop (mobile) part: its own id, never the desktop card
    modified: bool = False  # an aftermarket memory mod (4090 48 GB, 2080 Ti 22 GB): no cloud rents it
    purchase_date: date | None = None  # when purchase_usd was the price (launch MSRP date)
    purchase_source: str | None = None  # where purchase_usd is published

    @property
    def has_nvlink_class_link(self) -> bool:
        """True when GPUs talk over a dedicated scale-up link (NVLink, Infinity Fabric, Gaudi RoCE)."""
        return not self.scaleup_link.lower().startswith("pcie")

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_constructor(self)


def owned_only(gpu: GpuSpec) -> bool:
    """A GeForce GTX card (GTX 10 and 16 series: no tensor cores, out of production, rented nowhere): answered
    when its owner names it, never offered as a plan, an alternative or a card to buy."""
    return gpu.vendor == "NVIDIA" and gpu.name.startswith("GeForce GTX")


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A model preset with the architecture fields the memory and time model need."""

    id: str  # slug, e.g. "llama-3.1-8b"
    name: str  # "Llama 3.1 8B"
    hf_id: str | None  # "meta-llama/Llama-3.1-8B"
    family: str
    kind: ModelKind
    params_b: float  # total parameters, billions
    active_params_b: float  # = params_b for dense models; per-token active for MoE
    layers: int
    hidden_size: int
    heads: int
    kv_heads: int
    intermediate_size: int
    vocab_size: int
    tied_embeddings: bool
    moe_experts: int  # 0 for dense
    moe_active_experts: int  # 0 for dense
    max_context: int
    source: str
    head_dim: int = 0  # 0 = hidden_size // heads
    kv_lora_rank: int = 0  # MLA (DeepSeek-V2/V3/R1, Kimi K2): the cached latent's width
    qk_rope_head_dim: int = 0  # MLA: the decoupled RoPE key width, cached beside the latent
    native_dtype: str = "bf16"  # the published weights' dtype: "fp8" for DeepSeek-V3, "mxfp4" for gpt-oss
    sliding_window: int = 0  # tokens a sliding-window layer attends to, 0 = none
    sliding_layers: int = 0  # how many layers use the sliding window

    @property
    def attention_head_dim(self) -> int:
        """The per-head width: the config's head_dim where given, else hidden_size // heads."""
        return self.head_dim or self.hidden_size // self.heads

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_constructor(self)


@dataclass(frozen=True, slots=True)
class PurchasePrice:
    """A street price to buy one GPU (or one Mac / DGX Spark), new or used, on a date, with its source."""

    gpu_id: str
    condition: Literal["new", "used"]
    usd_low: Decimal
    usd_high: Decimal  # = usd_low for a single price
    observed: date
    source: str  # URL
    note: str = ""

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_constructor(self)


@dataclass(frozen=True, slots=True)
class Provider:
    """A place that rents GPUs."""

    id: str  # "aws", "lambda", "runpod"
    name: str
    kind: Literal["cloud", "marketplace", "neocloud"]
    billing_increment_s: int  # 1 = per second, 60 = per minute, 3600 = per hour
    multi_gpu_interconnect: str  # what its multi-GPU instances typically have
    source: str

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_constructor(self)


@dataclass(frozen=True, slots=True)
class Offer:
    """One rentable configuration at one price, as last observed."""

    gpu_id: str
    provider_id: str
    instance_type: str
    gpu_count: int
    region: str
    tier: Tier
    usd_per_hour: Decimal  # whole instance
    usd_per_gpu_hour: Decimal
    billing_increment_s: int
    interconnect: str  # "NVLink", "PCIe", "unknown"
    observed_at: datetime  # the source's own date (a catalog's commit, a live catalog's version), never the import time
    source: str
    # Spot and auction prices are stored with tier "spot": a plan uses them only when the user allows spot, with the
    # rework allowance (rules.market.offers); a marketplace median is a "from" price (cards say so).
    market: Market = "on-demand"

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_constructor(self)


@dataclass(frozen=True, slots=True)
class Workload:
    """What the user wants to run. `None` means "not given": the engine states the default it used.

    Field names match the `gpu-advisor estimate` flags (with underscores) and the parser's output.
    """

    model: ModelSpec | None = None
    params_b: float | None = None
    method: Method | None = None
    framework: str | None = None  # hf, torchtune, unsloth, axolotl, llamafactory, deepspeed, megatron
    recipe: str | None = None  # mixed_adamw, bf16_adamw, ...
    optimizer: str | None = None  # adamw, adamw8bit, paged_adamw8bit, adafactor, sgd, ...
    precision: str | None = None  # bf16, fp16, fp32, fp8, int8, nf4
    seq_len: int | None = None
    batch_size: int | None = None
    grad_checkpointing: Checkpointing | None = None
    lora_rank: int | None = None
    lora_targets: str | None = None  # "all", "qv", "attn", or comma list of module names
    gpus: int | None = None  # GPU count asked for
    sharding: Sharding | None = None
    offload: bool | None = None
    gpu: str | None = None  # a catalog GPU id the user pinned
    resolution: int | None = None  # diffusion image side in pixels
    tokens: float | None = None  # dataset tokens per epoch
    samples: int | None = None
    epochs: float | None = None
    budget_usd: Decimal | None = None
    budget_usd_per_hour: Decimal | None = None
    deadline_hours: float | None = None
    spot: bool | None = None
    objective: Objective | None = None
    allowed_switches: frozenset[str] = frozenset()  # e.g. {"qlora", "checkpointing"}
    # Serving and running (rules.workload.serving lists the accepted values of each).
    concurrency: int | None = None  # sequences in flight at once (users or requests)
    context_tokens: int | None = None  # prompt + output per sequence
    tokens_per_s: float | None = None  # output tokens/s asked for, per user or in total (tokens_per_s_scope)
    tokens_per_s_scope: TokensPerSecondScope | None = None
    quantization: str | None = None  # weight format: bf16, fp8, int8, awq, gptq, gguf-q4_k_m, ...
    kv_cache_dtype: str | None = None  # fp16, bf16, fp8, q8_0, q4_0
    engine: str | None = None  # vllm, sglang, tgi, tensorrt-llm, llama.cpp, ollama, mlx, lmstudio, transformers, exllama
    family: str | None = None  # model family named without a size ("llama", "qwen")
    # Training details a run may state (issue 17); None = the framework's default, stated in the assumptions.
    framework_version: str | None = None  # "0.2.1" or an ISO date ("2024-05"): the defaults of that release
    loss: str | None = None  # full, fp32_upcast, chunked, fused, cce
    memory_basis: str | None = None  # allocated, reserved, device (nvidia-smi): the level `memory` reports
    text_encoder_training: bool | None = None  # diffusion: train the text encoder(s) too
    cache_latents: bool | None = None  # diffusion: latents and text embeddings cached, encoders off the GPU
    frames: int | None = None  # video diffusion: frames per training clip
    compile: bool | None = None  # torch.compile on (faster: rule tables training.compile_speedup)
    electricity_usd_per_kwh: Decimal | None = None  # buy vs rent: the user's power price

    def __init__(self, model: ModelSpec | None = None, params_b: float | None = None,
                 method: Method | None = None, framework: str | None = None, recipe: str | None = None,
                 optimizer: str | None = None, precision: str | None = None, seq_len: int | None = None,
                 batch_size: int | None = None, grad_checkpointing: Checkpointing | None = None,
                 lora_rank: int | None = None, lora_targets: str | None = None, gpus: int | None = None,
                 sharding: Sharding | None = None, offload: bool | None = None, gpu: str | None = None,
                 resolution: int | None = None, tokens: float | None = None, samples: int | None = None,
                 epochs: float | None = None, budget_usd: Decimal | None = None,
                 budget_usd_per_hour: Decimal | None = None, deadline_hours: float | None = None,
                 spot: bool | None = None, objective: Objective | None = None,
                 allowed_switches: frozenset[str] = frozenset(), concurrency: int | None = None,
                 context_tokens: int | None = None, tokens_per_s: float | None = None,
                 tokens_per_s_scope: TokensPerSecondScope | None = None, quantization: str | None = None,
                 kv_cache_dtype: str | None = None, engine: str | None = None, family: str | None = None,
                 framework_version: str | None = None, loss: str | None = None, memory_basis: str | None = None,
                 text_encoder_training: bool | None = None, cache_latents: bool | None = None,
                 frames: int | None = None, compile: bool | None = None,
                 electricity_usd_per_kwh: Decimal | None = None) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "params_b", params_b)
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "framework", framework)
        object.__setattr__(self, "recipe", recipe)
        object.__setattr__(self, "optimizer", optimizer)
        object.__setattr__(self, "precision", precision)
        object.__setattr__(self, "seq_len", seq_len)
        object.__setattr__(self, "batch_size", batch_size)
        object.__setattr__(self, "grad_checkpointing", grad_checkpointing)
        object.__setattr__(self, "lora_rank", lora_rank)
        object.__setattr__(self, "lora_targets", lora_targets)
        object.__setattr__(self, "gpus", gpus)
        object.__setattr__(self, "sharding", sharding)
        object.__setattr__(self, "offload", offload)
        object.__setattr__(self, "gpu", gpu)
        object.__setattr__(self, "resolution", resolution)
        object.__setattr__(self, "tokens", tokens)
        object.__setattr__(self, "samples", samples)
        object.__setattr__(self, "epochs", epochs)
        object.__setattr__(self, "budget_usd", budget_usd)
        object.__setattr__(self, "budget_usd_per_hour", budget_usd_per_hour)
        object.__setattr__(self, "deadline_hours", deadline_hours)
        object.__setattr__(self, "spot", spot)
        object.__setattr__(self, "objective", objective)
        object.__setattr__(self, "allowed_switches", allowed_switches)
        object.__setattr__(self, "concurrency", concurrency)
        object.__setattr__(self, "context_tokens", context_tokens)
        object.__setattr__(self, "tokens_per_s", tokens_per_s)
        object.__setattr__(self, "tokens_per_s_scope", tokens_per_s_scope)
        object.__setattr__(self, "quantization", quantization)
        object.__setattr__(self, "kv_cache_dtype", kv_cache_dtype)
        object.__setattr__(self, "engine", engine)
        object.__setattr__(self, "family", family)
        object.__setattr__(self, "framework_version", framework_version)
        object.__setattr__(self, "loss", loss)
        object.__setattr__(self, "memory_basis", memory_basis)
        object.__setattr__(self, "text_encoder_training", text_encoder_training)
        object.__setattr__(self, "cache_latents", cache_latents)
        object.__setattr__(self, "frames", frames)
        object.__setattr__(self, "compile", compile)
        object.__setattr__(self, "electricity_usd_per_kwh", electricity_usd_per_kwh)


def by_constructor(value: object) -> tuple[type, tuple[object, ...]]:
    """`__reduce__` of the classes a snapshot holds: pickled as a call of the constructor with the fields in order.

    The default sets each field after making the object, which the compiled classes (setup.py) refuse as frozen;
    this way the snapshot cache's pickles load compiled or not."""
    return type(value), tuple(getattr(value, name) for name in field_names(type(value)))


def field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names in order. (Not `__slots__`: the engine's classes compiled with mypyc have none.)"""
    return tuple(f.name for f in fields(cls))
