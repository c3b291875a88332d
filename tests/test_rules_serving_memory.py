"""Serving memory: weights by format, KV cache (GQA, MLA, sliding window, TP replication), engine workspace.

Every expected value is hand arithmetic from a model's config.json or a published measurement, written here.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rules.memory.parts import GIB
from rules.memory.serving import (
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    limit_gib,
    model_weight_bytes,
    serving_memory,
    sustained_sequences,
    to_serving_estimate,
)
from rules.workload.serving import ServingSetup
from rules.workload.shapes import shape_from_model
from test_rules_serving_support import catalog_model
from test_rules_support import catalog_gpus

GPUS = catalog_gpus()
LLAMA_70B = shape_from_model(catalog_model("llama-3.1-70b"))
LLAMA_8B = shape_from_model(catalog_model("llama-3.1-8b"))


def setup(engine="vllm", fmt="bf16", kv="bf16", concurrency=1, context=4096, gpus=1, full_load=False):
    return ServingSetup("serving", engine, fmt, kv, concurrency, context, gpus, full_load)


def test_llama_70b_bf16_weights():
    """70.55e9 parameters x 2 B = 141.1e9 B = 131.4 GiB (issue 14)."""
    assert model_weight_bytes(LLAMA_70B, "bf16") / GIB == pytest.approx(141.1e9 / 2**30, rel=1e-6)
    assert model_weight_bytes(LLAMA_70B, "bf16") / GIB == pytest.approx(131.4, abs=0.05)


def test_llama_70b_kv_for_100_users_at_8k():
    """2 x 80 layers x 8 KV heads x 128 x 2 B = 327,680 B/token; 100 x 8192 tokens = 250 GiB."""
    assert kv_bytes_per_token(LLAMA_70B, "bf16") == 327_680
    per_seq = kv_bytes_per_sequence(LLAMA_70B, setup(context=8192))
    assert 100 * per_seq / GIB == pytest.approx(250.0)


def test_kv_cache_is_gqa_aware():
    """Llama-3.1-8B: 32 layers x 8 KV heads x 128 dims x 2 (K,V) x 2 B = 128 KiB per token."""
    assert kv_bytes_per_sequence(LLAMA_8B, setup(context=8192)) == 128 * 1024 * 8192


def test_fp8_kv_halves_the_cache():
    assert kv_bytes_per_token(LLAMA_8B, "fp8") == 64 * 1024
    assert kv_bytes_per_token(LLAMA_8B, "q8_0") == 32 * 2 * 8 * 128 * 34 / 32  # ggml block_q8_0: 34 B / 32


def test_vllm_kv_blocks_match_its_log():
    """vLLM issue #10517 (RTX 3090, Llama-3.1-8B): 1952 blocks x 16 tokens x 131,072 B = 3.81 GiB of KV."""
    assert 1952 * 16 * kv_bytes_per_token(LLAMA_8B, "bf16") / GIB == pytest.approx(3.81, abs=0.005)


def test_mla_caches_the_latent():
    """DeepSeek-V3 config: kv_lora_rank 512 + qk_rope_head_dim 64 per layer, 61 layers, 2 B:
    61 x 576 x 2 = 70,272 B/token, not 2 x 61 x 128 heads x 128 x 2 = 3,997,696."""
    deepseek = replace(LLAMA_70B, layers=61, heads=128, kv_heads=128, hidden_size=7168, config_head_dim=128,
                       kv_lora_rank=512, qk_rope_head_dim=64)
    assert kv_bytes_per_token(deepseek, "bf16") == 70_272
    # Every TP rank keeps the whole latent (vLLM get_num_kv_heads: MLA -> 1 head).
    assert kv_bytes_per_sequence(deepseek, setup(gpus=8, context=1000)) == 70_272 * 1000


def test_kv_heads_are_replicated_when_tp_exceeds_them():
    """Qwen2.5-0.5B (24 layers, 2 KV heads x 64) at TP 4 keeps one whole head per rank:
    24 x 2 x 1 x 64 x 2 B = 6,144 B per token per GPU (vLLM get_num_kv_heads: max(1, 2 // 4))."""
    qwen = replace(LLAMA_8B, layers=24, hidden_size=896, heads=14, kv_heads=2, config_head_dim=64)
    assert kv_bytes_per_sequence(qwen, setup(gpus=4, context=1)) == 6_144


def test_sliding_window_layers_cap_at_the_window():
    """Gemma 2: 13 of 26 layers slide over 4096 tokens; at 8192 tokens the cache holds
    13 x 8192 + 13 x 4096 layer-tokens, i.e. 3/4 of a full cache."""
    gemma = replace(LLAMA_8B, layers=26, kv_heads=4, config_head_dim=256, sliding_window=4096, sliding_layers=13)
    full = kv_bytes_per_token(gemma, "bf16") * 8192
    assert kv_bytes_per_sequence(gemma, setup(context=8192)) == pytest.approx(0.75 * full)


