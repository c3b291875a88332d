"""Serving throughput model: the roofline by hand, MoE experts touched, layer split, offload, rule table checks."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rules.speed.serving import HOST_RAM_GBS, decode_rate, offload_rate, prefill_rate, read_bytes_per_step
from rules.tables import RuleTableError, ServingTables, parse_rule_tables
from rules.workload.serving import ServingSetup
from rules.workload.shapes import shape_from_model
from test_rules_serving_support import catalog_model
from test_rules_support import ROOT, catalog_gpus

GPUS = catalog_gpus()
LLAMA_8B = shape_from_model(catalog_model("llama-3.1-8b"))
MIXTRAL = shape_from_model(catalog_model("mixtral-8x7b"))
# Efficiency 1, no overhead, full utilisation: the pure roofline, so expected values are arithmetic.
IDEAL = ServingTables(
    bandwidth_efficiency=dict.fromkeys(("paged", "paged_rocm", "gguf_cuda", "apple", "other"), 1.0),
    step_overhead_ms=dict.fromkeys(("paged", "paged_rocm", "gguf_cuda", "apple", "other"), 0.0),
    host_bandwidth_efficiency=1.0, tp_efficiency={"nvlink": 1.0, "pcie": 1.0}, decode_compute_utilisation=1.0,
    prefill_compute_utilisation=1.0, band=(0.7, 1.3))


def setup(engine="vllm", fmt="bf16", gpus=1, context=4096):
    return ServingSetup("serving", engine, fmt, "bf16", 1, context, gpus, False)


def test_batch_one_decode_is_bandwidth_over_bytes():
    """H100 SXM 3350 GB/s; Llama-3.1-8B bf16 reads every weight but the input embedding (untied:
    128,256 x 4096 looked up, not read) plus 2048 cached tokens x 131,072 B."""
    rate = decode_rate(LLAMA_8B, setup(), GPUS["h100-sxm-80gb"], IDEAL, batch=1, kv_len=2048)
    bytes_per_token = (8.03e9 - 128_256 * 4096) * 2 + 2048 * 131_072
    assert rate.output_tokens_per_s_per_user == pytest.approx(3350e9 / bytes_per_token)
    assert rate.basis == "bandwidth"


def test_large_batches_become_compute_bound():
    """At 4096 sequences and no cache, each step is 2 x 8.03e9 FLOPs per sequence on 989 dense TFLOPS."""
    rate = decode_rate(LLAMA_8B, setup(), GPUS["h100-sxm-80gb"], IDEAL, batch=4096, kv_len=0)
    assert rate.basis == "compute"
    assert rate.output_tokens_per_s == pytest.approx(989e12 / (2 * 8.03e9))


def test_total_is_batch_times_per_user():
    rate = decode_rate(LLAMA_8B, setup(), GPUS["a100-sxm-80gb"], IDEAL, batch=16, kv_len=1000)
    assert rate.output_tokens_per_s == pytest.approx(16 * rate.output_tokens_per_s_per_user)


def test_moe_reads_the_experts_its_batch_touches():
    """Mixtral 8x7B: 46.7B total, 12.9B active, top-2 of 8. Per expert (46.7 - 12.9) / 6 = 5.633B, shared
    12.9 - 2 x 5.633 = 1.633B. One token touches 2 experts (12.9B); 1000 tokens all 8 (46.7B)."""
    embed = 32_000 * 4096 * 2.0
    assert read_bytes_per_step(MIXTRAL, setup(), 1) == pytest.approx(12.9e9 * 2 - embed)
    assert read_bytes_per_step(MIXTRAL, setup(), 1000) == pytest.approx(46.7e9 * 2 - embed, rel=1e-6)
    two = 8 * (1 - (1 - 2 / 8) ** 2)  # expected distinct experts for two tokens: 3.5
    assert read_bytes_per_step(MIXTRAL, setup(), 2) == pytest.approx((1.6333e9 + two * 5.6333e9) * 2 - embed,
                                                                     rel=1e-4)


def test_tensor_parallel_adds_bandwidth_and_a_layer_split_does_not():
    one = decode_rate(LLAMA_8B, setup(), GPUS["h100-sxm-80gb"], IDEAL, batch=1, kv_len=0)
    tp2 = decode_rate(LLAMA_8B, setup(gpus=2), GPUS["h100-sxm-80gb"], IDEAL, batch=1, kv_len=0)
    assert tp2.output_tokens_per_s_per_user == pytest.approx(2 * one.output_tokens_per_s_per_user)
    gguf = decode_rate(LLAMA_8B, setup("llama.cpp"), GPUS["rtx-3090"], IDEAL, batch=1, kv_len=0)
    split = decode_rate(LLAMA_8B, setup("llama.cpp", gpus=2), GPUS["rtx-3090"], IDEAL, batch=1, kv_len=0)
    assert split.output_tokens_per_s_per_user == pytest.approx(gguf.output_tokens_per_s_per_user)


def test_prefill_is_flops_bound():
    """2 x 8.03e9 + 2 x 32 layers x 512 x 32 heads x 128 FLOPs per prompt token on 165.2 TFLOPS."""
    per_token = 2 * 8.03e9 + 2 * 32 * 512 * 32 * 128
    assert prefill_rate(LLAMA_8B, GPUS["rtx-4090"], setup("llama.cpp"), IDEAL, 512) == pytest.approx(
        165.2e12 / per_token)


def test_offload_streams_the_rest_from_host_ram():
    """Half the bytes from a 4090's 1008 GB/s, half from dual-channel DDR5-5600 (89.6 GB/s)."""
    rate = offload_rate(LLAMA_8B, setup("llama.cpp"), GPUS["rtx-4090"], IDEAL, on_gpu_share=0.5, kv_len=0)
    total = (8.03e9 - 128_256 * 4096) * 2
    assert HOST_RAM_GBS == 2 * 8 * 5.6
    assert rate.output_tokens_per_s_per_user == pytest.approx(1 / (total / 2 / 1008e9 + total / 2 / 89.6e9))
    assert rate.basis == "offload"


