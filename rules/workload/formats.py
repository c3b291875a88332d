"""Storage formats of served weights and KV caches: bits per weight (scales included) and what stays 16-bit.

Every number is the format's own layout or a file size its tool publishes; the sources are next to each one.
"""

from __future__ import annotations

from dataclasses import dataclass

WEIGHT_FORMATS = ("bf16", "fp16", "fp8", "int8", "int4", "nf4", "awq", "gptq", "exl2", "mxfp4", "nvfp4",
                  "gguf", "gguf-q2_k", "gguf-q3_k_m", "gguf-q4_0", "gguf-q4_k_m", "gguf-q5_k_m", "gguf-q6_k",
                  "gguf-q8_0")
KV_CACHE_DTYPES = ("fp16", "bf16", "fp8", "q8_0", "q4_0")
# "gguf" without a level is Q4_K_M: the level Ollama's library tags and llama.cpp's quantize README use
# as the example (tools/quantize/README.md: "quantize the model to 4-bits (using Q4_K_M method)").
DEFAULT_GGUF = "gguf-q4_k_m"
# AWQ / GPTQ group size: AutoAWQ's default quant_config {"w_bit": 4, "q_group_size": 128, "zero_point": True}
# (casper-hansen/AutoAWQ README) and GPTQ's usual group_size=128 (AutoGPTQ BaseQuantizeConfig examples).
INT4_GROUP = 128


@dataclass(frozen=True, slots=True)
class WeightFormat:
    """Bits per weight of the quantised tensors; `whole_model`: the bits apply to every tensor (GGUF file
    sizes already include embeddings and output at their own types), else embeddings and the LM head stay
    at 16 bits, as AWQ/GPTQ/bitsandbytes/vLLM fp8 leave them."""

    name: str
    bits: float
    whole_model: bool
    family: str  # "16bit", "fp8", "int8", "4bit", "gguf": the quality caveat it carries
    quantised: bool = True
    head_bits: float = 16.0  # the (untied) LM head's bits when not whole_model


def _group_bits(group: int, scale_bits: float, zero_bits: float) -> float:
    """Overhead of one scale (+ zero point) per group of weights."""
    return (scale_bits + zero_bits) / group


def _gguf_bpw(gib_llama3_8b: float) -> float:
    """Bits per weight from llama.cpp's published file size of Llama-3-8B (8.03e9 parameters) in GiB."""
    return gib_llama3_8b * 2**30 * 8 / 8.03e9


# GGUF: bits per weight of the whole file for Llama-3.1-8B, from llama.cpp tools/quantize/README.md
# ("Quant Type | bits/weight" table: Q2_K 3.1593, Q4_K_M 4.8944, Q5_K_M 5.7036, Q6_K 6.5633, Q8_0 8.5008).
# Q4_0 and Q3_K_M are not in that table: tools/quantize/quantize.cpp QUANT_OPTIONS prints their Llama-3-8B
# sizes (Q4_0 "4.34G", Q3_K_M "3.74G", in GiB like the README's column: its Q4_K_M is 4.58 in both).
# The block layouts in ggml-common.h agree (block_q8_0: fp16 scale + 32 int8 = 34 B / 32 = 8.5 bits;
# block_q4_0: 18 B / 32 = 4.5 bits; the K-quant mixes keep some tensors at Q6_K).
_GGUF_BITS = {
    "gguf-q2_k": 3.1593, "gguf-q3_k_m": round(_gguf_bpw(3.74), 4), "gguf-q4_0": round(_gguf_bpw(4.34), 4),
    "gguf-q4_k_m": 4.8944, "gguf-q5_k_m": 5.7036, "gguf-q6_k": 6.5633, "gguf-q8_0": 8.5008,
}