@pytest.mark.parametrize(("fmt", "published_gib"), [
    ("gguf-q4_k_m", 39.6), ("gguf-q5_k_m", 46.52), ("gguf-q6_k", 53.91), ("gguf-q8_0", 69.83), ("bf16", 131.43)])
def test_gguf_sizes_match_published_llama3_70b_files(fmt, published_gib):
    """Meta-Llama-3-70B GGUF sizes (XiongjieDai/GPU-Benchmarks-on-LLM-Inference README, perplexity table
    credited to dranger003), within 2 %: the bits per weight are llama.cpp's for the 8B, whose 16-bit-sized
    embeddings weigh more in the whole (Q4_K_M comes out 1.6 % high on the 70B)."""
    assert model_weight_bytes(LLAMA_70B, fmt) / GIB == pytest.approx(published_gib, rel=0.02)


def test_gguf_q4_k_m_8b_file():
    """bartowski/Meta-Llama-3.1-8B-Instruct-GGUF Q4_K_M: 4.92 GB."""
    assert model_weight_bytes(LLAMA_8B, "gguf-q4_k_m") / 1e9 == pytest.approx(4.92, rel=0.01)


def test_awq_keeps_embeddings_and_head_in_16_bit():
    """70B AWQ, group 128: body 68,448,653,696 params x (4 + 20/128)/8 B + 2 x 1,050,673,152 x 2 B
    = 35,561,... + 4,202,692,608 = 39.76e9 B = 37.0 GiB."""
    embed = 128_256 * 8192
    body = 70.55e9 - 2 * embed
    expected = body * (4 + 20 / 128) / 8 + 2 * embed * 2
    assert model_weight_bytes(LLAMA_70B, "awq") == pytest.approx(expected)
    assert expected / GIB == pytest.approx(37.0, abs=0.1)


def test_vllm_activation_peak_matches_its_profile():
    """vLLM PR #10511: Llama-3-8B on H100, 'PyTorch activation peak memory 1.26GiB' (8192 batched tokens,
    256 sampled rows): 8192 x 2 B x (4 x 4096 + 4096 + 2 x 1024 + 3 x 14336) + 256 x 128,256 x 8 B."""
    memory = serving_memory(LLAMA_8B, setup(concurrency=256), large=True, unified=False)
    assert memory.activations / GIB == pytest.approx(1.26, rel=0.03)


def test_70b_in_4bit_needs_about_40_gib_so_one_4090_does_not_fit():
    """Issue 14: "even 4-bit needs ~40 GiB"; one 24 GB card holds at most 24 x 0.95 GiB with llama.cpp."""
    memory = serving_memory(LLAMA_70B, setup(engine="llama.cpp", fmt="gguf-q4_k_m", kv="fp16"), large=False,
                            unified=False)
    needed = memory.needed(1) / GIB
    assert 40 <= needed <= 43  # 40.2 GiB of Q4_K_M weights + 1.25 GiB of KV at 4k + buffers
    assert needed > limit_gib(GPUS["rtx-4090"], "llama.cpp", 0.05)
    assert needed / 2 < limit_gib(GPUS["rtx-4090"], "llama.cpp", 0.05)  # two 24 GB cards, layers split


def test_llama3_8b_fp16_fills_a_t4():
    """16.06e9 B = 14.96 GiB of fp16 weights on a 16 GB T4: vLLM may claim 0.9 x 16 = 14.4 GiB."""
    memory = serving_memory(LLAMA_8B, setup(fmt="fp16", kv="fp16"), large=False, unified=False)
    assert memory.weights / GIB == pytest.approx(14.96, abs=0.01)
    assert sustained_sequences(memory, limit_gib(GPUS["t4"], "vllm", 0.05)) == 0
    int8 = serving_memory(LLAMA_8B, setup(fmt="int8", kv="fp16"), large=False, unified=False)
    assert sustained_sequences(int8, limit_gib(GPUS["t4"], "vllm", 0.05)) >= 1


def test_breakdown_has_kv_cache_and_sums_to_the_need():
    memory = serving_memory(LLAMA_8B, setup(concurrency=4), large=False, unified=False)
    estimate = to_serving_estimate(memory, setup(concurrency=4), 4)
    assert estimate.breakdown["kv_cache"] == pytest.approx(4 * 4096 * 128 * 1024 / GIB, abs=1e-3)
    assert sum(estimate.breakdown.values()) == pytest.approx(estimate.per_gpu_gib, abs=0.01)
    assert estimate.low_gib < estimate.per_gpu_gib < estimate.high_gib
