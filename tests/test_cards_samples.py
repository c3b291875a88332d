"""Sample views for the golden cards (imported by test_cards_golden.py); a tiny self-check keeps it honest."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from bot.render.advice import RecommendationView, WhatIf
from bot.render.samples import OBSERVED_AT, sample_catalog
from bot.render.views import (
    BuyingRow, BuyingView, CapacityRow, CapacityView, TrainingCapacityRow, TrainingFit,
    Choice, ClarifyView, ComparisonView, ErrorView, FitLine, HelpView, KnowledgeView, PriceView, SpecsView,
    gpu_column, provider_prices,
)
from rules.plans.compare import Contender, catalog_strengths, decide_comparison
from rules.types import Workload
from rules.verdict import (
    Command, Finding, MemoryEstimate, Option, Pinned, PrecisionFit, Rejection, Throughput, Verdict,
)

NOW = datetime(2025, 6, 3, 9, 0, tzinfo=UTC)


def _verdict(catalog: Any) -> Verdict:
    offers = catalog.offers_by_gpu
    memory = MemoryEstimate(30.4, 24.1, 36.9, {"weights": 7.1, "gradients": 0.0, "optimizer": 0.2, "adapters": 0.1,
                                               "activations": 17.2, "logits": 4.3, "overhead": 1.5}, 1, "none", 0.0)
    two = MemoryEstimate(19.8, 15.0, 24.2, {"weights": 7.1, "optimizer": 0.1, "activations": 9.1, "logits": 2.2,
                                            "overhead": 1.3}, 2, "fsdp", 0.0)
    options = (
        Option("l40s-48gb", 1, 1, "none", (), memory, 11.6, Decimal("6.38"), offers["l40s-48gb"][0],
               (Finding("fit.vram", "pass", {"needed_gib": 30.4, "has_gib": 48}),)),
        Option("a100-sxm-80gb", 1, 1, "none", (), memory, 7.9, Decimal("8.69"), offers["a100-sxm-80gb"][0], ()),
        Option("rtx-4090", 2, 1, "fsdp", ("checkpointing",), two, 15.2, Decimal("10.64"), offers["rtx-4090"][0],
               (Finding("link.pcie", "warn", {"gpus": 2, "link": "PCIe 4.0"}),)),
    )
    # usable_gib: VRAM less the 5 % headroom of rules/data/rule_tables.json, as the engine reports it
    rejected = (Rejection("v100-sxm2-16gb", "fit.vram", {"needed_gib": 30.4, "has_gib": 16, "gpus": 1, "max_gpus_tried": 1,
                                                         "usable_gib": 15.2}),)
    findings = (
        Finding("model.typical_shape", "info", {"params_b": 13.0, "layers": 40, "hidden_size": 5120}),
        Finding("spot.checkpoint", "warn", {"interval_min": 30, "rework_pct": 10, "where": "persistent_storage"}),
        Finding("billing.per_second", "info", {"billing_increment_s": 60}),
    )
    assumptions = {"params_b": 13.0, "method": "qlora", "seq_len": 2048, "batch_size": 4, "recipe": "bf16",
                   "grad_checkpointing": "full", "lora_rank": 16, "spot": True}
    workload = Workload(params_b=13.0, method="qlora", spot=True, tokens=2e8)
    return Verdict(workload, assumptions, ("seq_len", "batch_size", "recipe", "grad_checkpointing", "lora_rank"),
                   memory, options, rejected, findings, "workstation")


def _nothing_fits(catalog: Any) -> Verdict:
    memory = MemoryEstimate(1180.0, 1100.0, 1290.0, {"weights": 130.4, "gradients": 130.4, "optimizer": 782.3,
                                                     "activations": 120.0, "overhead": 17.0}, 1, "none", 0.0)
    rejected = tuple(Rejection(g, "fit.vram", {"needed_gib": 1180.0, "has_gib": catalog.gpus[g].vram_gb,
                                                "gpus": 1, "max_gpus_tried": 1})
                     for g in ("gb200", "b300", "a100-sxm-80gb")) + (
        Rejection("rtx-4090", "segment.consumer_multinode", {"needed_gib": 1180.0, "has_gib": 24, "gpus": 1}),)
    return Verdict(Workload(params_b=70.0, method="full", gpus=1), {"params_b": 70.0, "method": "full", "gpus": 1},
                   (), memory, (), rejected, (Finding("fit.none", "fail", {"gpus_tried": 8}),), "frontier")


def _digest_view() -> dict[str, Any]:
    series = ["1.39", "1.39", "1.35", None, "1.29", "1.25", "1.25", "1.10"]
    return {
        "gpus": [
            {"id": "a100-sxm-80gb", "name": "A100 SXM (80GB)",
             "changes": [
                 {"provider": "lambda", "gpu_count": 8, "tier": "on-demand", "kind": "drop", "old_usd_per_hour": "11.12",
                  "new_usd_per_hour": "8.80", "change_pct": -20.9},
                 {"provider": "runpod", "gpu_count": 1, "tier": "spot", "kind": "new", "old_usd_per_hour": None,
                  "new_usd_per_hour": "0.89", "change_pct": None},
                 {"provider": "aws", "gpu_count": 8, "tier": "on-demand", "kind": "gone", "old_usd_per_hour": "32.77",
                  "new_usd_per_hour": None, "change_pct": None}],
             "cheapest_now": {"provider_name": "Lambda", "usd_per_gpu_hour": "1.10"},
             "new_cheapest": {"provider_name": "Lambda", "usd_per_gpu_hour": "1.10"},
             "old_cheapest": {"provider_name": "RunPod", "usd_per_gpu_hour": "1.39"},
             "spot_spread_pct": 19.1, "series_30d": series, "prices_at": OBSERVED_AT.isoformat()},
            {"id": "rtx-4090", "name": "GeForce RTX 4090",
             "changes": [{"provider": "vastai", "gpu_count": 1, "tier": "on-demand", "kind": "rise",
                          "old_usd_per_hour": "0.31", "new_usd_per_hour": "0.35", "change_pct": 12.9}],
             "cheapest_now": {"provider_name": "Vast.ai", "usd_per_gpu_hour": "0.35"}, "new_cheapest": None,
             "old_cheapest": None, "spot_spread_pct": None, "series_30d": [], "prices_at": OBSERVED_AT.isoformat()},
        ],
        "since": "2025-05-27T09:00:00+00:00", "prices_at": OBSERVED_AT.isoformat(), "threshold_pct": 5.0,
        "threshold_usd_per_gpu_hour": 0.05, "suppressed": 1, "change_count": 4,
        "sources": [{"source": "skypilot", "provider": "aws", "observed_at": "2025-05-30T08:00:00+00:00",
                     "age_hours": 96.0, "failing": True, "error": "timeout"}],
    }


def _pinned_no(catalog: Any) -> Verdict:
    """'Will 70B full fine-tune fit on 8x A100 40GB?': a direct no, plans that fit, near misses, buy vs rent."""
    offers = catalog.offers_by_gpu
    memory = MemoryEstimate(61.3, 52.0, 70.1, {"weights": 8.2, "gradients": 8.2, "optimizer": 33.0,
                                               "activations": 6.1, "logits": 3.8, "overhead": 2.0}, 16, "fsdp", 0.0)
    buy = Finding("cost.buy_vs_rent", "info", {"break_even_hours": 15236.4, "utilisation_3y_pct": 58.0,
                                               "purchase_usd": 17000.0, "rent_usd_per_gpu_hour": 1.2,
                                               "power_usd_per_hour": 0.078, "gpus": 16, "power_usd_per_kwh": 0.15})
    options = (Option("a100-sxm-80gb", 16, 2, "fsdp", ("checkpointing",), memory, 41.2, Decimal("791.04"),
                      offers["a100-sxm-80gb"][0], (buy,)),)
    rejected = (Rejection("a100-sxm-40gb", "fit.vram", {"needed_gib": 145.1, "has_gib": 40, "gpus": 8,
                                                        "max_gpus_tried": 8, "usable_gib": 38.0}),
                Rejection("rtx-4090", "fit.needs_more_gpus", {"needed_gib": 31.0, "has_gib": 24, "gpus": 2, "usable_gib": 22.8}))
    findings = (Finding("fit.pinned", "fail", {"gpu": "a100-sxm-40gb", "gpus": 8, "needed_gib": 145.1,
                                               "has_gib": 40, "usable_gib": 38.0, "reason": "fit.vram"}),
                Finding("time.not_estimated", "info", {"method": "inference", "reason": "no_measured_decode_rates"}))
    workload = Workload(params_b=70.0, method="full", gpus=8, gpu="a100-sxm-40gb", tokens=1e8)
    return Verdict(workload, {"params_b": 70.0, "method": "full", "grad_checkpointing": "full"},
                   ("grad_checkpointing",), memory, options, rejected, findings, "frontier")


def _running_on_my_card(catalog: Any) -> Verdict:
    """'Can I run a 70B on my 4090?': no in its memory, only with offload; more cards, a bigger card, rent."""
    offers = catalog.offers_by_gpu
    memory = MemoryEstimate(42.3, 41.1, 43.6, {"weights": 40.2, "kv_cache": 1.2, "activations": 0.2,
                                               "overhead": 0.7}, 1, "none", 19.5)
    slow = Throughput(1, 3.9, 3.9, 1038.0, 2.9, 5.2, "offload", 0)
    rent = Throughput(1, 24.6, 24.6, 3100.0, 17.7, 32.6, "bandwidth", 6)
    two = MemoryEstimate(40.6, 39.4, 41.9, {"weights": 38.3, "kv_cache": 1.2, "activations": 0.3,
                                            "overhead": 0.8}, 1, "none", 0.0)
    options = (Option("l40s-48gb", 1, 1, "none", (), two, None, None, offers["l40s-48gb"][0],
                      (Finding("quant.4bit", "warn", {"precision": "awq", "bits_per_weight": 4.156}),),
                      precision="awq", engine="vllm", throughput=rent, usd_per_million_output_tokens=6.21,
                      usd_per_month=401.5),)
    findings = (
        Finding("pinned.more_gpus", "info", {"gpu": "rtx-4090", "gpus": 2, "precision": "gguf-q4_k_m",
                                             "needed_gib": 21.6}),
        Finding("pinned.one_card", "info", {"gpu": "l40s-48gb", "vram_gb": 48, "precision": "awq", "needed_gib": 40.6}),
        Finding("serving.context_growth", "info", {"context_tokens": 4096, "gpu": "rtx-4090", "gpus": 1,
                                                   "concurrency": 1, "needed_gib_4k": 42.3, "kv_cache_gib_4k": 1.25,
                                                   "needed_gib_32k": 51.1, "kv_cache_gib_32k": 10.0,
                                                   "needed_gib_128k": 81.1, "kv_cache_gib_128k": 40.0,
                                                   "fp8_kv_saves_gib": 0.62}),
    )
    precisions = (PrecisionFit("bf16", False, 135.0, 22.2, "quant.none"), PrecisionFit("int8", False, 71.3, 22.2,
                  "quant.int8"), PrecisionFit("awq", False, 40.6, 22.2, "quant.4bit"),
                  PrecisionFit("gguf-q4_k_m", False, 42.3, 22.8, "quant.gguf"))
    workload = Workload(params_b=70.6, method="running", gpus=1, gpu="rtx-4090")
    return Verdict(workload, {"params_b": 70.6, "method": "running", "engine": "llama.cpp",
                              "quantization": "gguf-q4_k_m", "precision": "gguf-q4_k_m", "concurrency": 1,
                              "context_tokens": 4096}, ("engine", "quantization", "precision", "context_tokens"),
                   memory, options, (), findings, "workstation",
                   pinned=Pinned("rtx-4090", 1, False, "gguf-q4_k_m", 42.3, 22.8, 19.5, slow),
                   command=Command("llama.cpp", ("llama-server", "-m", "Llama-3.1-70B-Q4_K_M.gguf", "-ngl", "43",
                                                 "-c", "4096", "--parallel", "1")),
                   precisions=precisions)


def _serving_many(catalog: Any) -> Verdict:
    """'Serve a 70B to 100 users at 8k': plans sized for 100 x 8k of KV cache, tokens/s and $/M tokens."""
    offers = catalog.offers_by_gpu
    memory = MemoryEstimate(51.9, 50.4, 53.6, {"weights": 16.4, "kv_cache": 31.3, "activations": 1.5,
                                               "overhead": 2.7}, 8, "tensor_parallel", 0.0)
    rate = Throughput(100, 2150.0, 21.5, 45000.0, 1620.0, 2800.0, "bandwidth", 131)
    options = (Option("a100-sxm-80gb", 8, 1, "tensor_parallel", (), memory, None, None, offers["a100-sxm-80gb"][0],
                      (), precision="bf16", engine="vllm", throughput=rate, usd_per_million_output_tokens=1.14,
                      usd_per_month=6424.0),)
    workload = Workload(params_b=70.6, method="serving", concurrency=100, context_tokens=8192)
    return Verdict(workload, {"params_b": 70.6, "method": "serving", "engine": "vllm", "quantization": "bf16",
                              "precision": "bf16", "concurrency": 100, "context_tokens": 8192},
                   ("engine", "quantization", "precision"), memory, options, (), (), "datacenter",
                   command=Command("vllm", ("vllm", "serve", "meta-llama/Llama-3.1-70B-Instruct",
                                            "--tensor-parallel-size", "8", "--max-model-len", "8192",
                                            "--max-num-seqs", "100", "--gpu-memory-utilization", "0.9")),
                   precisions=(PrecisionFit("bf16", True, 51.9, 72.6, "quant.none"),
                               PrecisionFit("awq", True, 40.1, 72.6, "quant.4bit")))


def _price_markets() -> tuple[str, Any, datetime]:
    """Issue 18: a marketplace median ("from"), an auction price (Mithril's H100 8x row: $8.00/h = $1.00/GPU-h in
    knowledge/data/prices/skypilot-v7/mithril.csv) and prices a year old, on a card read on 2026-11-25."""
    from bot.render.views import ProviderPrice

    seen = datetime(2025, 11, 12, tzinfo=UTC)
    rows = (
        ProviderPrice("mithril", "Mithril", None, Decimal("1.00"), 3600, seen, None, "auction"),
        ProviderPrice("vast", "Vast.ai", Decimal("1.80"), None, 1, seen, "marketplace", None),
        ProviderPrice("lambda", "Lambda", Decimal("2.99"), None, 60, seen, "on-demand", None),
    )
    gpu = sample_catalog().gpus["a100-sxm-80gb"]
    return "price", PriceView(gpu, rows, seen), datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def card_samples() -> dict[str, tuple[str, Any, datetime]]:
    """name → (card kind, view, now): every card kind, the guides' tables among them."""
    c = sample_catalog()
    col = lambda gpu_id: gpu_column(c, gpu_id)  # noqa: E731
    state = {"v": 1, "i": "advise", "w": {"params_b": 13.0, "method": "qlora"}}
    rec = RecommendationView(
        _verdict(c), c.gpus, c.providers, "13B", "qlora", OBSERVED_AT, "fine-tune 13B with QLoRA on a budget",
        ("asap",), (WhatIf("whatif.method.lora", "btn.lora", state), WhatIf("whatif.gpus.more", "btn.more", state),
                    WhatIf("whatif.ondemand", "btn.on_demand", state), WhatIf("compare.top2", "btn.compare_top2", state),
                    WhatIf("share", "btn.share", state)))
    none = RecommendationView(_nothing_fits(c), c.gpus, c.providers, "70B", "full", OBSERVED_AT, "", (),
                              (WhatIf("whatif.method.qlora", "btn.qlora", state), WhatIf("share", "btn.share", state)))
    fit = (FitLine("A100 SXM (80GB)", 1, 30.4, 7.9, Decimal("8.69"), vram_gb=80, usable_gib=76.0),
           FitLine("A100 SXM (40GB)", reason_code="fit.vram",
                   reason_numbers={"needed_gib": 42.3, "has_gib": 40, "usable_gib": 38.0}, vram_gb=40, usable_gib=38.0))
    fit_verdict = decide_comparison((Contender("a100-sxm-80gb", 1, 7.9, Decimal("8.69")), Contender("a100-sxm-40gb", None)))
    # 34B LoRA: one A100 80GB against two L40S (needs 71.0 GiB on one card, 40.2 each on two): cheaper, a little slower
    pick = (FitLine("A100 SXM (80GB)", 1, 71.0, 30.0, Decimal("45.00"), vram_gb=80, usable_gib=76.0),
            FitLine("L40S", 2, 40.2, 28.0, Decimal("65.00"), vram_gb=48, usable_gib=45.6))
    pick_verdict = decide_comparison((Contender("a100-sxm-80gb", 1, 30.0, Decimal("45.00")),
                                      Contender("l40s-48gb", 2, 28.0, Decimal("65.00"))))
    rent = {g: (col(g).cheapest_on_demand.usd_per_gpu_hour if col(g).cheapest_on_demand else None)
            for g in ("a100-sxm-80gb", "l40s-48gb", "a100-sxm-40gb", "gb200", "b300", "mi350x")}
    kb = KnowledgeView(
        "Can NVLink pool two cards' memory?",
        "No. An NVLink bridge speeds up traffic between two GPUs, but each GPU still sees only its own memory.",
        (("RTX 4090 NVLink", "no"), ("H100 SXM NVLink", "900 GB/s")),
        (("NVIDIA NVLink", "https://www.nvidia.com/en-us/data-center/nvlink/"),),
        (("interconnect.pcie", "PCIe vs NVLink"), ("sharding.fsdp", "What does FSDP shard?")), question="nvlink 96gb?")
    return {
        "comparison-guide002": ("comparison", ComparisonView(
            (col("a100-sxm-80gb"), col("l40s-48gb"), col("a100-sxm-40gb")), OBSERVED_AT,
            strengths=catalog_strengths([c.gpus[g] for g in ("a100-sxm-80gb", "l40s-48gb", "a100-sxm-40gb")], rent)), NOW),
        "comparison-guide000": ("comparison", ComparisonView(
            (col("gb200"), col("b300"), col("mi350x")), OBSERVED_AT,
            strengths=catalog_strengths([c.gpus[g] for g in ("gb200", "b300", "mi350x")], rent)), NOW),
        "comparison-fit": ("comparison", ComparisonView((col("a100-sxm-80gb"), col("a100-sxm-40gb")), OBSERVED_AT,
                                                        "compare a100 80 vs 40 for 13B QLoRA", ("13B", "qlora"), fit,
                                                        fit_verdict), NOW),
        "comparison-pick": ("comparison", ComparisonView((col("a100-sxm-80gb"), col("l40s-48gb")), OBSERVED_AT,
                                                         "a100 80gb vs l40s for 34b lora", ("34B", "lora"), pick,
                                                         pick_verdict), NOW),
        "specs-l40s": ("specs", SpecsView(col("l40s-48gb"), OBSERVED_AT, "specs L40S"), NOW),
        "specs-v100": ("specs", SpecsView(col("v100-sxm2-16gb"), OBSERVED_AT), NOW),
        "price-a100": ("price", PriceView(c.gpus["a100-sxm-80gb"], provider_prices(c, "a100-sxm-80gb"), OBSERVED_AT),
                       NOW),
        "price-none": ("price", PriceView(c.gpus["gb200"], (), OBSERVED_AT), NOW),
        "price-markets": _price_markets(),
        "clarify-gpu": ("clarification", ClarifyView("gpu_ambiguous", "a100", (Choice("A100 SXM (80GB)", "a100-sxm-80gb"),
                        Choice("A100 SXM (40GB)", "a100-sxm-40gb")), state, "lora on a100"), NOW),
        "clarify-size": ("clarification", ClarifyView("model_size_missing", None, tuple(
            Choice(f"{s}B", s) for s in ("7", "13", "70")), state), NOW),
        "clarify-unknown": ("clarification", ClarifyView("gpu_unknown", "rtx 9999", (), state), NOW),
        "clarify-compare": ("clarification", ClarifyView("compare_needs_two", None, (), state), NOW),
        "help": ("help", HelpView(), NOW),
        "error": ("error", ErrorView("generic", "1a2b3c4d"), NOW),
        "error-expired": ("error", ErrorView("expired"), NOW),
        "knowledge": ("knowledge", kb, NOW),
        "knowledge-choose": ("knowledge", KnowledgeView("", "", related=kb.related, choose=True), NOW),
        "recommendation": ("recommendation", rec, NOW),
        "recommendation-none": ("recommendation", none, NOW),
        "recommendation-pinned": ("recommendation", RecommendationView(
            _pinned_no(c), c.gpus, c.providers, "70B", "full", OBSERVED_AT, "will 70b full fine-tune fit on 8x a100 40gb?",
            (), (WhatIf("whatif.method.lora", "btn.lora", state), WhatIf("share", "btn.share", state))), NOW),
        "serving-pinned-offload": ("serving", RecommendationView(
            _running_on_my_card(c), c.gpus, c.providers, "Llama 3.1 70B", "running", OBSERVED_AT,
            "Can I run Llama 3.1 70B on my 4090?", (),
            (WhatIf("whatif.gpus.more", "btn.more", state), WhatIf("share", "btn.share", state))), NOW),
        "serving-many-users": ("serving", RecommendationView(
            _serving_many(c), c.gpus, c.providers, "Llama 3.1 70B", "serving", OBSERVED_AT,
            "serve Llama 3.1 70B to 100 users at 8k", (),
            (WhatIf("whatif.quant.fp8", "btn.quant.fp8", state), WhatIf("share", "btn.share", state))), NOW),
        "clarify-model-unknown": ("clarification", ClarifyView("model_unknown", "qwen3-coder-nextgen", (
            Choice("Qwen3 32B", "qwen3-32b"),), state), NOW),
        # What a 24 GB card runs, one user at 4k: rows as bot.answer.capacity builds them. Needs are weights (params x
        # bits / 8: BF16 16 bits, Q4_K_M 4.85, MXFP4 4.25) plus cache and the engine's reserve; rates one user's.
        "capacity": ("capacity", CapacityView(c.gpus["rtx-4090"], 1, (
            CapacityRow("llama-3.1-8b", "Llama 3.1 8B", 8.03, True, "bf16", 16.3, 22.8, 0.0, 48.0, 4096),
            CapacityRow("gpt-oss-20b", "gpt-oss-20b", 20.9, True, "mxfp4", 13.0, 22.8, 0.0, 211.0, 4096),
            CapacityRow("qwen3-32b", "Qwen3 32B", 32.8, True, "gguf-q4_k_m", 20.6, 22.8, 0.0, 37.0, 4096),
            CapacityRow("llama-3.3-70b", "Llama 3.3 70B", 70.55, False, "gguf-q4_k_m", 42.3, 22.8, 19.5, 4.0, 4096),
            CapacityRow("deepseek-r1", "DeepSeek-R1", 671.0, False, "gguf-q4_k_m", 383.4, 22.8, 360.6, 4.2, 4096),
        ), {"v": 1, "i": "advise", "w": {"gpu": "rtx-4090", "gpus": 1, "method": "running"}},
            "what can I run on my 4090?"), NOW),
        # What a 24 GB card fine-tunes at 2,048 tokens: Llama 3.1 8B in BF16 is 15.0 GiB of frozen weights (LoRA
        # fits), Qwen3 14B 27.6 GiB (LoRA cannot; in NF4 7.1 GiB: QLoRA fits), 70B in NF4 34 GiB (nothing fits).
        "capacity-training": ("capacity", CapacityView(c.gpus["rtx-4090"], 1, (), {
            "v": 1, "i": "advise", "w": {"gpu": "rtx-4090", "gpus": 1, "method": "lora"}},
            "what can I fine-tune on my 4090?", training=(
                TrainingCapacityRow("llama-3.1-8b", "Llama 3.1 8B", 8.03, (
                    TrainingFit("full", "fits", 22.8), TrainingFit("lora", "fits", 18.3),
                    TrainingFit("qlora", "fits", 17.0))),
                TrainingCapacityRow("qwen3-14b", "Qwen3 14B", 14.8, (
                    TrainingFit("full", "no", 60.2), TrainingFit("lora", "no", 29.9),
                    TrainingFit("qlora", "fits", 16.8))),
                TrainingCapacityRow("llama-3.3-70b", "Llama 3.3 70B", 70.55, (
                    TrainingFit("full", "no", 140.0), TrainingFit("lora", "offload", 5.5),
                    TrainingFit("qlora", "no", 44.1)))), seq_len=2048), NOW),
        # Which card to buy for local models: rows as bot.answer.buying builds them (cheapest first, each card holding
        # a larger ladder model than every cheaper one; prices dated: street with its date, list with its year).
        "buying": ("buying", BuyingView((
            BuyingRow("arc-b580", "Arc B580 12GB", 12.0, 249.0, "new", "2024", "qwen3-14b", "Qwen3 14B", 14.8,
                      "gguf-q4_k_m", 9.9, 11.4, 37.6, 4096),
            BuyingRow("rtx-5060-ti-16gb", "GeForce RTX 5060 Ti 16GB", 16.0, 429.0, "new", "2025", "mistral-small-24b",
                      "Mistral Small 3 (24B)", 23.572, "gguf-q4_k_m", 14.9, 15.2, 24.3, 4096),
            BuyingRow("rtx-4090", "GeForce RTX 4090", 24.0, 2200.0, "street", "2026-02-01", "qwen3-32b", "Qwen3 32B",
                      32.8, "gguf-q4_k_m", 20.6, 22.8, 37.0, 4096),
        ), None, {"v": 1, "i": "advise", "w": {"method": "running"}}, "which gpu should I buy for local LLMs?",
            (), "Llama 3.2 3B"), NOW),
        "buying-none": ("buying", BuyingView((), 50.0, {"v": 1, "i": "advise", "w": {"method": "running"}},
                                             "best GPU under $50 for local LLMs", (), "Llama 3.2 3B"), NOW),
        "digest": ("digest", _digest_view(), NOW),
        "digest-empty": ("digest", {**_digest_view(), "gpus": [], "change_count": 0, "sources": []}, NOW),
    }


def test_samples_cover_every_card_kind() -> None:
    from bot.render.cards import KINDS

    assert {kind for kind, _, _ in card_samples().values()} == set(KINDS)
