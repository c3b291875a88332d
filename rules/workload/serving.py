"""Serving and running a model: which of the two a workload is, the engine, the precisions to try, the defaults.

`running` is one user (local chat, batch inference); `serving` is an endpoint for N sequences in flight.
"""

from __future__ import annotations

from dataclasses import dataclass

from rules.workload.formats import DEFAULT_GGUF, FORMATS, KV_CACHE_DTYPES, weight_format
from rules.types import GpuSpec, Workload
from rules.workload.shapes import Shape

SERVING_METHODS = frozenset({"serving", "running"})
ENGINES = ("vllm", "sglang", "tgi", "tensorrt-llm", "llama.cpp", "ollama", "mlx", "lmstudio", "transformers",
           "exllama")
# Engines that load GGUF files and split layers between GPUs and the CPU (-ngl): llama.cpp and the apps
# built on it (Ollama, LM Studio).
GGUF_ENGINES = frozenset({"llama.cpp", "ollama", "lmstudio"})
# Engines that pre-allocate a share of the card and fill it with a paged KV cache (vLLM's design; SGLang,
# TGI and TensorRT-LLM do the same with their own fraction flags, sized here as vLLM).
PAGED_ENGINES = frozenset({"vllm", "sglang", "tgi", "tensorrt-llm"})
# Context assumed when none is given: Ollama's default context on cards under 24 GiB is 4k
# (ollama docs/context-length.mdx: "< 24 GiB VRAM: 4k context"); the answer states it and shows 32k/128k.
DEFAULT_CONTEXT_TOKENS = 4096
CONTEXT_STEPS = (4096, 32768, 131072)
# Quality-first order when the user names no precision: each step is tried only if the one before does
# not fit (DESIGN §3: answer with what fits in each, never one silent choice).
PAGED_LADDER = ("bf16", "fp8", "int8", "awq")
GGUF_LADDER = ("bf16", "gguf-q8_0", DEFAULT_GGUF)
MLX_LADDER = ("bf16", "int8", "int4")
# "4-bit" or "8-bit" asked of a GGUF engine: the GGUF level its launch line loads (plans.command), sized as such.
GGUF_FOR_BITS = {"int4": DEFAULT_GGUF, "int8": "gguf-q8_0"}
# Shown in the fit matrix beside the ladder: the levels a llama.cpp/Ollama/Apple user chooses between.
MATRIX_PRECISIONS = ("bf16", "fp8", "int8", "awq")
QUALITY_CODES = {"16bit": "quant.none", "fp8": "quant.fp8", "int8": "quant.int8", "4bit": "quant.4bit",
                 "gguf": "quant.gguf"}
NATIVE_QUALITY_CODE = "quant.native"  # the 4-bit format a model is published in (gpt-oss MXFP4): no loss against it


