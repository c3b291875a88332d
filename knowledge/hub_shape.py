"""Reading a transformers config.json: the shape fields, the quantization, and the stored parameter count."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rules.types import ModelKind

# config.json keys differ by architecture; the first present key wins.
LAYERS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "decoder_layers")
HIDDEN = ("hidden_size", "n_embd", "d_model", "dim")
HEADS = ("num_attention_heads", "n_head", "num_heads", "decoder_attention_heads", "n_heads")
FFN = ("intermediate_size", "n_inner", "ffn_dim", "d_ff", "decoder_ffn_dim", "ffn_hidden_size")
CONTEXT = ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length", "max_target_positions")
EXPERTS = ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts")
KIND_BY_TYPE: dict[str, ModelKind] = {
    "whisper": "speech", "t5": "encoder-decoder", "mt5": "encoder-decoder", "umt5": "encoder-decoder",
    "bart": "encoder-decoder", "bert": "encoder", "roberta": "encoder", "xlm-roberta": "encoder",
    "deberta-v2": "encoder", "modernbert": "encoder", "distilbert": "encoder",
}
# Architectures whose MLP has two matrices (up, down) rather than a gated three (gate, up, down).
NON_GATED = frozenset({"gpt2", "gptj", "gpt_neox", "phi", "bert", "roberta", "xlm-roberta", "distilbert", "whisper", "t5",
                       "mt5", "bart", "starcoder2", "gpt_bigcode", "falcon", "bloom", "opt", "mpt"})
# Bytes-per-value packing of quantized safetensors: AWQ/GPTQ pack 4-bit values into I32, FP4 formats into U8.
PACKED_PER_ELEMENT = {("I32", 4): 8, ("I32", 8): 4, ("U8", 4): 2, ("I8", 4): 2}


@dataclass(frozen=True, slots=True)
class Shape:
    kind: ModelKind
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int  # per-expert width for MoE
    vocab: int
    tied: bool
    experts: int
    active_experts: int
    shared_experts: int
    max_context: int
    kv_lora_rank: int
    qk_rope_head_dim: int
    sliding_window: int
    sliding_layers: int
    dense_intermediate: int  # dense MLP width (MoE models' first dense layers)
    dense_layers: int
    gated: bool = True  # SwiGLU/GeGLU MLP: three matrices

    @property
    def estimated_params(self) -> float:
        """Parameters from the shape: embeddings, attention, gated MLP (or experts), per layer."""
        hd = self.head_dim or self.hidden // self.heads
        attn = self.hidden * hd * (2 * self.heads + 2 * self.kv_heads)
        embed = self.vocab * self.hidden * (1 if self.tied else 2)
        mats = 3 if self.gated else 2
        if self.experts:
            moe_layers = self.layers - self.dense_layers
            mlp = moe_layers * mats * self.hidden * self.intermediate * (self.experts + self.shared_experts)
            mlp += self.dense_layers * mats * self.hidden * self.dense_intermediate
        else:
            mlp = self.layers * mats * self.hidden * self.intermediate
        return float(embed + self.layers * attn + mlp)

    @property
    def active_fraction(self) -> float:
        """Share of parameters one token uses: 1 for dense models; routed experts count only when chosen."""
        if not self.experts:
            return 1.0
        total = self.estimated_params
        idle = (self.layers - self.dense_layers) * (3 if self.gated else 2) * self.hidden * self.intermediate * (self.experts - self.active_experts)
        return max(0.01, (total - idle) / total)


def _first(config: Mapping[str, Any], keys: tuple[str, ...], default: Any = None) -> Any:
    for key in keys:
        if config.get(key) is not None:
            return config[key]
    return default


def model_shape(config: Mapping[str, Any]) -> Shape:
    """The shape of the language part (a VLM's `text_config`, an LLM's top level)."""
    model_type = str(config.get("model_type") or "")
    text = config.get("text_config") or config.get("llm_config") or config
    kind: ModelKind = KIND_BY_TYPE.get(
        model_type, "vlm" if text is not config or "vision_config" in config else "llm")
    if model_type in ("t5", "mt5", "umt5") and "num_decoder_layers" in config:
        layers = int(config["num_layers"]) + int(config["num_decoder_layers"])
    elif kind == "speech":
        layers = int(config.get("encoder_layers", 0)) + int(config.get("decoder_layers", 0))
    else:
        layers = int(_first(text, LAYERS))
    hidden = int(_first(text, HIDDEN))
    heads = int(_first(text, HEADS))
    kv = _first(text, ("num_key_value_heads", "n_head_kv", "num_kv_heads"))
    kv_heads = 1 if kv is None and text.get("multi_query") else int(kv or heads)
    experts = int(_first(text, EXPERTS, 0) or 0)
    ffn = _first(text, ("moe_intermediate_size",) if experts else (), None) or _first(text, FFN, 4 * hidden)
    layer_types = text.get("layer_types") or []
    sliding = int(text.get("sliding_window") or 0)
    sliding_layers = sum(1 for t in layer_types if "sliding" in str(t)) if layer_types else 0
    if sliding and not layer_types and text.get("use_sliding_window", True) is not False and model_type.startswith("mistral"):
        sliding_layers = layers
    if sliding and not layer_types and model_type == "gemma2":  # Gemma 2 alternates local and global layers
        sliding_layers = layers // 2
    return Shape(
        kind=kind, layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads,
        head_dim=int(text.get("head_dim") or text.get("d_kv") or 0), intermediate=int(ffn),
        vocab=int(text.get("vocab_size") or config.get("vocab_size") or 0),
        tied=bool(text.get("tie_word_embeddings", config.get("tie_word_embeddings", True))),  # transformers' default
        experts=experts, active_experts=int(text.get("num_experts_per_tok") or text.get("moe_topk") or 0) if experts else 0,
        shared_experts=int(text.get("n_shared_experts") or 0), max_context=int(_first(text, CONTEXT, 0) or 0),
        kv_lora_rank=int(text.get("kv_lora_rank") or 0), qk_rope_head_dim=int(text.get("qk_rope_head_dim") or 0),
        sliding_window=sliding if sliding_layers else 0,
        sliding_layers=sliding_layers if sliding else 0,
        dense_intermediate=int(_first(text, FFN, 4 * hidden)), dense_layers=int(text.get("first_k_dense_replace") or 0),
        gated=_gated(model_type, config),
    )


def _gated(model_type: str, config: Mapping[str, Any]) -> bool:
    proj = config.get("feed_forward_proj")  # T5: "relu" (original) or "gated-gelu" (v1.1, Flan-T5)
    if isinstance(proj, str):
        return proj.startswith("gated")
    return model_type not in NON_GATED


def quantization_of(config: Mapping[str, Any]) -> tuple[str | None, str]:
    """(the quantization named in `quantization_config`, the dtype the weights are stored in)."""
    q = config.get("quantization_config") or (config.get("text_config") or {}).get("quantization_config")
    dtype = str(config.get("torch_dtype") or config.get("dtype") or "bfloat16")
    base = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(dtype, "bf16")
    if not isinstance(q, Mapping):
        return None, base
    method = str(q.get("quant_method") or q.get("quant_algo") or "").lower()
    bits = int(q.get("bits") or q.get("w_bit") or 0)
    if method == "fp8":
        return "fp8", "fp8"
    if method == "mxfp4":
        return "mxfp4", "mxfp4"
    if method in ("nvfp4", "modelopt") or "nvfp4" in str(q).lower():
        return "nvfp4", "nvfp4"
    if method in ("awq", "gptq", "autoround"):
        return method, "int4" if bits in (0, 4) else "int8" if bits == 8 else "int4"
    if method == "bitsandbytes":
        return "bitsandbytes", "int4" if q.get("load_in_4bit") else "int8"
    if method == "compressed-tensors":
        weights = _compressed_weights(q)
        num_bits, kind = int(weights.get("num_bits") or 8), str(weights.get("type") or "int")
        if num_bits == 4:
            return f"compressed-tensors {kind}4", "nvfp4" if kind == "float" else "int4"
        return f"compressed-tensors {kind}{num_bits}", "fp8" if kind == "float" else "int8"
    return method or None, base


def _compressed_weights(q: Mapping[str, Any]) -> Mapping[str, Any]:
    for group in (q.get("config_groups") or {}).values():
        weights = group.get("weights") if isinstance(group, Mapping) else None
        if isinstance(weights, Mapping):
            return weights
    return {}


def stored_params(params_by_dtype: Mapping[str, int], quant: str | None) -> float:
    """Parameters as stored: packed 4-bit values (AWQ/GPTQ in I32, FP4 in U8) are unpacked to their count.

    Scales and zero points are counted as they are stored (a small overcount, under 2 %).
    """
    bits = 4 if quant and ("4" in quant or quant in ("awq", "gptq", "mxfp4", "nvfp4")) else 8
    total = 0.0
    for dtype, count in params_by_dtype.items():
        total += count * PACKED_PER_ELEMENT.get((dtype.upper(), bits), 1) if quant else count
    return total
