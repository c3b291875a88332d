"""Serving and running verdicts: the user's hardware first, what would make it work, the fit matrix, plans,
the launch command. The questions are issue 14's; expected values are arithmetic on the models' configs."""

from __future__ import annotations


from dataclasses import replace

import pytest

from rules.engine import evaluate
from rules.plans.serving import ServingSpace, valid_counts
from rules.types import ModelSpec, Workload, field_names
from rules.workload.serving import serving_method
from rules.workload.shapes import shape_from_model
from test_rules_serving_support import apple_gpu, catalog_model
from test_rules_support import catalog_gpus, offers_for, providers, tables

GPUS = catalog_gpus()
OFFERS = offers_for(GPUS)
LLAMA_70B = catalog_model("llama-3.1-70b")
LLAMA3_8B = catalog_model("llama-3-8b")


def run(workload: Workload, gpus=GPUS):
    return evaluate(workload, gpus=gpus, offers_by_gpu=OFFERS, providers=providers(), tables=tables())


def codes(verdict) -> dict[str, dict]:
    return {f.code: dict(f.numbers) for f in verdict.findings}


def test_70b_on_one_4090_is_a_no_even_in_4_bit():
    """Issue 14: 'no — even 4-bit needs ~40 GiB; 2x 24 GB cards in 4-bit, or 1x 48 GB'. Q4_K_M weights:
    70.55e9 x 4.8944 / 8 B = 43.2e9 B = 40.2 GiB, over a 24 GB card."""
    v = run(Workload(model=LLAMA_70B, method="running", gpu="rtx-4090", gpus=1))
    p = v.pinned
    assert p is not None and p.gpu == "rtx-4090" and p.count == 1 and not p.fits
    assert p.needed_gib >= 40.2 and p.has_gib <= 24
    assert p.offload_gib == pytest.approx(p.needed_gib - p.has_gib, abs=0.11)
    assert p.throughput is not None and p.throughput.basis == "offload"
    more = [f for f in v.findings if f.code == "pinned.more_gpus"]
    assert any(f.numbers["gpus"] == 2 and f.numbers["precision"] == "gguf-q4_k_m" for f in more)
    one = codes(v)["pinned.one_card"]  # the smallest single card: 48 GB (40.2 GiB of 4-bit weights + cache)
    assert one["vram_gb"] == 48 and one["needed_gib"] <= 48
    four_bit = next(m for m in v.precisions if m.precision == "awq")
    assert not four_bit.fits and four_bit.needed_gib > 37.0  # 37.0 GiB of AWQ weights alone
    assert all(not m.fits for m in v.precisions)
    assert v.options and all(o.memory.per_gpu_gib <= GPUS[o.gpu_id].vram_gb for o in v.options)


def test_70b_fits_one_48_gb_card_in_4_bit():
    v = run(Workload(model=LLAMA_70B, method="running", gpu="l40s", gpus=1))
    assert v.pinned is not None and v.pinned.fits and v.pinned.precision == "awq"
    assert v.options[0].gpu_id == "l40s"  # the user's own plan comes first


def test_100_users_at_8k_provision_the_whole_cache():
    """100 x 8192 tokens x 327,680 B = 250 GiB of KV on top of the weights: 131.4 GiB in bf16 (>= 380 GiB in
    all), 65.7 GiB in fp8 where the plan's GPUs have it."""
    v = run(Workload(model=LLAMA_70B, method="serving", concurrency=100, context_tokens=8192))
    top = v.options[0]
    total = top.memory.per_gpu_gib * top.count
    assert total >= {"bf16": 131.4, "fp8": 65.7}[top.precision] + 250
    bf16 = run(Workload(model=LLAMA_70B, method="serving", concurrency=100, context_tokens=8192, quantization="bf16"))
    assert bf16.options[0].memory.per_gpu_gib * bf16.options[0].count >= 380
    assert top.memory.breakdown["kv_cache"] * top.count == pytest.approx(250.0, rel=0.01)
    assert top.throughput is not None and top.throughput.concurrency == 100
    assert top.usd_per_million_output_tokens is not None and top.usd_per_month is not None
    assert v.assumptions["method"] == "serving" and v.assumptions["concurrency"] == 100
    assert v.assumptions["context_tokens"] == 8192 and "serving.context_growth" not in codes(v)