@dataclass(frozen=True, slots=True)
class ServingSetup:
    """A fully specified serving or running plan on one GPU type."""

    method: str  # serving | running
    engine: str
    weight_format: str  # a key of rules.memory.formats.FORMATS
    kv_cache_dtype: str
    concurrency: int  # sequences the memory is sized for
    context_tokens: int  # prompt + output per sequence
    gpus: int  # GPUs sharing the model (tensor parallel in a node, pipeline across nodes)
    full_load: bool  # no concurrency given: report as many sequences as the memory sustains

    def __init__(self, method: str, engine: str, weight_format: str, kv_cache_dtype: str, concurrency: int,
                 context_tokens: int, gpus: int, full_load: bool) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "engine", engine)
        object.__setattr__(self, "weight_format", weight_format)
        object.__setattr__(self, "kv_cache_dtype", kv_cache_dtype)
        object.__setattr__(self, "concurrency", concurrency)
        object.__setattr__(self, "context_tokens", context_tokens)
        object.__setattr__(self, "gpus", gpus)
        object.__setattr__(self, "full_load", full_load)

    @property
    def nodes(self) -> int:
        return max(1, -(-self.gpus // 8))

    @property
    def tensor_parallel(self) -> int:
        return min(self.gpus, 8)


def serving_method(workload: Workload) -> str | None:
    """"serving" or "running" for these workloads, None for training. "inference" (the legacy name) and a
    workload that names only serving inputs are running for one sequence, serving for more."""
    method = workload.method
    if method in SERVING_METHODS:
        return method
    serving_inputs = (workload.concurrency, workload.context_tokens, workload.quantization, workload.engine,
                      workload.tokens_per_s, workload.kv_cache_dtype)
    if method == "inference" or (method is None and any(v is not None for v in serving_inputs)):
        return "serving" if (workload.concurrency or 1) > 1 else "running"
    return None


def native_format(shape: Shape) -> str:
    """The published weights' format (ModelSpec.native_dtype): fp8 for DeepSeek-V3/R1, mxfp4 for gpt-oss (its
    experts; attention, embedding and head in bf16), else bf16."""
    return shape.native_dtype if shape.native_dtype in ("fp8", "mxfp4") else "bf16"


def quality_code(precision: str, shape: Shape) -> str:
    """The quality caveat of a weight format for this model: what the format costs, except a 4-bit format the
    model is published in (gpt-oss's MXFP4), which costs nothing against its own release."""
    family = weight_format(precision).family
    return NATIVE_QUALITY_CODE if family == "4bit" and precision == native_format(shape) else QUALITY_CODES[family]


# vLLM needs CUDA compute capability 7.0 or higher ("GPU: compute capability 7.0 or higher (e.g., V100, T4,
# RTX20xx, A100, L4, H100, etc.)", https://docs.vllm.ai/en/v0.14.0/getting_started/installation/gpu/), so an
# NVIDIA card before Volta (GTX 10 series, P100, P4: 6.x; M60: 5.2; K80: 3.7) is served by llama.cpp.
_BEFORE_VOLTA = ("Pascal", "Maxwell", "Kepler")


def engine_runs(engine: str, gpu: GpuSpec) -> bool:
    """Whether a paged serving engine starts on this card: not on an NVIDIA card before Volta (_BEFORE_VOLTA)."""
    return engine not in PAGED_ENGINES or not (gpu.vendor == "NVIDIA" and gpu.architecture.startswith(_BEFORE_VOLTA))


def pick_engine(workload: Workload, method: str, gpu: GpuSpec) -> str:
    """The engine named, else llama.cpp for GGUF, Apple silicon, NVIDIA cards before Volta (no vLLM) and one
    user on a desktop card, else vLLM."""
    if workload.engine in ENGINES:
        if workload.engine in PAGED_ENGINES and not engine_runs(workload.engine, gpu):
            return "llama.cpp"  # the named engine does not start on this card: said (finding engine.unsupported)
        return workload.engine
    quantization = workload.quantization or ""
    if quantization.startswith("gguf") or getattr(gpu, "unified_memory", False):
        return "llama.cpp"
    if not engine_runs("vllm", gpu):
        return "llama.cpp"
    if method == "running" and gpu.segment == "consumer":
        return "llama.cpp"
    return "vllm"


# vLLM's quantization kernels by GPU generation ("Supported Hardware" table of the vLLM docs, v0.9-v0.15,
# https://docs.vllm.ai/en/v0.9.2/features/quantization/supported_hardware.html): AWQ and INT8 (W8A8) need
# Turing (SM 7.5) or newer, GPTQ runs from Volta (SM 7.0); on AMD GPUs none of the three (FP8 only).
# FP8 runs as W8A8 where the card has FP8 units (Ada, Hopper, Blackwell, MI300) and weight-only through the
# Marlin kernels on Ampere ("Marlin (GPTQ/AWQ/FP8)": Ampere and newer), so not on Turing, Volta or MI200.
# The paged engines are sized as vLLM, so the same limits apply to them.
_BEFORE_TURING = ("Volta", "Pascal", "Maxwell", "Kepler")


def format_supported(precision: str, gpu: GpuSpec, engine: str) -> bool:
    """Whether the serving engine can run weights of this format on this GPU (GGUF/MLX engines: any)."""
    if engine not in PAGED_ENGINES:
        return True
    if precision == "fp8":
        return gpu.fp8_support or (gpu.vendor == "NVIDIA" and gpu.bf16_support)
    if precision not in ("awq", "int8", "gptq"):
        return True
    if gpu.vendor != "NVIDIA":
        return False
    return precision == "gptq" or not gpu.architecture.startswith(_BEFORE_TURING)


def _on_this_gpu(steps: tuple[str, ...], gpu: GpuSpec, engine: str) -> tuple[str, ...]:
    """The ladder's formats this GPU can run; 4-bit AWQ becomes GPTQ where only GPTQ runs (Volta), and 16-bit
    weights are FP16 on cards without BF16 units (T4, V100: vLLM `--dtype half`, the same two bytes a weight)."""
    out = []
    for step in steps:
        if step == "awq" and not format_supported("awq", gpu, engine) and format_supported("gptq", gpu, engine):
            step = "gptq"
        step = _sixteen_bit(step, gpu)
        if format_supported(step, gpu, engine):
            out.append(step)
    return tuple(out)


def _sixteen_bit(step: str, gpu: GpuSpec) -> str:
    """16-bit weights as FP16 on a card without BF16 units (T4, V100): the same two bytes a weight."""
    return "fp16" if step == "bf16" and not gpu.bf16_support else step


def fp8_allowed(gpu: GpuSpec, shape: Shape) -> bool:
    """fp8 weights on Ada/Hopper/Blackwell (GpuSpec.fp8_support); a model published in fp8 on any card with
    bf16 (vLLM runs fp8 checkpoints weight-only through its Marlin kernels on Ampere)."""
    return gpu.fp8_support or (native_format(shape) == "fp8" and gpu.bf16_support)


def ladder(workload: Workload, shape: Shape, gpu: GpuSpec, engine: str) -> tuple[str, ...]:
    """Precisions to try in order: the one asked for (16-bit as FP16 on cards without BF16 units: vLLM refuses
    bfloat16 below compute capability 8.0), else quality first for the engine."""
    if workload.quantization:
        asked = _sixteen_bit(workload.quantization, gpu)
        if engine in GGUF_ENGINES:
            return (GGUF_FOR_BITS.get(asked, asked),)
        # 4-bit AWQ asked of a card only GPTQ runs on (Volta) is sized and launched as GPTQ: the same bits a
        # weight, in the kernel the card has (a comparison of served cards asks one format of all of them)
        runs = _on_this_gpu((asked,), gpu, engine)
        if runs:
            return runs
        # a format the engine has no kernel for on this card (INT8 W8A8 on Volta, AWQ on AMD GPUs): sized in
        # what it does run, quality first, and said so (`asked_format_runs`, finding quant.unsupported)
    if engine in GGUF_ENGINES:
        steps: tuple[str, ...] = GGUF_LADDER
    elif engine == "mlx":
        steps = MLX_LADDER
    else:
        steps = PAGED_LADDER
    if native_format(shape) == "fp8":  # published in fp8: never sized (or upcast) to bf16 by default
        steps = tuple(s for s in steps if s != "bf16")
        if engine not in GGUF_ENGINES and "fp8" not in steps:
            steps = ("fp8", *steps)
    elif native_format(shape) == "mxfp4":  # published in 4-bit MXFP4: served as published (vLLM, and the
        steps = ("mxfp4",)                 # MXFP4 GGUF of llama.cpp), never upcast or re-quantised by default
    allowed = tuple(s for s in steps if s != "fp8" or fp8_allowed(gpu, shape))
    return _on_this_gpu(allowed, gpu, engine) or allowed[:1]


def asked_format_runs(workload: Workload, gpu: GpuSpec, engine: str) -> bool:
    """Whether the engine runs the precision the user asked for on this GPU (as `ladder` sizes it: AWQ as GPTQ
    on Volta, 16-bit as FP16); True when none was asked or the engine reads GGUF."""
    if not workload.quantization or engine in GGUF_ENGINES:
        return True
    return bool(_on_this_gpu((_sixteen_bit(workload.quantization, gpu),), gpu, engine))


def matrix_precisions(shape: Shape, gpu: GpuSpec, engine: str) -> tuple[str, ...]:
    """The fit matrix: bf16, fp8 where allowed, int8, 4-bit, and the GGUF levels for llama.cpp engines."""
    out = list(_on_this_gpu(tuple(p for p in MATRIX_PRECISIONS if p != "fp8" or fp8_allowed(gpu, shape)),
                            gpu, engine))
    if engine in GGUF_ENGINES:
        out += ["gguf-q8_0", DEFAULT_GGUF]
    if native_format(shape) == "mxfp4":  # the published format, beside what else it could be turned into
        out.append("mxfp4")
    return tuple(out)


def kv_cache_dtype(workload: Workload, weight_format: str, engine: str) -> str:
    """The KV dtype asked for; else the model's 16-bit dtype (vLLM --kv-cache-dtype auto) or llama.cpp's f16
    (-ctk/-ctv default f16; Ollama's OLLAMA_KV_CACHE_TYPE default f16)."""
    if workload.kv_cache_dtype in KV_CACHE_DTYPES:
        return workload.kv_cache_dtype
    return "fp16" if weight_format == "fp16" or engine in GGUF_ENGINES else "bf16"


def context_tokens(workload: Workload, shape_max_context: int) -> int:
    """The context asked for, else the stated default; never above the model's own maximum (vLLM refuses a
    --max-model-len over the config's max_position_embeddings: the verdict says it was capped)."""
    if workload.context_tokens:
        return min(workload.context_tokens, shape_max_context) if shape_max_context else workload.context_tokens
    return min(DEFAULT_CONTEXT_TOKENS, shape_max_context) if shape_max_context else DEFAULT_CONTEXT_TOKENS


def resolve_serving(workload: Workload, *, method: str, engine: str, weight_format: str, gpus: int,
                    max_context: int) -> ServingSetup:
    """Every missing serving input gets its stated default."""
    fmt = weight_format if weight_format in FORMATS or weight_format == "gguf" else "bf16"
    concurrency = workload.concurrency or 1
    return ServingSetup(
        method=method, engine=engine, weight_format=DEFAULT_GGUF if fmt == "gguf" else fmt,
        kv_cache_dtype=kv_cache_dtype(workload, fmt, engine), concurrency=concurrency,
        context_tokens=context_tokens(workload, max_context), gpus=gpus,
        full_load=method == "serving" and workload.concurrency is None,
    )