def test_serving_table_is_required_and_validated():
    import json

    data = json.loads((ROOT / "rules" / "data" / "rule_tables.json").read_text())
    del data["serving"]
    with pytest.raises(RuleTableError, match=r"^t\.json: serving: missing"):
        parse_rule_tables(data, source="t.json")
    data = json.loads((ROOT / "rules" / "data" / "rule_tables.json").read_text())
    data["serving"]["bandwidth_efficiency"]["paged"] = 1.5
    with pytest.raises(RuleTableError, match=r"serving\.bandwidth_efficiency\.paged"):
        parse_rule_tables(data, source="t.json")


def test_unified_flag_is_read_only_when_present():
    """Before the catalog gains `unified_memory`, a GpuSpec without it decodes as a CUDA card."""
    gpu = replace(GPUS["rtx-4090"])
    assert not hasattr(gpu, "unified_memory") or gpu.unified_memory is False  # type: ignore[attr-defined]


def test_a_tensor_parallel_step_pays_two_all_reduces_per_layer():
    """Llama 3.1 8B (32 layers) over 2 NVLink H100s with a 0.01 ms all-reduce: each decode step takes 2 x 32 x
    0.01 ms = 0.64 ms more than the bandwidth roofline, at any batch; one GPU pays none, nor a llama.cpp layer
    split (its GPUs run one after the other and exchange one activation, not an all-reduce per layer)."""
    latency = replace(IDEAL, tp_allreduce_ms={"nvlink": 0.01, "pcie": 0.01})
    gpu = GPUS["h100-sxm-80gb"]
    for batch in (1, 16):
        plain = decode_rate(LLAMA_8B, setup(gpus=2), gpu, IDEAL, batch=batch, kv_len=2048)
        paid = decode_rate(LLAMA_8B, setup(gpus=2), gpu, latency, batch=batch, kv_len=2048)
        assert 1 / paid.output_tokens_per_s_per_user == pytest.approx(
            1 / plain.output_tokens_per_s_per_user + 2 * 32 * 0.01e-3)
    one = decode_rate(LLAMA_8B, setup(), gpu, latency, batch=1, kv_len=2048)
    assert one == decode_rate(LLAMA_8B, setup(), gpu, IDEAL, batch=1, kv_len=2048)
    split = decode_rate(LLAMA_8B, setup(engine="llama.cpp", fmt="gguf-q4_k_m", gpus=2), gpu, latency, batch=1,
                        kv_len=2048)
    assert split == decode_rate(LLAMA_8B, setup(engine="llama.cpp", fmt="gguf-q4_k_m", gpus=2), gpu, IDEAL, batch=1,
                                kv_len=2048)


