"""Model presets across kinds, with the shape fields the engine needs (MLA, head_dim, native dtype, sliding windows)."""

from __future__ import annotations

from collections import Counter

import pytest

from knowledge.load import read_catalog
from knowledge.resolve import ModelIndex
from knowledge.snapshot import model_spec


@pytest.fixture(scope="module")
def models():
    catalog = read_catalog()
    specs = {r.id: model_spec(r) for r in catalog["models"]}
    return specs, ModelIndex.build(specs, catalog["model_aliases"])


def test_at_least_200_presets_across_every_kind(models):
    specs, _ = models
    assert len(specs) >= 200
    kinds = Counter(m.kind for m in specs.values())
    assert {"llm", "vlm", "speech", "encoder", "encoder-decoder", "embedding", "diffusion"} <= set(kinds)


def test_every_hub_preset_cites_its_config_json(models):
    specs, _ = models
    for m in specs.values():
        if m.hf_id and m.kind != "diffusion":
            assert f"https://huggingface.co/{m.hf_id}/" in m.source, m.id


@pytest.mark.parametrize("model_id", ["deepseek-v3", "deepseek-r1", "kimi-k2", "deepseek-v2", "deepseek-v2-lite", "moonlight-16b-a3b"])
def test_mla_models_carry_the_latent_width(models, model_id):
    m = models[0][model_id]
    # DeepSeek-V2/V3 and Kimi K2 cache a 512-wide latent plus a 64-wide RoPE key (their config.json)
    assert (m.kv_lora_rank, m.qk_rope_head_dim) == (512, 64)


def test_published_dtypes(models):
    specs, _ = models
    assert specs["deepseek-v3"].native_dtype == "fp8" and specs["gpt-oss-120b"].native_dtype == "mxfp4"
    assert specs["llama-3.1-8b"].native_dtype == "bf16"


def test_frontier_moe_presets(models):
    specs, _ = models
    for model_id in ("deepseek-v3", "kimi-k2", "qwen3-235b-a22b", "gpt-oss-120b", "glm-4.5"):
        m = specs[model_id]
        assert m.moe_experts > m.moe_active_experts > 0 and m.active_params_b < m.params_b / 5, model_id


def test_head_dim_and_sliding_windows(models):
    specs, _ = models
    assert specs["qwen3-32b"].attention_head_dim == 128  # 5120 / 64 would say 80
    assert specs["gemma-2-9b"].sliding_window == 4096 and specs["gemma-2-9b"].sliding_layers == 21
    assert specs["gpt-oss-20b"].sliding_window == 128 and specs["gpt-oss-20b"].sliding_layers == 12


@pytest.mark.parametrize(
    ("text", "model_id"),
    [("openai/whisper-small", "whisper-small"), ("Qwen/Qwen2.5-Coder-7B-Instruct", "qwen2.5-coder-7b"),
     ("Qwen/QwQ-32B", "qwq-32b"), ("kimi k2", "kimi-k2"), ("gpt-oss-120b", "gpt-oss-120b"), ("t5-3b", "t5-3b"),
     ("Wan-AI/Wan2.1-T2V-14B", "wan2.1-t2v-14b"), ("llava-hf/llava-1.5-7b-hf", "llava-1.5-7b"),
     ("llama 4 scout", "llama-4-scout"), ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4-scout"),
     ("mistral small 24b", "mistral-small-24b"), ("mistralai/Mistral-Small-24B-Instruct-2501", "mistral-small-24b")],
)
def test_new_presets_resolve(models, text, model_id):
    match = models[1].resolve(text)
    assert match.status == "found" and match.model_id == model_id


def test_a_family_size_still_asks(models):
    match = models[1].resolve("llama 70b")
    assert match.status == "ambiguous" and {"llama-2-70b", "llama-3.1-70b"} <= set(match.candidates)