def test_llama3_8b_on_a_t4_is_not_fp16_but_8_bit_with_a_user_count():
    """fp16 weights 16.06e9 B = 14.96 GiB; vLLM may claim 0.9 x 16 = 14.4 GiB: no. int8 weights
    (8.03e9 - 1.05e9) x 1.001 B + 1.05e9 x 2 B = 9.09e9 B = 8.46 GiB; each 4096-token user adds 0.5 GiB:
    at most (14.4 - 8.46) / 0.5 = 11 users, fewer after vLLM's workspace."""
    v = run(Workload(model=LLAMA3_8B, method="serving", gpu="t4", gpus=1))
    p = v.pinned
    assert p is not None and p.fits and p.precision == "int8" and p.count == 1
    fp16 = next(m for m in v.precisions if m.precision == "fp16")  # 16-bit on a card without BF16 units
    assert not fp16.fits and fp16.needed_gib > 14.96
    assert all(m.precision != "bf16" for m in v.precisions)
    assert p.throughput is not None and 5 <= p.throughput.max_concurrency <= 11
    assert codes(v)["pinned.quantized"]["first_precision"] == "fp16"
    assert "--dtype" in v.command.argv and "half" in v.command.argv  # the T4 has no bf16


def test_gemma_2b_on_a_t4_is_running_it_on_one_t4():
    """No concurrency, no training words: running. 2.61e9 x 2 B = 4.86 GiB of fp16 weights fit a T4."""
    w = Workload(model=catalog_model("gemma-2-2b"), method="inference", gpu="t4", gpus=1)
    assert serving_method(w) == "running"
    v = run(w)
    assert v.assumptions["method"] == "running"
    assert v.pinned is not None and v.pinned.fits and v.pinned.count == 1 and v.pinned.precision == "fp16"
    assert v.options[0].gpu_id == "t4" and v.options[0].count == 1


@pytest.mark.parametrize(("method", "concurrency", "expected"), [
    ("inference", None, "running"), ("inference", 4, "serving"), (None, 16, "serving"), ("lora", None, None),
    (None, None, None)])
def test_method_resolution(method, concurrency, expected):
    assert serving_method(Workload(params_b=8, method=method, concurrency=concurrency)) == expected


def test_a_model_published_in_fp8_is_sized_in_fp8():
    """671e9 x (8 + 32/16384) / 8 B (+ 16-bit embeddings) = ~672 GB: 8 x H200 141 GB holds it, 8 x H100 not."""
    base = catalog_model("deepseek-v3")
    values = {f: getattr(base, f) for f in field_names(ModelSpec)}
    # config.json: kv_lora_rank 512, qk_rope_head_dim 64; weights published in fp8 e4m3 with 128x128 block scales
    values.update(head_dim=128, kv_lora_rank=512, qk_rope_head_dim=64, native_dtype="fp8")
    deepseek = ModelSpec(**values)
    v = run(Workload(model=deepseek, method="serving", concurrency=8, context_tokens=4096))
    assert "model.native_fp8" in codes(v)
    assert all(o.precision != "bf16" for o in v.options)  # never upcast to 1.34 TB of bf16
    h200 = run(Workload(model=deepseek, method="serving", concurrency=8, context_tokens=4096, gpu="h200", gpus=8))
    assert h200.pinned is not None and h200.pinned.fits and h200.pinned.precision == "fp8"
    h100 = run(Workload(model=deepseek, method="serving", concurrency=8, context_tokens=4096,
                        gpu="h100-sxm-80gb", gpus=8, quantization="fp8"))
    assert h100.pinned is not None and not h100.pinned.fits


def test_fp8_only_where_the_gpu_has_it():
    """70B: bf16 131.4 GiB does not fit one H200 (141 GB); fp8 (~67.7 GiB) does, and Hopper has fp8."""
    h200 = run(Workload(model=LLAMA_70B, method="running", gpu="h200", gpus=1))
    assert h200.pinned is not None and h200.pinned.fits and h200.pinned.precision == "fp8"
    a100 = run(Workload(model=LLAMA_70B, method="running", gpu="a100-sxm-80gb", gpus=1))
    assert all(m.precision != "fp8" for m in a100.precisions)


def test_tensor_parallel_must_divide_the_heads():
    """Falcon-7B has 71 attention heads: vLLM cannot split it 2, 4 or 8 ways."""
    falcon = shape_from_model(catalog_model("falcon-7b"))
    assert valid_counts(GPUS["a100-sxm-80gb"], falcon, "vllm", (1, 2, 4, 8)) == (1,)
    assert valid_counts(GPUS["a100-sxm-80gb"], falcon, "llama.cpp", (1, 2, 4, 8)) == (1, 2, 4, 8)
    llama = shape_from_model(LLAMA_70B)
    assert valid_counts(GPUS["rtx-4090"], llama, "vllm", (1, 2, 4, 8, 16)) == (1, 2, 4, 8)  # one node


