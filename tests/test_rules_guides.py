"""The buyers' guides' claims (../shared/guides/) as tests; where a claim is physically wrong the test says why."""

from __future__ import annotations

import pytest

from rules.memory.parts import GIB
from rules.memory.training import estimate_parts
from rules.workload.setup import resolve_setup
from rules.workload.shapes import typical_shape
from rules.types import Workload
from rules.engine import evaluate
from test_rules_support import catalog_gpus, model, offers_for, providers, tables

GPUS = catalog_gpus()
OFFERS = offers_for(GPUS)


def run(workload: Workload):
    return evaluate(workload, gpus=GPUS, offers_by_gpu=OFFERS, providers=providers(), tables=tables())


def pinned(verdict):
    """The engine's direct yes/no for the GPU the workload names (alternatives follow it in options)."""
    return next(f for f in verdict.findings if f.code == "fit.pinned")


@pytest.mark.parametrize("batch", [4, 8])
def test_7b_qlora_fits_one_24gb_card(batch):
    """guides/001_650effb1fd5dabe1.txt:106-107: 7B QLoRA on a single RTX 4090 (24GB), batch ~4-8, 4-bit
    (modest sequence length: 512 tokens)."""
    verdict = run(Workload(model=model("meta-llama/Llama-2-7b-hf"), method="qlora", seq_len=512,
                           batch_size=batch, gpu="rtx-4090"))
    assert verdict.options and verdict.options[0].count == 1
    assert verdict.options[0].memory.per_gpu_gib <= 24 * 0.95


def test_13b_needs_two_24gb_cards_or_one_a100():
    """guides/001_650effb1fd5dabe1.txt:110: 13B -> typically 1-2x RTX 4090 or 1x A100 (LoRA, bf16)."""
    base = dict(params_b=13.0, method="lora", seq_len=1024, batch_size=2)
    on_4090 = run(Workload(**base, gpu="rtx-4090"))
    on_a100 = run(Workload(**base, gpu="a100-sxm-80gb"))
    assert on_4090.options and on_4090.options[0].count == 2  # 26 GB of bf16 weights > 24 GB
    assert on_a100.options and on_a100.options[0].count == 1


def test_70b_full_finetune_needs_over_1_1_tb_of_state():
    """guides/003_caba77b3a62453c8.txt:26: fine-tuning a 70B model needs over 1.1 TB (mixed AdamW: 16 B/param)."""
    setup = resolve_setup(Workload(method="full", framework="hf"), method="full", gpus=1)
    parts = estimate_parts(typical_shape(70.0), setup)
    state_bytes = (parts.weights + parts.gradients + parts.optimizer) * GIB
    assert state_bytes > 1.1e12


def test_70b_lora_is_a_plan_of_several_a100s():
    """guides/001_650effb1fd5dabe1.txt:111: 70B model (LoRA) -> 4-8x A100 with a distributed setup."""
    verdict = run(Workload(model=model("meta-llama/Llama-3.1-70B"), method="lora", seq_len=2048,
                           batch_size=2, gpu="a100-sxm-80gb"))
    top = verdict.options[0]
    assert top.count in (2, 4, 8) and top.sharding in ("fsdp", "zero3")
    assert top.count >= 2  # 141 GB of bf16 weights cannot sit on one 80 GB card


@pytest.mark.parametrize(("resolution", "fits"), [(1024, True), (2048, False)])
def test_sdxl_on_24gb(resolution, fits):
    """guides/001_650effb1fd5dabe1.txt:117-119: SDXL at 1024x1024 trains on an RTX 4090 at batch 1-2;
    2048x2048 exceeds 24 GB (full fine-tune, bf16 weights + 8-bit AdamW + gradient checkpointing: kohya's
    --full_bf16 24 GB recipe; "diffusion" alone now means a LoRA, the common case)."""
    verdict = run(Workload(method="full", family="diffusion", recipe="bf16_adamw", resolution=resolution,
                           batch_size=1, optimizer="adamw8bit", grad_checkpointing="full", gpu="rtx-4090", gpus=1,
                           offload=False))
    assert (pinned(verdict).outcome == "pass") is fits
    assert (verdict.options[0].gpu_id == "rtx-4090") is fits


def test_rtx_5090_does_not_hold_a_70b_model():
    """guides/003_caba77b3a62453c8.txt:9 and :43 claim a 32 GB RTX 5090 "handles 70B". Physically wrong:
    even NF4 weights of 70B are ~35 GiB (0.516 B/param) before activations; the engine must refuse."""
    verdict = run(Workload(model=model("meta-llama/Llama-3.1-70B"), method="qlora", seq_len=512, batch_size=1,
                           gpus=1, gpu="rtx-5090"))
    assert pinned(verdict).outcome == "fail"
    assert all(o.gpu_id != "rtx-5090" or o.count > 1 for o in verdict.options)  # only as an alternative
    assert verdict.rejected[0].gpu_id == "rtx-5090" and verdict.rejected[0].code == "fit.vram"
    assert float(verdict.rejected[0].numbers["needed_gib"]) > 32
