"""Sizing a Hugging Face model that is not a preset, from recorded config files (no network)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowledge.hub import (
    HubFiles, HubMissing, HubNotFound, HubOffline, HubSized, HubUnavailable, HubUnreadable, size_hub_model,
    sized_from_files,
)

HUB = Path(__file__).parent / "cases" / "hub"


def recorded(name: str, counts: dict[str, int] | None = None) -> HubFiles:
    return HubFiles(json.loads((HUB / f"{name}.json").read_text(encoding="utf-8")), counts or {})


def test_dense_llama_shape_from_config():
    out = sized_from_files("meta-llama/Llama-3.1-8B", recorded("meta-llama--Llama-3.1-8B"))
    assert isinstance(out, HubSized) and out.params_from == "shape"
    m = out.model
    assert (m.layers, m.hidden_size, m.heads, m.kv_heads, m.intermediate_size, m.vocab_size) == (32, 4096, 32, 8, 14336, 128256)
    assert m.kind == "llm" and m.native_dtype == "bf16" and not m.tied_embeddings
    # the published size (8.03 B, the catalog's llama-3.1-8b row); the shape formula must land within 1 %
    assert m.params_b == pytest.approx(8.03, rel=0.01)
    assert m.source == "https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json"


def test_safetensors_counts_are_used_when_present():
    out = sized_from_files("meta-llama/Llama-3.1-8B", recorded("meta-llama--Llama-3.1-8B", {"BF16": 8_030_261_248}))
    assert isinstance(out, HubSized) and out.params_from == "safetensors"
    assert out.model.params_b == pytest.approx(8.030261248)


def test_mla_moe_fields():
    out = sized_from_files("deepseek-ai/DeepSeek-V2-Lite", recorded("deepseek-ai--DeepSeek-V2-Lite"))
    assert isinstance(out, HubSized)
    m = out.model
    assert (m.kv_lora_rank, m.qk_rope_head_dim, m.moe_experts, m.moe_active_experts) == (512, 64, 64, 6)
    assert m.intermediate_size == 1408 and m.active_params_b < m.params_b
    # 2.4 B active is the size Pai-Megatron-Patch's deepseek_v2 script names it by (A2.4B); about 16 B in total
    assert 14 < m.params_b < 17
    assert m.active_params_b == pytest.approx(2.4, rel=0.25)


def test_sliding_window_layers():
    out = sized_from_files("google/gemma-2-9b", recorded("google--gemma-2-9b"))
    assert isinstance(out, HubSized)
    assert (out.model.sliding_window, out.model.sliding_layers, out.model.head_dim) == (4096, 21, 256)


def test_qwen_moe_without_sliding_window_in_use():
    out = sized_from_files("Qwen/Qwen1.5-MoE-A2.7B", recorded("Qwen--Qwen1.5-MoE-A2.7B"))
    assert isinstance(out, HubSized)
    assert out.model.moe_experts == 60 and out.model.sliding_window == 0


@pytest.mark.parametrize(
    ("name", "quant", "dtype"),
    [
        ("constructed--Llama-3.1-8B-FP8", "fp8", "fp8"),
        ("constructed--Llama-3.1-8B-AWQ", "awq", "int4"),
        ("constructed--Llama-3.1-8B-MXFP4", "mxfp4", "mxfp4"),
        ("constructed--Llama-3.1-8B-W4A16-ct", "compressed-tensors int4", "int4"),
    ],
)
def test_quantization_config_sets_the_stored_dtype(name: str, quant: str, dtype: str):
    out = sized_from_files("someone/quantized", recorded(name))
    assert isinstance(out, HubSized) and out.quantization == quant and out.model.native_dtype == dtype


def test_packed_awq_weights_are_counted_unpacked():
    # AWQ packs eight 4-bit weights into one I32: 1e9 stored I32 values are 8e9 weights
    out = sized_from_files("someone/awq", recorded("constructed--Llama-3.1-8B-AWQ", {"I32": 1_000_000_000, "F16": 50_000_000}))
    assert isinstance(out, HubSized) and out.model.params_b == pytest.approx(8.05)


def test_unreadable_config_is_an_outcome_not_an_exception():
    out = sized_from_files("someone/odd", HubFiles({"model_type": "mystery"}))
    assert isinstance(out, HubUnreadable)


def test_offline_says_so_and_caches_nothing(engine):
    def offline(hf_id: str) -> HubFiles:
        raise HubUnavailable("HF_HUB_OFFLINE=1")

    out = size_hub_model("meta-llama/Llama-3.1-8B", engine=engine, fetch=offline)
    assert isinstance(out, HubOffline) and "OFFLINE" in out.reason


def test_missing_repo_and_bad_id(engine):
    def missing(hf_id: str) -> HubFiles:
        raise HubMissing("RepositoryNotFoundError")

    assert isinstance(size_hub_model("nobody/nothing", engine=engine, fetch=missing), HubNotFound)
    assert isinstance(size_hub_model("not an id", engine=engine, fetch=missing), HubNotFound)


def test_a_read_is_cached_in_the_database(engine):
    calls: list[str] = []

    def once(hf_id: str) -> HubFiles:
        calls.append(hf_id)
        return recorded("google--gemma-2-9b", {"BF16": 9_241_705_984})

    first = size_hub_model("google/gemma-2-9b", engine=engine, fetch=once)
    second = size_hub_model("google/gemma-2-9b", engine=engine, fetch=once)
    assert isinstance(first, HubSized) and isinstance(second, HubSized)
    assert calls == ["google/gemma-2-9b"] and second.cached and not first.cached
    assert second.model == first.model


def test_encoder_config_is_an_encoder_with_a_two_matrix_mlp():
    out = sized_from_files("Snowflake/snowflake-arctic-embed-m", recorded("Snowflake--snowflake-arctic-embed-m"))
    assert isinstance(out, HubSized) and out.model.kind == "encoder"
    # a BERT-base shape: 109.48 M parameters (github.com/KwangryeolPark/Model.Summary, bert-base-uncased)
    assert out.model.params_b == pytest.approx(0.10948, rel=0.02)


def test_gemma_ties_its_embeddings_by_default():
    out = sized_from_files("google/gemma-2-9b", recorded("google--gemma-2-9b"))
    assert isinstance(out, HubSized) and out.model.tied_embeddings
    # the published size, as in the catalog's gemma-2-9b row (9.24 B)
    assert out.model.params_b == pytest.approx(9.24, rel=0.02)
