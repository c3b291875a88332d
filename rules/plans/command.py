"""A launch line for the chosen serving setup, with the flags that make the verdict true.

Flags as the engines define them:
- vLLM (`vllm serve`, vllm/engine/arg_utils.py EngineArgs): --tensor-parallel-size, --pipeline-parallel-size,
  --data-parallel-size (copies of the model in one server; docs.vllm.ai serving/data_parallel_deployment),
  --max-model-len, --max-num-seqs, --gpu-memory-utilization, --kv-cache-dtype (CacheDType: "fp8"),
  --quantization (QUANTIZATION_METHODS: "fp8", "awq", "gptq", "bitsandbytes"), --dtype ("half").
- SGLang (`python -m sglang.launch_server`, sglang server_args): --model-path, --tp-size, --dp-size, --context-length,
  --max-running-requests, --mem-fraction-static, --kv-cache-dtype fp8_e4m3, --quantization.
- llama.cpp (`llama-server`, common/arg.cpp): -m, -ngl (layers on the GPU), -c (context of all slots
  together: each of the --parallel slots gets c / parallel), --parallel, -ctk/-ctv (cache type). Flash
  attention, which a quantised V cache needs, is on by default ("-fa auto" resolves to on).
- Ollama (docs/faq.mdx): OLLAMA_NUM_PARALLEL (default 1), OLLAMA_CONTEXT_LENGTH (per request: memory
  scales with both), OLLAMA_KV_CACHE_TYPE (f16, q8_0, q4_0; needs OLLAMA_FLASH_ATTENTION=1).
- MLX (`mlx_lm.server --model REPO`): quantised weights come from a converted repository
  (mlx-community/<model>-4bit, -8bit).
"""

from __future__ import annotations

from rules.market.offers import GPUS_PER_NODE
from rules.plans.serving import ServingPlan
from rules.verdict import Command, Finding
from rules.workload.serving import ServingSetup
from rules.workload.shapes import Shape

# --quantization for a 16-bit checkpoint quantised as it loads (fp8, bitsandbytes NF4), or the method of a
# pre-quantised checkpoint (AWQ, GPTQ; vLLM also detects these from the checkpoint's config).
VLLM_QUANTIZATION = {"fp8": "fp8", "awq": "awq", "gptq": "gptq", "int4": "awq", "nf4": "bitsandbytes"}
SGLANG_QUANTIZATION = {"fp8": "fp8", "awq": "awq", "gptq": "gptq", "int4": "awq"}
# Formats that need a checkpoint published in that format (nobody quantises them at load time).
PREQUANTISED = frozenset({"awq", "gptq", "int4", "int8", "exl2", "mxfp4", "nvfp4"})
GGUF_TYPES = {"bf16": "BF16", "fp16": "F16", "gguf-q2_k": "Q2_K", "gguf-q3_k_m": "Q3_K_M", "gguf-q4_0": "Q4_0",
              "gguf-q4_k_m": "Q4_K_M", "gguf-q5_k_m": "Q5_K_M", "gguf-q6_k": "Q6_K", "gguf-q8_0": "Q8_0",
              "mxfp4": "MXFP4"}  # gpt-oss's own GGUF keeps its MXFP4 experts (ggml-org/gpt-oss-*-GGUF)
LLAMA_CPP_CACHE_TYPES = ("q8_0", "q4_0")
ALL_LAYERS = 999  # -ngl above the layer count: every layer on the GPU(s)
GPU_MEMORY_UTILIZATION_FLAG = "0.90"  # rules.memory.serving.GPU_MEMORY_UTILIZATION, as the flag prints it


def model_name(shape: Shape, hf_id: str | None) -> str:
    return hf_id or shape.name


def _sequences(plan: ServingPlan) -> int:
    setup = plan.setup
    return max(plan.sustained, 1) if setup.full_load else setup.concurrency


