"""Model shapes for the memory and time model: from a preset, or a typical shape for a bare parameter count."""

from __future__ import annotations

from dataclasses import dataclass, replace

from rules.types import ModelSpec


@dataclass(frozen=True, slots=True)
class Shape:
    """The architecture numbers the estimates use. `assumed` = derived from a bare parameter count."""

    name: str
    params_b: float
    active_params_b: float
    layers: int
    hidden_size: int
    heads: int
    kv_heads: int
    intermediate_size: int
    vocab_size: int
    tied_embeddings: bool
    moe_experts: int
    moe_active_experts: int
    gated_mlp: bool
    assumed: bool
    # Attention details the KV cache depends on (ModelSpec fields of the same names; 0 = not given).
    config_head_dim: int = 0  # the config's head_dim where it is not hidden_size // heads (Gemma, Qwen3)
    kv_lora_rank: int = 0  # MLA: width of the cached compressed latent
    qk_rope_head_dim: int = 0  # MLA: decoupled RoPE key width cached beside the latent
    native_dtype: str = "bf16"  # the published weights' dtype ("fp8" for DeepSeek-V3/R1)
    sliding_window: int = 0  # tokens a sliding-window layer keeps
    sliding_layers: int = 0  # layers that use the sliding window
    max_context: int = 0  # the model's longest context (0 = unknown)

    def __init__(self, name: str, params_b: float, active_params_b: float, layers: int, hidden_size: int,
                 heads: int, kv_heads: int, intermediate_size: int, vocab_size: int, tied_embeddings: bool,
                 moe_experts: int, moe_active_experts: int, gated_mlp: bool, assumed: bool,
                 config_head_dim: int = 0, kv_lora_rank: int = 0, qk_rope_head_dim: int = 0,
                 native_dtype: str = "bf16", sliding_window: int = 0, sliding_layers: int = 0,
                 max_context: int = 0) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "params_b", params_b)
        object.__setattr__(self, "active_params_b", active_params_b)
        object.__setattr__(self, "layers", layers)
        object.__setattr__(self, "hidden_size", hidden_size)
        object.__setattr__(self, "heads", heads)
        object.__setattr__(self, "kv_heads", kv_heads)
        object.__setattr__(self, "intermediate_size", intermediate_size)
        object.__setattr__(self, "vocab_size", vocab_size)
        object.__setattr__(self, "tied_embeddings", tied_embeddings)
        object.__setattr__(self, "moe_experts", moe_experts)
        object.__setattr__(self, "moe_active_experts", moe_active_experts)
        object.__setattr__(self, "gated_mlp", gated_mlp)
        object.__setattr__(self, "assumed", assumed)
        object.__setattr__(self, "config_head_dim", config_head_dim)
        object.__setattr__(self, "kv_lora_rank", kv_lora_rank)
        object.__setattr__(self, "qk_rope_head_dim", qk_rope_head_dim)
        object.__setattr__(self, "native_dtype", native_dtype)
        object.__setattr__(self, "sliding_window", sliding_window)
        object.__setattr__(self, "sliding_layers", sliding_layers)
        object.__setattr__(self, "max_context", max_context)

    @property
    def head_dim(self) -> int:
        """hidden_size // heads, as the training estimates have always used it."""
        return self.hidden_size // self.heads

    @property
    def attention_head_dim(self) -> int:
        """The per-head width the KV cache stores: the config's head_dim where given."""
        return self.config_head_dim or self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.head_dim * self.kv_heads

    @property
    def embedding_params(self) -> float:
        """Input embedding plus (untied) output head, in parameters."""
        copies = 1 if self.tied_embeddings else 2
        return float(copies * self.vocab_size * self.hidden_size)

    @property
    def linear_params(self) -> float:
        """Parameters in the transformer blocks (what QLoRA quantises)."""
        return max(self.params_b * 1e9 - self.embedding_params, 0.3 * self.params_b * 1e9)


# Typical decoder shapes by size (Llama family configs on Hugging Face: Llama-3.2-1B/3B,
# Llama-3.1-8B/70B/405B config.json; Llama-2-13B and CodeLlama-34B config.json).
# (params_b, layers, hidden, heads, kv_heads, intermediate, vocab, tied)
_TYPICAL: tuple[tuple[float, int, int, int, int, int, int, bool], ...] = (
    (1.24, 16, 2048, 32, 8, 8192, 128256, True),
    (3.21, 28, 3072, 24, 8, 8192, 128256, True),
    (8.03, 32, 4096, 32, 8, 14336, 128256, False),
    (13.0, 40, 5120, 40, 40, 13824, 32000, False),
    (33.7, 48, 8192, 64, 8, 22016, 32000, False),
    (70.6, 80, 8192, 64, 8, 28672, 128256, False),
    (405.0, 126, 16384, 128, 8, 53248, 128256, False),
)


def shape_from_model(model: ModelSpec) -> Shape:
    """A preset's own shape."""
    return Shape(
        name=model.id,
        params_b=model.params_b,
        active_params_b=model.active_params_b or model.params_b,
        layers=model.layers,
        hidden_size=model.hidden_size,
        heads=model.heads,
        kv_heads=model.kv_heads or model.heads,
        intermediate_size=model.intermediate_size,
        vocab_size=model.vocab_size,
        tied_embeddings=model.tied_embeddings,
        moe_experts=model.moe_experts,
        moe_active_experts=model.moe_active_experts,
        gated_mlp=True,
        assumed=False,
        # getattr: catalogs built before these ModelSpec fields existed leave them at "not given".
        config_head_dim=int(getattr(model, "head_dim", 0) or 0),
        kv_lora_rank=int(getattr(model, "kv_lora_rank", 0) or 0),
        qk_rope_head_dim=int(getattr(model, "qk_rope_head_dim", 0) or 0),
        native_dtype=str(getattr(model, "native_dtype", "bf16") or "bf16"),
        sliding_window=int(getattr(model, "sliding_window", 0) or 0),
        sliding_layers=int(getattr(model, "sliding_layers", 0) or 0),
        max_context=model.max_context,
    )


def typical_shape(params_b: float) -> Shape:
    """A Llama-like dense shape for `params_b`: the nearest template, layers scaled to the count."""
    template = min(_TYPICAL, key=lambda row: abs(row[0] / params_b - 1.0) + abs(params_b / row[0] - 1.0))
    size, layers, hidden, heads, kv_heads, ffn, vocab, tied = template
    embed = (1 if tied else 2) * vocab * hidden
    per_layer = (size * 1e9 - embed) / layers
    scaled_layers = max(1, round((params_b * 1e9 - embed) / per_layer)) if params_b * 1e9 > embed else 1
    return Shape(
        name=f"typical-{params_b:g}b",
        params_b=params_b,
        active_params_b=params_b,
        layers=scaled_layers,
        hidden_size=hidden,
        heads=heads,
        kv_heads=kv_heads,
        intermediate_size=ffn,
        vocab_size=vocab,
        tied_embeddings=tied,
        moe_experts=0,
        moe_active_experts=0,
        gated_mlp=True,
        assumed=True,
    )


def with_params(shape: Shape, params_b: float) -> Shape:
    """The same shape with a corrected total parameter count (keeps layers)."""
    return replace(shape, params_b=params_b, active_params_b=min(shape.active_params_b, params_b))
