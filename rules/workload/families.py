"""Vocabulary of a model family, for a model sized from a bare parameter count: logits scale with it.

A typical Llama-like shape (rules.workload.shapes) has Llama's vocabulary (128,256 or 32,000); a Qwen model
of the same size has 151,936 entries, a Gemma one 256,000, and the loss memory (batch x sequence x
vocabulary x bytes per logit) follows. Values from each family's config.json on Hugging Face
(`vocab_size`, `tie_word_embeddings`).
"""

from __future__ import annotations

from dataclasses import replace

from rules.workload.shapes import Shape

# family -> (vocab_size, tied embeddings); config.json of the named model.
FAMILY_VOCAB: dict[str, tuple[int, bool]] = {
    "llama": (128256, False),  # meta-llama/Llama-3.1-8B
    "llama2": (32000, False),  # meta-llama/Llama-2-7b-hf
    "qwen": (151936, False),  # Qwen/Qwen2.5-14B, Qwen/Qwen-7B (Qwen-1), Qwen/Qwen3-8B
    "mistral": (32768, False),  # mistralai/Mistral-7B-v0.3
    "mixtral": (32000, False),  # mistralai/Mixtral-8x7B-v0.1
    "gemma": (256000, True),  # google/gemma-2-9b
    "phi": (100352, False),  # microsoft/phi-4
    "deepseek": (102400, False),  # deepseek-ai/DeepSeek-V2-Lite, deepseek-llm-7b-base
    "falcon": (65024, False),  # tiiuae/falcon-7b
    "gpt-neox": (50432, False),  # EleutherAI/gpt-neox-20b
    "gpt2": (50257, True),  # openai-community/gpt2
}
_ALIASES = {"qwen2": "qwen", "qwen2.5": "qwen", "qwen3": "qwen", "qwen1": "qwen", "gemma2": "gemma",
            "gemma3": "gemma", "llama3": "llama", "llama-3": "llama", "llama 3": "llama", "phi4": "phi",
            "neox": "gpt-neox", "pythia": "gpt-neox"}


def with_family_vocab(shape: Shape, family: str | None) -> Shape:
    """The typical shape with the family's vocabulary; the block count is re-derived so the total stays."""
    key = (family or "").strip().lower()
    key = _ALIASES.get(key, key)
    if key not in FAMILY_VOCAB or not shape.assumed:
        return shape
    vocab, tied = FAMILY_VOCAB[key]
    per_layer = max(shape.params_b * 1e9 - shape.embedding_params, 0.0) / max(shape.layers, 1)
    updated = replace(shape, vocab_size=vocab, tied_embeddings=tied)
    if per_layer > 0:
        layers = round((shape.params_b * 1e9 - updated.embedding_params) / per_layer)
        updated = replace(updated, layers=max(1, layers))
    return updated