FORMATS: dict[str, WeightFormat] = {
    "bf16": WeightFormat("bf16", 16.0, True, "16bit", quantised=False),
    "fp16": WeightFormat("fp16", 16.0, True, "16bit", quantised=False),
    # vLLM fp8 (Fp8LinearMethod): e4m3 weights with one fp32 scale per tensor or per output channel (a few
    # bytes per row: negligible); vLLM's Fp8Config quantises linear layers only, the embedding and the LM head
    # stay 16-bit. DeepSeek-V3's published fp8 uses 128x128 blocks, one fp32 scale each: 32 / 16384 bits.
    "fp8": WeightFormat("fp8", 8.0 + 32 / (128 * 128), False, "fp8"),
    # int8 weight-only / W8A8 (LLM.int8, compressed-tensors): 1 byte + one fp32 scale per output row of 4096+.
    "int8": WeightFormat("int8", 8.0 + 32 / 4096, False, "int8"),
    # AWQ and GPTQ 4-bit at group 128: fp16 scale + a 4-bit packed zero point per group (AutoAWQ qzeros,
    # GPTQ qzeros are int32 holding 8 zeros each): 4 + 20/128 = 4.156 bits; the LM head is not quantised.
    "awq": WeightFormat("awq", 4.0 + _group_bits(INT4_GROUP, 16, 4), False, "4bit"),
    "gptq": WeightFormat("gptq", 4.0 + _group_bits(INT4_GROUP, 16, 4), False, "4bit"),
    "int4": WeightFormat("int4", 4.0 + _group_bits(INT4_GROUP, 16, 4), False, "4bit"),
    # bitsandbytes NF4 with double quantisation: 4 bits + an 8-bit absmax per 64 + an fp32 per 256 absmax
    # (Dettmers et al. 2023, QLoRA §3): 4.127 bits.
    "nf4": WeightFormat("nf4", 4.0 + 8 / 64 + 32 / (64 * 256), False, "4bit"),
    # ExLlamaV2 EXL2: the bitrate is the converter's -b (bits per weight, scales included) chosen by whoever
    # converts; 4.0 is taken as the 4-bit level; the head is converted at 6 bits (exllamav2 convert.py:
    # "-hb/--head_bits ... default: 6").
    "exl2": WeightFormat("exl2", 4.0, False, "4bit", head_bits=6.0),
    # OCP Microscaling MXFP4 (MX spec v1.0 §5): 32 e2m1 values share one e8m0 scale: 4 + 8/32 = 4.25 bits.
    "mxfp4": WeightFormat("mxfp4", 4.0 + 8 / 32, False, "4bit"),
    # NVFP4: 16 e2m1 values share one fp8 e4m3 scale, plus one fp32 per tensor: 4 + 8/16 = 4.5 bits
    # (NVIDIA Technical Blog, "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference", 2025).
    "nvfp4": WeightFormat("nvfp4", 4.0 + 8 / 16, False, "4bit"),
    **{name: WeightFormat(name, bits, True, "gguf") for name, bits in _GGUF_BITS.items()},
}

# KV cache bytes per element: fp16/bf16 2; vLLM fp8 (e4m3/e5m2) 1 with per-tensor scales; llama.cpp q8_0 and
# q4_0 blocks of 32 with an fp16 scale (ggml-common.h: block_q8_0 34 B, block_q4_0 18 B per 32 values).
KV_BYTES = {"fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "q8_0": 34 / 32, "q4_0": 18 / 32}


def weight_format(name: str) -> WeightFormat:
    """The format for a name; "gguf" alone is its default level."""
    return FORMATS[DEFAULT_GGUF if name == "gguf" else name]


def weight_bytes(params: float, embed_params: float, head_params: float, fmt: WeightFormat) -> float:
    """Bytes of `params` weights, of which `embed_params` are the input embedding and `head_params` the untied
    LM head (0 when tied): the embedding stays 16-bit and the head at the format's head bits."""
    if fmt.whole_model:
        return params * fmt.bits / 8
    body = max(params - embed_params - head_params, 0.0)
    return body * fmt.bits / 8 + embed_params * 2.0 + head_params * fmt.head_bits / 8