def test_the_all_reduce_latency_is_checked_when_read():
    import json

    raw = json.loads((ROOT / "rules" / "data" / "rule_tables.json").read_text())
    assert parse_rule_tables(raw, source="t").serving.tp_allreduce_ms == {"nvlink": 0.01, "pcie": 0.01}
    for bad in ({"nvlink": 0.01}, {"nvlink": -1, "pcie": 0.01}, {"nvlink": 5, "pcie": 0.01}, "fast"):
        raw["serving"]["tp_allreduce_ms"] = bad
        with pytest.raises(RuleTableError, match="tp_allreduce_ms"):
            parse_rule_tables(raw, source="t")



def test_the_pcie_low_end_share_is_checked_when_read_and_optional():
    import json

    raw = json.loads((ROOT / "rules" / "data" / "rule_tables.json").read_text())
    assert parse_rule_tables(raw, source="t").serving.tp_pcie_low == 0.68
    for bad in (0, -0.5, 1.5, "low", True):
        raw["serving"]["tp_pcie_low"] = bad
        with pytest.raises(RuleTableError, match="tp_pcie_low"):
            parse_rule_tables(raw, source="t")
    del raw["serving"]["tp_pcie_low"]
    assert parse_rule_tables(raw, source="t").serving.tp_pcie_low == 1.0  # absent: the band is not widened


DEEPSEEK = shape_from_model(catalog_model("deepseek-r1"))


def test_a_fine_grained_moe_step_pays_a_fixed_cost_per_layer():
    """DeepSeek-R1 (61 layers, 256 routed experts: its config.json) over 8 H100s: with 0.19 ms per layer for
    weight-only 4-bit experts and 0.03 ms for others, a decode step takes 61 x 0.19 = 11.59 ms (AWQ) or
    61 x 0.03 = 1.83 ms (FP8) more than without the term, at any batch; Mixtral's 8 experts are below the
    64-expert threshold and pay nothing; llama.cpp (not a paged engine) pays nothing."""
    assert (DEEPSEEK.layers, DEEPSEEK.moe_experts, MIXTRAL.moe_experts) == (61, 256, 8)
    moe = replace(IDEAL, moe_layer_ms={"int4": 0.19, "other": 0.03}, moe_min_experts=64)
    gpu = GPUS["h100-sxm-80gb"]
    for fmt, per_layer in (("awq", 0.19), ("fp8", 0.03)):
        for batch in (1, 32):
            plain = decode_rate(DEEPSEEK, setup(fmt=fmt, gpus=8), gpu, IDEAL, batch=batch, kv_len=1024)
            paid = decode_rate(DEEPSEEK, setup(fmt=fmt, gpus=8), gpu, moe, batch=batch, kv_len=1024)
            assert 1 / paid.output_tokens_per_s_per_user == pytest.approx(
                1 / plain.output_tokens_per_s_per_user + 61 * per_layer * 1e-3)
    assert decode_rate(MIXTRAL, setup(gpus=2), gpu, moe, batch=1, kv_len=1024) == \
        decode_rate(MIXTRAL, setup(gpus=2), gpu, IDEAL, batch=1, kv_len=1024)
    lcpp = setup(engine="llama.cpp", fmt="gguf-q4_k_m", gpus=8)
    assert decode_rate(DEEPSEEK, lcpp, gpu, moe, batch=1, kv_len=1024) == \
        decode_rate(DEEPSEEK, lcpp, gpu, IDEAL, batch=1, kv_len=1024)