def test_unnamed_context_is_stated_with_4k_32k_128k_and_fp8_savings():
    """KV grows linearly: the 32k cache is 8x the 4k one; fp8 halves the cache at the assumed 4096. (Llama 3.1 8B
    reads 131,072 tokens; Llama 3 8B's 8,192 stop the steps at 4k: tests/test_serving_model_limits.py.)"""
    v = run(Workload(model=catalog_model("llama-3.1-8b"), method="running", gpu="rtx-4090", gpus=1))
    growth = codes(v)["serving.context_growth"]
    assert growth["context_tokens"] == 4096 and v.assumptions["context_tokens"] == 4096
    assert growth["kv_cache_gib_32k"] == pytest.approx(8 * growth["kv_cache_gib_4k"], rel=0.01)
    assert growth["needed_gib_4k"] < growth["needed_gib_32k"] < growth["needed_gib_128k"]
    assert growth["fp8_kv_saves_gib"] == pytest.approx(growth["kv_cache_gib_4k"] / 2, abs=0.01)


def test_serving_without_a_user_count_reports_what_the_memory_sustains():
    v = run(Workload(model=LLAMA3_8B, method="serving", gpu="a100-sxm-80gb", gpus=1))
    assumed = codes(v)["serving.concurrency_assumed"]
    assert v.pinned is not None and v.pinned.throughput is not None
    assert assumed["max_concurrency"] == v.pinned.throughput.concurrency > 1


def test_a_tokens_per_second_target_that_cannot_be_met_is_said():
    v = run(Workload(model=LLAMA3_8B, method="serving", concurrency=4, tokens_per_s=100_000.0,
                     tokens_per_s_scope="per_user"))
    assert codes(v)["serving.target_missed"]["tokens_per_s"] == 100_000.0


def test_apple_silicon_uses_the_share_macos_gives_the_gpu():
    """A 64 GB Mac with 75 % for the GPU has 48 GiB: 70B Q4_K_M (40.2 GiB + cache) runs, with llama.cpp."""
    mac = apple_gpu("mac-64gb", memory_gb=64.0, bandwidth_gbs=400.0)
    gpus = {**GPUS, mac.id: mac}
    v = run(Workload(model=LLAMA_70B, method="running", gpu=mac.id, gpus=1), gpus=gpus)
    assert v.pinned is not None and v.pinned.fits and v.pinned.has_gib == pytest.approx(48.0)
    assert v.pinned.precision == "gguf-q4_k_m" and v.command is not None and v.command.engine == "llama.cpp"


