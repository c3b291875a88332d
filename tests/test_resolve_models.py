"""Model preset resolution: names people type and Hugging Face ids, with -Instruct/-chat/-hf/-it tolerated."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.load import read_catalog
from knowledge.resolve import ModelIndex, normalise_model_name
from knowledge.snapshot import model_spec

DATA = Path(__file__).resolve().parents[1] / "knowledge" / "data"


@pytest.fixture(scope="module")
def index() -> ModelIndex:
    catalog = read_catalog(DATA)
    return ModelIndex.build({m.id: model_spec(m) for m in catalog["models"]}, catalog["model_aliases"])


@pytest.mark.parametrize(
    ("text", "model_id"),
    [
        ("llama3 8b", "llama-3-8b"),
        ("Llama 3 8B", "llama-3-8b"),
        ("meta-llama/Meta-Llama-3-8B-Instruct", "llama-3-8b"),
        ("llama-3.1-8b", "llama-3.1-8b"),
        ("meta-llama/Llama-3.1-8B", "llama-3.1-8b"),
        ("Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("unsloth/Meta-Llama-3.1-8B-bnb-4bit", "llama-3.1-8b"),
        ("llama 3.1 70b", "llama-3.1-70b"),
        ("Llama-3.1-405B", "llama-3.1-405b"),
        ("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b"),
        ("llama 3.2 3b instruct", "llama-3.2-3b"),
        ("llama3.3", "llama-3.3-70b"),
        ("qwen2.5 14b", "qwen2.5-14b"),
        ("Qwen2.5-14B-Instruct", "qwen2.5-14b"),
        ("Qwen/Qwen2.5-0.5B-Instruct", "qwen2.5-0.5b"),
        ("qwen 2.5 72b", "qwen2.5-72b"),
        ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"),
        ("qwen3 235b", "qwen3-235b-a22b"),
        ("mixtral", "mixtral-8x7b"),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
        ("Mistral-7B-Instruct-v0.3", "mistral-7b"),
        ("gemma-2-9b-it", "gemma-2-9b"),
        ("google/gemma-3-27b-it", "gemma-3-27b"),
        ("phi-4", "phi-4"),
        ("microsoft/Phi-3-mini-4k-instruct", "phi-3-mini"),
        ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),
        ("DeepSeek R1", "deepseek-r1"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek-r1-distill-qwen-7b"),
        ("tiiuae/falcon-7b-instruct", "falcon-7b"),
        ("gpt2", "gpt2"),
        ("EleutherAI/gpt-neox-20b", "gpt-neox-20b"),
        ("sdxl", "sdxl"),
        ("stabilityai/stable-diffusion-xl-base-1.0", "sdxl"),
        ("SD 1.5", "sd-1.5"),
        ("flux", "flux.1-dev"),
        ("black-forest-labs/FLUX.1-dev", "flux.1-dev"),
        ("lama 3 8b", "llama-3-8b"),  # typo, same numbers
    ],
)
def test_found(index: ModelIndex, text: str, model_id: str) -> None:
    match = index.resolve(text)
    assert (match.status, match.model_id) == ("found", model_id)


@pytest.mark.parametrize(
    ("text", "some"),
    [("llama 70b", {"llama-2-70b", "llama-3.1-70b"}), ("qwen 14b", {"qwen2.5-14b", "qwen3-14b"})],
)
def test_ambiguous(index: ModelIndex, text: str, some: set[str]) -> None:
    match = index.resolve(text)
    assert match.status == "ambiguous" and some <= set(match.candidates) and match.model_id is None


@pytest.mark.parametrize("text", ["", "13b", "qwen2.5 13b", "xyz", "🦙", "llama " * 500])
def test_none(index: ModelIndex, text: str) -> None:
    """A bare size is the parser's job; a typo may not change a size (13B is not 3B or 14B)."""
    assert index.resolve(text).status == "none"


def test_normalise_model_name() -> None:
    assert normalise_model_name("meta-llama/Llama-3.1-8B-Instruct") == "llama 3 1 8b"
    assert normalise_model_name("google/gemma-2-9b-it") == "gemma 2 9b"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_text_gets_an_answer(index: ModelIndex, text: str) -> None:
    match = index.resolve(text)
    assert match.status in {"found", "ambiguous", "none"}
    assert (match.status == "found") == (match.model_id is not None)