def test_the_moe_layer_cost_is_checked_when_read():
    import json

    raw = json.loads((ROOT / "rules" / "data" / "rule_tables.json").read_text())
    serving = parse_rule_tables(raw, source="t").serving
    assert serving.moe_layer_ms == {"int4": 0.19, "other": 0.03} and serving.moe_min_experts == 64
    for bad in ({"int4": 0.19}, {"int4": -1, "other": 0.03}, {"int4": 2, "other": 0.03}, "slow"):
        raw["serving"]["moe_layer_ms"] = bad
        with pytest.raises(RuleTableError, match="moe_layer_ms"):
            parse_rule_tables(raw, source="t")
    raw["serving"]["moe_layer_ms"] = {"int4": 0.19, "other": 0.03}
    for bad_count in (-1, 1.5, True, "64"):
        raw["serving"]["moe_min_experts"] = bad_count
        with pytest.raises(RuleTableError, match="moe_min_experts"):
            parse_rule_tables(raw, source="t")


def test_a_rate_at_another_kv_length_changes_only_the_context():
    """`_at` builds the setup at a KV length directly (dataclasses.replace runs as Python): it must give what
    replace gives, every other field kept, so that a field added to ServingSetup is not dropped there."""
    import dataclasses

    from rules.speed.serving import _at
    from rules.workload.serving import ServingSetup

    given = ServingSetup("running", "llama.cpp", "gguf-q4_k_m", "q8_0", 3, 8192, 2, True)
    for field in dataclasses.fields(ServingSetup):
        assert getattr(given, field.name) != getattr(ServingSetup("serving", "vllm", "bf16", "bf16", 1, 1, 1, False),
                                                     field.name), field.name  # every field off its plain value
    assert _at(given, 1000) == dataclasses.replace(given, context_tokens=1000)
    assert _at(given, -5).context_tokens == 0


def test_paged_engines_prefill_at_their_own_utilisation():
    """A paged engine (vLLM, TensorRT-LLM) prefills at `prefill_paged` of the dense peak, llama.cpp at `prefill`:
    8B on an H100 (989 dense BF16 TFLOPS), 512-token prompt: 2 x 8.03e9 + 2 x 32 x 512 x 32 x 128 FLOPs a token."""
    tables = replace(IDEAL, prefill_compute_utilisation=0.9, prefill_paged_compute_utilisation=0.5)
    per_token = 2 * 8.03e9 + 2 * 32 * 512 * 32 * 128
    h100 = GPUS["h100-sxm-80gb"]
    assert prefill_rate(LLAMA_8B, h100, setup("vllm"), tables, 512) == pytest.approx(989e12 * 0.5 / per_token)
    assert prefill_rate(LLAMA_8B, h100, setup("llama.cpp"), tables, 512) == pytest.approx(989e12 * 0.9 / per_token)
    assert prefill_rate(LLAMA_8B, h100, setup("vllm"), IDEAL, 512) == pytest.approx(989e12 / per_token)  # unset


def test_a_fine_grained_moe_prefills_at_a_share_of_the_paged_rate():
    """`moe_prefill` scales the paged prefill share for models with `moe_min_experts` or more routed experts
    (Qwen3-30B-A3B: 128), not for Mixtral's 8, and not in llama.cpp."""
    qwen = shape_from_model(catalog_model("qwen3-30b-a3b"))
    tables = replace(IDEAL, prefill_paged_compute_utilisation=0.5, moe_prefill=0.4, moe_min_experts=64)
    h100 = GPUS["h100-sxm-80gb"]
    per_token = 2 * qwen.active_params_b * 1e9 + 2 * qwen.layers * 512 * qwen.heads * qwen.attention_head_dim
    assert prefill_rate(qwen, h100, setup("vllm"), tables, 512) == pytest.approx(989e12 * 0.5 * 0.4 / per_token)
    assert prefill_rate(qwen, h100, setup("llama.cpp"), tables, 512) == pytest.approx(989e12 / per_token)
    dense_share = prefill_rate(MIXTRAL, h100, setup("vllm"), tables, 512) / prefill_rate(MIXTRAL, h100, setup("vllm"),
                                                                                         IDEAL, 512)
    assert dense_share == pytest.approx(0.5)