def test_vllm_command_carries_the_verdicts_settings():
    v = run(Workload(model=LLAMA_70B, method="serving", concurrency=100, context_tokens=8192, kv_cache_dtype="fp8"))
    argv = list(v.command.argv)
    assert argv[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-70B"]
    assert argv[argv.index("--tensor-parallel-size") + 1] == str(v.options[0].count)
    assert argv[argv.index("--max-model-len") + 1] == "8192" and argv[argv.index("--max-num-seqs") + 1] == "100"
    assert argv[argv.index("--kv-cache-dtype") + 1] == "fp8" and "--gpu-memory-utilization" in argv


def test_copies_for_a_total_rate_are_data_parallel_in_the_command_vllm_and_sglang():
    """20,000 tokens/s in all at full load for Llama 3 8B: more than one copy of the smallest setup; the launch
    line asks for as many copies as one 8-GPU server holds (vLLM --data-parallel-size, SGLang --dp-size), the
    option counts all their GPUs, and one user is as fast as on one copy."""
    base = Workload(model=LLAMA3_8B, method="serving", tokens_per_s=20_000, tokens_per_s_scope="total")
    for engine, flag in (("vllm", "--data-parallel-size"), ("sglang", "--dp-size")):
        v = run(Workload(**{**{f: getattr(base, f) for f in field_names(Workload)}, "engine": engine}))
        top = v.options[0]
        assert top.replicas > 1 and top.count % top.replicas == 0
        per_copy = top.count // top.replicas
        argv = list(v.command.argv)
        assert argv[argv.index(flag) + 1] == str(min(top.replicas, 8 // per_copy))
        assert top.throughput is not None and top.throughput.output_tokens_per_s >= 20_000
    plain = run(Workload(model=LLAMA3_8B, method="serving"))
    assert plain.options[0].replicas == 1 and "--data-parallel-size" not in plain.command.argv


def test_llama_cpp_command_offloads_only_what_does_not_fit():
    v = run(Workload(model=LLAMA_70B, method="running", gpu="rtx-4090", gpus=1, kv_cache_dtype="q8_0"))
    argv = list(v.command.argv)
    assert argv[0] == "llama-server" and argv[argv.index("-m") + 1].endswith("Q4_K_M.gguf")
    layers = int(argv[argv.index("-ngl") + 1])
    assert 0 < layers < 80  # 80 layers, about 22.8 / 42 of them on the card
    assert argv[argv.index("-ctk") + 1] == "q8_0" and argv[argv.index("-ctv") + 1] == "q8_0"


@pytest.mark.parametrize("gpu", ["gtx-1080-ti", "p100"])
def test_a_card_before_volta_is_served_by_llama_cpp_not_vllm(gpu: str):
    """vLLM needs compute capability 7.0 or higher (vLLM's installation requirements; Pascal is 6.x): serving on
    a GTX 1080 Ti or a P100 with no engine named is a llama.cpp server, never a `vllm serve` line."""
    v = run(Workload(model=LLAMA3_8B, method="serving", concurrency=5, gpu=gpu, gpus=1))
    assert v.assumptions["engine"] == "llama.cpp"
    assert v.command is not None and v.command.argv[0] == "llama-server"


def test_vllm_asked_of_a_card_before_volta_is_said_and_launched_with_llama_cpp():
    """vLLM named for a GTX 1080 Ti (compute capability 6.1; vLLM needs 7.0): the verdict is sized and launched
    with llama.cpp and a warning says why; searched alternatives for vLLM never include a card it cannot start on."""
    v = run(Workload(model=LLAMA3_8B, method="serving", concurrency=5, engine="vllm", gpu="gtx-1080-ti", gpus=1))
    assert v.assumptions["engine"] == "llama.cpp" and v.command is not None and v.command.argv[0] == "llama-server"
    assert codes(v)["engine.unsupported"] == {"engine": "vllm", "gpu": "gtx-1080-ti", "instead": "llama.cpp"}
    searched = run(Workload(model=LLAMA3_8B, method="serving", concurrency=5, engine="vllm"))
    assert searched.options and all(GPUS[o.gpu_id].architecture not in ("Pascal", "Maxwell", "Kepler")
                                    for o in searched.options)


def test_ollama_command_is_environment():
    v = run(Workload(model=LLAMA3_8B, method="serving", engine="ollama", concurrency=4, context_tokens=8192,
                     gpu="rtx-4090", gpus=1))
    env = dict(v.command.env)
    assert v.command.argv == ("ollama", "serve")
    assert env == {"OLLAMA_NUM_PARALLEL": "4", "OLLAMA_CONTEXT_LENGTH": "8192"}


def test_serving_space_is_shared_by_cards_of_one_class():
    """Every 80 GB data-centre card without a tokens/s target shares one fit search (speed)."""
    space = ServingSpace(Workload(model=LLAMA3_8B, method="serving", concurrency=8), shape_from_model(LLAMA3_8B),
                         "serving", tables())
    from rules.plans.serving import fit_serving

    for gpu_id in ("h100-sxm-80gb", "h100-pcie-80gb", "h800-sxm-80gb"):
        fit_serving(GPUS[gpu_id], space, (1, 2, 4, 8))
    assert len(space.fits) == 1


def test_a_card_count_tensor_parallelism_cannot_use_is_split_by_layers():
    """Three cards cannot split 64 heads evenly (vLLM); llama.cpp splits the 80 layers instead: 70B Q4_K_M
    (40.2 GiB) over 3 x 24 GB."""
    v = run(Workload(model=LLAMA_70B, method="serving", concurrency=2, gpu="rtx-3090", gpus=3))
    assert v.pinned is not None and v.pinned.count == 3 and v.pinned.fits
    assert v.command is not None and v.command.engine == "llama.cpp"


KV_BYTES_PER_TOKEN_70B = 2 * 80 * 8 * 128 * 2  # K and V, 80 layers, 8 KV heads of 128, bf16 (config.json)


def test_a_near_miss_at_the_assumed_context_says_how_long_a_context_fits():
    """Llama 3.1 70B in FP8 on one H100 80GB: its weights (~67.7 GiB) fill the card, and one sequence of the
    assumed 4,096 tokens (1.25 GiB of KV) tips it over. The answer stays no at 4,096 and says the longest
    context that fits: the free memory beside the fixed parts over 327,680 B a token, in steps of 256."""
    v = run(Workload(model=LLAMA_70B, method="running", gpu="h100-sxm-80gb", gpus=1, quantization="fp8"))
    p = v.pinned
    assert p is not None and not p.fits and p.precision == "fp8"
    found = codes(v)["pinned.context"]
    assert found["context_tokens"] == 4096 and found["precision"] == "fp8"
    shorter = int(found["max_context"])
    assert shorter % 256 == 0 and 1024 <= shorter < 4096
    kv_4k = 4096 * KV_BYTES_PER_TOKEN_70B / 2**30
    fixed = p.needed_gib - kv_4k  # the card's need less one 4,096-token cache
    assert fixed + shorter * KV_BYTES_PER_TOKEN_70B / 2**30 <= p.has_gib + 0.05
    assert fixed + (shorter + 256) * KV_BYTES_PER_TOKEN_70B / 2**30 > p.has_gib - 0.05


def test_no_shorter_context_when_it_fits_or_when_the_weights_alone_do_not():
    fits = run(Workload(model=LLAMA_70B, method="running", gpu="h200", gpus=1, quantization="fp8"))
    assert fits.pinned is not None and fits.pinned.fits and "pinned.context" not in codes(fits)
    weights_too_big = run(Workload(model=LLAMA_70B, method="running", gpu="rtx-4090", gpus=1))
    assert "pinned.context" not in codes(weights_too_big)


def test_4_bit_asked_of_llama_cpp_is_its_q4_k_m_level_in_verdict_matrix_and_command():
    """'Qwen2.5-72B in 4bit on two 3090s' runs on llama.cpp (one user, desktop cards), whose 4-bit file is a GGUF
    level: the verdict, the fit matrix's row and the launch line must all be that one level (Q4_K_M, 4.89 bits a
    weight), not a vLLM-sized 4-bit row beside a llama.cpp verdict."""
    qwen72 = catalog_model("qwen2.5-72b")
    v = run(Workload(model=qwen72, method="running", gpu="rtx-3090", gpus=2, quantization="int4"))
    assert v.pinned is not None and v.pinned.precision == "gguf-q4_k_m"
    row = next(m for m in v.precisions if m.precision == "gguf-q4_k_m")
    assert row.needed_gib == v.pinned.needed_gib and row.fits == v.pinned.fits
    assert "int4" not in {m.precision for m in v.precisions}
    assert v.command is not None and any("Q4_K_M" in arg for arg in v.command.argv)


def test_a_total_budget_to_run_a_model_lists_cards_to_buy_within_it():
    """'buy a GPU for under $2000 to run 30B models': cards whose list price x count is at most $2,000 and that
    hold a 30B model, fastest per user first. The RTX 4090 (NVIDIA's launch price $1,599) holds a 30B in 4-bit
    (30e9 x 4.89 / 8 B = 17.1 GiB of Q4_K_M weights in 24 GB), so it is among them."""
    from decimal import Decimal

    v = run(Workload(params_b=30.0, method="running", budget_usd=Decimal(2000)))
    buys = [f.numbers for f in v.findings if f.code == "buy.within_budget"]
    assert 1 <= len(buys) <= 3 and not any(f.code == "buy.none_within" for f in v.findings)
    for b in buys:
        gpu = GPUS[str(b["gpu"])]
        assert float(b["purchase_usd"]) == pytest.approx(int(b["gpus"]) * float(gpu.purchase_usd))
        assert float(b["purchase_usd"]) <= 2000
    speeds = [float(b["output_tokens_per_s_per_user"]) for b in buys]
    assert speeds == sorted(speeds, reverse=True)
    assert "rtx-4090" in {b["gpu"] for b in buys} or min(speeds) > 40


def test_no_card_within_a_small_budget_says_so_and_a_named_card_gets_no_shopping_list():
    from decimal import Decimal

    small = run(Workload(model=LLAMA_70B, method="running", budget_usd=Decimal(500)))
    assert any(f.code == "buy.none_within" for f in small.findings)
    assert not any(f.code == "buy.within_budget" for f in small.findings)
    mine = run(Workload(model=LLAMA_70B, method="running", gpu="rtx-4090", gpus=1, budget_usd=Decimal(2000)))
    assert not any(f.code.startswith("buy.within") or f.code == "buy.none_within" for f in mine.findings)


def test_a_card_people_own_that_falls_short_names_the_cheapest_single_card_to_buy():
    """70B on one 4090 does not fit: besides renting, the cheapest listed single card that holds it, with its
    list price; every single card that holds it and has a list price costs at least that much."""
    v = run(Workload(model=LLAMA_70B, method="running", gpu="rtx-4090", gpus=1))
    buy = codes(v)["pinned.buy_one"]
    price = float(buy["purchase_usd"])
    assert price == float(GPUS[str(buy["gpu"])].purchase_usd)
    assert GPUS[str(buy["gpu"])].vram_gb * 0.95 >= float(buy["needed_gib"])
    for gpu in GPUS.values():
        if gpu.purchase_usd and float(gpu.purchase_usd) < price and not (gpu.laptop or gpu.modified):
            solo = run(Workload(model=LLAMA_70B, method="running", gpu=gpu.id, gpus=1))
            assert solo.pinned is not None and not solo.pinned.fits, gpu.id


def test_a_rented_card_that_falls_short_gets_no_shopping_advice():
    v = run(Workload(model=LLAMA_70B, method="running", gpu="l4", gpus=1))
    assert v.pinned is not None and not v.pinned.fits and "pinned.buy_one" not in codes(v)


def test_a_model_published_in_mxfp4_is_sized_and_served_as_published():
    """gpt-oss-120b ships its experts in MXFP4 (4 bits + one 8-bit scale per 32: 4.25 bits, OCP MX v1.0) and runs
    from that checkpoint (vLLM reads its quantization_config; llama.cpp has an MXFP4 GGUF). So by default: MXFP4,
    the quality caveat of a quantised copy does not apply, no --quantization flag and no 'needs a quantised
    checkpoint'. Weights: (116.776e9 - 2 x 201,088 x 2,880) x 4.25 / 8 B + the 16-bit embedding and head
    (config: 36 layers, hidden 2,880, vocab 201,088, untied) = 63.7e9 B = 59.4 GiB."""
    gpt_oss = catalog_model("gpt-oss-120b")
    v = run(Workload(model=gpt_oss, method="serving", gpu="h100-sxm-80gb", gpus=1))
    assert v.pinned is not None and v.pinned.fits and v.pinned.precision == "mxfp4"
    embed = 201_088 * 2_880
    weights_gib = ((116.776e9 - 2 * embed) * 4.25 / 8 + 2 * embed * 2) / 2**30
    assert v.memory.breakdown["weights"] == pytest.approx(weights_gib, rel=0.01)
    row = next(m for m in v.precisions if m.precision == "mxfp4")
    assert row.code == "quant.native"
    found = codes(v)
    assert "quant.4bit" not in found and "command.quantized_checkpoint" not in found
    assert "model.native_mxfp4" in found
    assert v.command is not None and "--quantization" not in v.command.argv
    small = run(Workload(model=catalog_model("gpt-oss-20b"), method="running", gpu="rtx-4090", gpus=1))
    assert small.command is not None and small.command.engine == "llama.cpp"
    assert "gpt-oss-20b-MXFP4.gguf" in small.command.argv  # ggml-org's GGUF keeps the MXFP4 experts


def test_a_launch_line_is_never_for_hardware_the_model_does_not_fit():
    """2x RTX 4090 serving Llama 3.1 70B to 4 users: even AWQ 4-bit needs 25.1 GiB a card against 22.2 usable (the
    pinned verdict), and vLLM cannot offload; the launch line is the first option's, and says which hardware it is
    for (a line for the named cards would run out of memory at start)."""
    v = run(Workload(model=LLAMA_70B, method="serving", concurrency=4, gpu="rtx-4090", gpus=2))
    assert v.pinned is not None and not v.pinned.fits and v.pinned.offload_gib == 0
    top = v.options[0]
    assert v.command is not None and (v.command.gpu, v.command.gpus) == (top.gpu_id, top.count) != ("rtx-4090", 2)
    argv = list(v.command.argv)
    assert argv[argv.index("--tensor-parallel-size") + 1] == str(top.count)
    # on the named hardware when it runs there: in memory, or with layers offloaded (llama.cpp's -ngl)
    fits = run(Workload(model=LLAMA_70B, method="running", gpu="l40s", gpus=1))
    assert fits.command is not None and (fits.command.gpu, fits.command.gpus) == ("l40s", 1)
    offload = run(Workload(model=LLAMA_70B, method="running", gpu="rtx-4090", gpus=1))
    assert offload.pinned is not None and offload.pinned.offload_gib > 0
    assert offload.command is not None and (offload.command.gpu, offload.command.gpus) == ("rtx-4090", 1)


def test_no_launch_line_when_nothing_in_the_pool_holds_the_model():
    """DeepSeek-V3 (671B parameters: 335 GB of weights even at 4 bits) on a pool of T4s (16 GB, at most 8 in one
    node: 128 GB): no plan, so no command (the largest card's figures still show why)."""
    v = run(Workload(model=catalog_model("deepseek-v3"), method="serving", concurrency=1), gpus={"t4": GPUS["t4"]})
    assert not v.options and v.command is None


def test_a_pcie_tensor_parallel_plan_widens_the_low_end_for_cards_without_p2p():
    """The rule tables' band is [0.72, 1.32] x the rate; over PCIe the low end is also x 0.68 (Kimi K2.5 on 8 RTX
    PRO 6000: 44 tok/s without P2P against 65 with it), and the link finding says so (32 % slower). NVLink
    plans keep the band."""
    serving = tables().serving
    assert serving is not None and serving.band == (0.72, 1.32) and serving.tp_pcie_low == 0.68
    pcie = run(Workload(model=LLAMA_70B, method="serving", concurrency=4, gpu="rtx-4090", gpus=4))
    plan = next(o for o in pcie.options if o.gpu_id == "rtx-4090")
    assert plan.count == 4 and plan.throughput is not None
    assert plan.throughput.low_tokens_per_s == pytest.approx(plan.throughput.output_tokens_per_s * 0.72 * 0.68, abs=0.01)
    assert plan.throughput.high_tokens_per_s == pytest.approx(plan.throughput.output_tokens_per_s * 1.32, abs=0.01)
    link = next(f for f in plan.findings if f.code == "link.pcie_tp")
    assert link.numbers["slower_pct"] == 32
    nvlink = run(Workload(model=LLAMA_70B, method="serving", concurrency=4, gpu="h100-sxm-80gb", gpus=2))
    h100 = next(o for o in nvlink.options if o.gpu_id == "h100-sxm-80gb")
    assert h100.count == 2 and h100.throughput is not None
    assert h100.throughput.low_tokens_per_s == pytest.approx(h100.throughput.output_tokens_per_s * 0.72, abs=0.01)
    assert not any(f.code == "link.pcie_tp" for f in h100.findings)


def test_awq_asked_of_a_volta_card_is_served_as_gptq():
    """vLLM's AWQ kernels need Turing (SM 7.5) or newer, GPTQ runs from Volta (vLLM "Supported Hardware" table,
    rules.workload.serving): AWQ asked on V100s is sized and launched as GPTQ 4-bit, never as a plan vLLM refuses;
    a Turing card keeps AWQ."""
    v = run(Workload(model=LLAMA_70B, method="serving", concurrency=4, quantization="awq", gpu="v100-32gb", gpus=2))
    assert v.pinned is not None and v.pinned.fits and v.pinned.precision == "gptq"
    argv = list(v.command.argv)
    assert argv[argv.index("--quantization") + 1] == "gptq"
    turing = run(Workload(model=LLAMA_70B, method="serving", concurrency=4, quantization="awq", gpu="t4", gpus=8))
    assert turing.pinned is not None and turing.pinned.precision == "awq"


def test_a_format_the_named_card_cannot_run_is_sized_in_one_it_can_and_said():
    """INT8 W8A8 needs Turing or newer, AWQ/GPTQ/INT8 none run on AMD GPUs in vLLM (its "Supported Hardware"
    table): asked of such a card, the verdict is for a format it runs (quality first: FP16 on a V100, 8B at
    15.0 GiB of weights in 29.4 usable), with a warning naming the format asked and the one sized; no
    `--quantization` flag vLLM would refuse on the card."""
    v = run(Workload(model=LLAMA3_8B, method="serving", concurrency=4, quantization="int8", gpu="v100-32gb",
                     gpus=1))
    assert v.pinned is not None and v.pinned.fits and v.pinned.precision == "fp16"
    found = codes(v)["quant.unsupported"]
    assert found == {"precision": "int8", "gpu": "v100-32gb", "engine": "vllm", "instead_precision": "fp16"}
    assert "--quantization" not in v.command.argv
    amd = run(Workload(model=LLAMA3_8B, method="running", quantization="awq", gpu="mi300x", gpus=1))
    assert amd.pinned is not None and amd.pinned.precision not in ("awq", "gptq", "int8")
    assert codes(amd)["quant.unsupported"]["precision"] == "awq"
    t4 = run(Workload(model=LLAMA3_8B, method="serving", concurrency=4, quantization="int8", gpu="t4", gpus=1))
    assert t4.pinned is not None and t4.pinned.precision == "int8" and "quant.unsupported" not in codes(t4)


def test_a_format_asked_without_naming_a_card_leaves_out_cards_that_cannot_run_it():
    """AWQ asked with no card named: AMD GPUs and Volta-only-GPTQ aside, no option is on a card whose vLLM
    kernels lack the format; with a llama.cpp engine named (GGUF runs everywhere) nothing is left out."""
    v = run(Workload(model=LLAMA_70B, method="serving", concurrency=20, quantization="int8"))
    assert v.options and all(GPUS[o.gpu_id].vendor == "NVIDIA" for o in v.options)
    assert all(not GPUS[o.gpu_id].architecture.startswith("Volta") for o in v.options)
    assert all(o.precision == "int8" for o in v.options)
    assert "quant.unsupported" not in codes(v)


def test_fp8_runs_where_the_card_has_fp8_units_or_marlin():
    """vLLM: FP8 W8A8 on Ada, Hopper and AMD MI300; weight-only FP8 through Marlin on Ampere; neither on Turing
    or Volta, nor on MI200 (no FP8 units)."""
    from rules.workload.serving import format_supported
    runs = {g: format_supported("fp8", GPUS[g], "vllm") for g in ("t4", "v100-32gb", "a100-sxm-80gb", "l4",
                                                                  "h100-sxm-80gb", "mi300x", "mi250x")}
    assert runs == {"t4": False, "v100-32gb": False, "a100-sxm-80gb": True, "l4": True, "h100-sxm-80gb": True,
                    "mi300x": True, "mi250x": False}


def test_cards_to_buy_for_an_asked_format_are_cards_that_run_it():
    """A total budget with AWQ asked: the Radeon Pro W7900 (48 GB, $3,999 list) is within $4,000 and would hold
    Qwen3 14B in BF16, but AMD's vLLM has no AWQ kernels (rules.workload.serving.format_supported): it is not
    offered in another format; the RTX A6000 ($4,650) is over the budget, so no card is."""
    pool = {g: GPUS[g] for g in ("radeon-pro-w7900", "rtx-a6000")}
    asked = Workload(model=catalog_model("qwen3-14b"), method="serving", concurrency=1, quantization="awq",
                     budget_usd=4000)
    assert [f.code for f in run(asked, pool).findings if f.code.startswith("buy.")] == ["buy.none_within"]
    more = run(replace(asked, budget_usd=5000), pool)
    bought = [f.numbers for f in more.findings if f.code.startswith("buy.within_budget")]
    assert [(b["gpu"], b["precision"]) for b in bought] == [("rtx-a6000", "awq")]


@pytest.mark.parametrize(("model", "concurrency", "budget"), [
    ("llama-3-8b", None, 1000.0), ("llama-3.1-70b", None, 2000.0), ("qwen2.5-32b", 4, 5000.0),
    ("llama-3.1-70b", 20, 40_000.0), ("llama-3-8b", 50, 600.0),
])
def test_the_budget_ladder_from_the_searchs_plans_is_the_one_fitted_again(model: str, concurrency: int | None,
                                                                         budget: float):
    """buy_within_budget reads the catalog search's plan per card (fewest cards first) instead of fitting each
    priced card again on the counts the budget buys: the findings must be the same either way."""
    from rules.plans.serving_verdict import _search, buy_within_budget, search_counts

    work = Workload(model=catalog_model(model), method="serving" if concurrency else "running",
                    concurrency=concurrency, budget_usd=budget)
    shape = shape_from_model(work.model)
    space = ServingSpace(work, shape, serving_method(work), tables())
    scored, _ = _search(space, GPUS, search_counts(work, pinned=False), OFFERS, providers(), None)
    again = buy_within_budget(space, GPUS, budget)
    reused = buy_within_budget(space, GPUS, budget, None, {s.plan.gpu.id: s for s in scored})
    assert [(f.code, dict(f.numbers)) for f in reused] == [(f.code, dict(f.numbers)) for f in again]


def test_a_gtx_card_is_answered_when_named_and_never_offered_as_another_card():
    """GeForce GTX cards (no tensor cores, rented and sold new nowhere) are evaluated when their owner names one,
    never proposed: on a GTX 1650 (4 GB), Llama 3.2 3B in FP16 (6.4 GB of weights) does not fit, and the one card
    named that holds it is not a GTX 1070 or 1080 (8 GB) the user could not buy new; no training plan uses one."""
    from rules.engine import training_pool
    from rules.types import owned_only

    v = run(Workload(model=catalog_model("llama-3.2-3b"), method="running", quantization="bf16", gpu="gtx-1650",
                     gpus=1))
    assert v.pinned is not None and v.pinned.gpu == "gtx-1650" and not v.pinned.fits
    assert not codes(v)["pinned.one_card"]["gpu"].startswith("gtx-")  # gtx-1070 would lead the 8 GB cards by id
    assert not [g for g in training_pool(GPUS) if g.startswith("gtx-")]
    assert {g for g in GPUS if g.startswith("gtx-")} == {g for g, spec in GPUS.items() if owned_only(spec)}