def copies_per_server(plan: ServingPlan) -> int:
    """Copies of the setup one server runs: as many as fit in a node (the rest run as more servers)."""
    return min(plan.replicas, max(GPUS_PER_NODE // plan.setup.gpus, 1))


def _vllm(plan: ServingPlan, model: str, native_fp8: bool) -> list[str]:
    setup = plan.setup
    argv = ["vllm", "serve", model, "--tensor-parallel-size", str(setup.tensor_parallel)]
    if plan.replicas > 1:  # vLLM docs, serving/data_parallel_deployment: --data-parallel-size copies in one server
        argv += ["--data-parallel-size", str(copies_per_server(plan))]
    if setup.nodes > 1:
        argv += ["--pipeline-parallel-size", str(setup.nodes)]
    argv += ["--max-model-len", str(setup.context_tokens), "--max-num-seqs", str(_sequences(plan)),
             "--gpu-memory-utilization", GPU_MEMORY_UTILIZATION_FLAG]
    if setup.kv_cache_dtype == "fp8":
        argv += ["--kv-cache-dtype", "fp8"]
    method = VLLM_QUANTIZATION.get(setup.weight_format)
    if method and not (method == "fp8" and native_fp8):
        argv += ["--quantization", method]
    if not plan.gpu.bf16_support:
        argv += ["--dtype", "half"]  # V100/T4: no bf16 units
    return argv


def _sglang(plan: ServingPlan, model: str, native_fp8: bool) -> list[str]:
    setup = plan.setup
    argv = ["python", "-m", "sglang.launch_server", "--model-path", model, "--tp-size", str(setup.tensor_parallel),
            "--context-length", str(setup.context_tokens), "--max-running-requests", str(_sequences(plan)),
            "--mem-fraction-static", GPU_MEMORY_UTILIZATION_FLAG]
    if plan.replicas > 1:  # sglang server_args: --dp-size, data-parallel copies behind its router
        argv += ["--dp-size", str(copies_per_server(plan))]
    if setup.kv_cache_dtype == "fp8":
        argv += ["--kv-cache-dtype", "fp8_e4m3"]
    method = SGLANG_QUANTIZATION.get(setup.weight_format)
    if method and not (method == "fp8" and native_fp8):
        argv += ["--quantization", method]
    return argv


def gguf_file(model: str, setup: ServingSetup) -> str:
    return f"{model.split('/')[-1]}-{GGUF_TYPES.get(setup.weight_format, 'Q4_K_M')}.gguf"


def gpu_layers(plan: ServingPlan, shape: Shape) -> int:
    """-ngl: all layers when the plan fits, else the share of the layers the usable memory holds."""
    if plan.fits:
        return ALL_LAYERS
    return max(0, int(shape.layers * plan.has_gib / max(plan.needed_gib, 1e-9)))


def _llama_cpp(plan: ServingPlan, model: str, shape: Shape) -> list[str]:
    setup = plan.setup
    slots = _sequences(plan)
    argv = ["llama-server", "-m", gguf_file(model, setup), "-ngl", str(gpu_layers(plan, shape)),
            "-c", str(setup.context_tokens * slots), "--parallel", str(slots)]
    if setup.kv_cache_dtype in LLAMA_CPP_CACHE_TYPES:
        argv += ["-ctk", setup.kv_cache_dtype, "-ctv", setup.kv_cache_dtype]
    return argv


def _ollama(plan: ServingPlan) -> tuple[list[str], list[tuple[str, str]]]:
    setup = plan.setup
    env = [("OLLAMA_NUM_PARALLEL", str(_sequences(plan))), ("OLLAMA_CONTEXT_LENGTH", str(setup.context_tokens))]
    if setup.kv_cache_dtype in LLAMA_CPP_CACHE_TYPES:
        env += [("OLLAMA_FLASH_ATTENTION", "1"), ("OLLAMA_KV_CACHE_TYPE", setup.kv_cache_dtype)]
    return ["ollama", "serve"], env


def _mlx(plan: ServingPlan, model: str) -> list[str]:
    suffix = {"int4": "-4bit", "int8": "-8bit"}.get(plan.setup.weight_format)
    repo = f"mlx-community/{model.split('/')[-1]}{suffix}" if suffix else model
    return ["mlx_lm.server", "--model", repo]


def build_command(plan: ServingPlan, shape: Shape, hf_id: str | None) -> tuple[Command | None, list[Finding]]:
    """The launch line for `plan`, and what it rests on (a checkpoint published in the format)."""
    setup, model = plan.setup, model_name(shape, hf_id)
    native_fp8 = shape.native_dtype == "fp8"
    findings: list[Finding] = []
    published = shape.native_dtype == setup.weight_format  # the model's own checkpoint is in this format
    if setup.weight_format in PREQUANTISED and setup.engine not in ("mlx",) and not published:
        findings.append(Finding("command.quantized_checkpoint", "info",
                                {"precision": setup.weight_format, "engine": setup.engine}))
    env: list[tuple[str, str]] = []
    if setup.engine == "vllm":
        argv = _vllm(plan, model, native_fp8)
    elif setup.engine == "sglang":
        argv = _sglang(plan, model, native_fp8)
    elif setup.engine == "llama.cpp":
        argv = _llama_cpp(plan, model, shape)
    elif setup.engine == "ollama":
        argv, env = _ollama(plan)
    elif setup.engine == "mlx":
        argv = _mlx(plan, model)
    else:
        return None, [Finding("command.not_available", "info", {"engine": setup.engine})]
    return Command(setup.engine, tuple(argv), tuple(env), plan.gpu.id, plan.total_gpus), findings
