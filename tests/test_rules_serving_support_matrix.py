"""Which weight formats the serving engine can run on which GPU, and what a paged engine says when it does not fit.

Expected values are the vLLM docs' quantization support table (Supported Hardware, v0.9.2-v0.15): AWQ and
INT8 (W8A8) need Turing (SM 7.5) or newer, GPTQ runs from Volta (SM 7.0), AMD GPUs run none of the three.
"""

from __future__ import annotations

from test_rules_support import catalog_gpus

from rules.workload.serving import format_supported, ladder
from rules.types import Workload
from rules.workload.shapes import shape_from_model
from test_rules_serving_support import catalog_model

GPUS = catalog_gpus()


def test_vllm_kernels_by_generation() -> None:
    v100, t4, a100, mi300x = GPUS["v100-16gb"], GPUS["t4"], GPUS["a100-sxm-80gb"], GPUS["mi300x"]
    assert not format_supported("awq", v100, "vllm") and format_supported("gptq", v100, "vllm")
    assert not format_supported("int8", v100, "vllm")
    assert format_supported("awq", t4, "vllm") and format_supported("int8", t4, "vllm")
    assert format_supported("awq", a100, "vllm")
    assert not any(format_supported(f, mi300x, "vllm") for f in ("awq", "gptq", "int8"))
    assert format_supported("awq", v100, "llama.cpp")  # the limits are vLLM's, not llama.cpp's


def test_the_ladder_offers_what_the_card_runs() -> None:
    shape = shape_from_model(catalog_model("llama-3-8b"))
    serving = Workload(method="serving", concurrency=10)
    # Volta and Turing have no BF16 units (BF16 tensor cores arrive with Ampere, SM 8.0): 16-bit is FP16 there
    assert ladder(serving, shape, GPUS["v100-16gb"], "vllm") == ("fp16", "gptq")
    assert ladder(serving, shape, GPUS["t4"], "vllm") == ("fp16", "int8", "awq")
    assert ladder(serving, shape, GPUS["a100-sxm-80gb"], "vllm")[0] == "bf16"
    assert "awq" not in ladder(serving, shape, GPUS["mi300x"], "vllm")


def test_bf16_asked_on_a_card_without_bf16_units_is_fp16() -> None:
    """vLLM refuses bfloat16 below compute capability 8.0 ('Bfloat16 is only supported on GPUs with compute
    capability of at least 8.0'); FP16 stores the same two bytes a weight."""
    shape = shape_from_model(catalog_model("llama-3-8b"))
    asked = Workload(method="serving", concurrency=10, quantization="bf16")
    assert ladder(asked, shape, GPUS["t4"], "vllm") == ("fp16",)
    assert ladder(asked, shape, GPUS["a100-sxm-80gb"], "vllm") == ("bf16",)
