"""Training on a Mac: planned with what MLX and PyTorch on MPS offer, against the share macOS gives the GPU.

Figures from sources, not from the engine: Llama 3 8B has 8.03e9 parameters (its config on Hugging Face,
models.csv); the M3 Max (36 GB) row lets the GPU use 0.67 of its unified memory and the M2 Ultra (192 GB) 0.75
(`recommendedMaxWorkingSetSize`, knowledge/data/SOURCES.md). bitsandbytes' optimizers are CUDA kernels and Liger's
loss Triton kernels; CPU offload on unified memory moves state to the same memory.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.answer.pipeline import answer
from rules.plans.switches import UNIFIED_UNAVAILABLE

NOW = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
GIB = 2**30
LLAMA3_8B = 8.03e9


def _pinned_plan(reply: Any) -> tuple[Any, Any]:
    verdict = reply.verdict
    assert verdict is not None and verdict.pinned is not None
    option = next((o for o in verdict.options if o.gpu_id == verdict.pinned.gpu), None)
    return verdict, option


def test_full_fine_tune_of_8b_does_not_fit_a_36_gb_mac(snapshot: Any) -> None:
    reply = answer("full fine-tune llama 3 8b on my macbook m3 max 36gb", snapshot=snapshot, now=NOW, lang="en")
    verdict, option = _pinned_plan(reply)
    assert verdict.pinned.gpu == "apple-m3-max-36gb" and verdict.pinned.fits is False and option is None
    # the least any framework there needs: bf16 weights and gradients and two bf16 AdamW states, 8 bytes a parameter
    assert verdict.pinned.needed_gib > LLAMA3_8B * 8 / GIB > 36 * 0.67
    assert "training.unified" in {f.code for f in verdict.findings}
    assert reply.text.startswith("No") or "No:" in str(reply.blocks)
    # the alternatives are rented cards, planned with the usual savers
    assert verdict.options and all(not snapshot.gpus[o.gpu_id].unified_memory for o in verdict.options)


def test_lora_of_8b_fits_the_share_macos_gives_the_gpu_without_cuda_only_savers(snapshot: Any) -> None:
    reply = answer("LoRA fine-tune llama 3 8b on my macbook m3 max 36gb", snapshot=snapshot, now=NOW, lang="en")
    verdict, option = _pinned_plan(reply)
    usable = 36 * 0.67
    assert verdict.pinned.fits is True and option is not None
    assert LLAMA3_8B * 2 / GIB <= option.memory.per_gpu_gib <= usable  # bf16 weights at least, within the share
    assert not set(option.switches) & UNIFIED_UNAVAILABLE
    assert option.memory.cpu_offload_gib == 0
    text = str(reply.blocks)
    assert "macOS lets the GPU use 67%" in text and "safety margin" not in text.split("Top options")[0]


def test_a_mac_the_full_fine_tune_fits_is_told_so_with_its_share(snapshot: Any) -> None:
    reply = answer("full fine-tune llama 3 8b on my mac studio m2 ultra 192gb", snapshot=snapshot, now=NOW, lang="en")
    verdict, option = _pinned_plan(reply)
    assert verdict.pinned.fits is True and option is not None
    assert option.memory.per_gpu_gib <= 192 * 0.75
    assert not set(option.switches) & UNIFIED_UNAVAILABLE


def test_a_rented_card_keeps_the_cuda_savers(snapshot: Any) -> None:
    """The same question on a 24 GB CUDA card still reaches for the 8-bit optimizer (only Macs lose it)."""
    reply = answer("full fine-tune llama 3 8b on 2x rtx 4090", snapshot=snapshot, now=NOW, lang="en")
    verdict, option = _pinned_plan(reply)
    assert option is not None and "8bit_optimizer" in option.switches


def test_the_comparison_line_of_a_mac_names_what_macos_keeps(snapshot: Any) -> None:
    reply = answer("M3 Max 36GB vs RTX 4090 for LoRA on llama 3 8b", snapshot=snapshot, now=NOW, lang="en")
    text = str(reply.blocks)
    assert "67% of the 36 GB unified memory" in text
    assert "less time per job" in text  # not "94% faster" for a job that takes a sixteenth of the time


def test_a_model_bigger_than_the_mac_is_no_not_offload(snapshot: Any) -> None:
    """DeepSeek-R1 in Q4_K_M is ~380 GiB (671e9 weights at ~4.8 bits); a 192 GB Mac has no other RAM to offload
    to: what its GPU may not wire is the same memory."""
    reply = answer("can I run deepseek r1 on my mac studio m2 ultra 192gb?", snapshot=snapshot, now=NOW, lang="en")
    pinned = reply.verdict.pinned if reply.verdict is not None else None
    assert pinned is not None and pinned.fits is False and pinned.offload_gib == 0 and pinned.throughput is None
    assert pinned.needed_gib > 192
    assert "pinned.offload" not in {f.code for f in reply.verdict.findings}
    assert "system RAM" not in str(reply.blocks)


def test_a_pc_card_still_offloads_to_system_ram(snapshot: Any) -> None:
    reply = answer("Can I run Llama 3.1 70B on a single RTX 4090?", snapshot=snapshot, now=NOW, lang="en")
    pinned = reply.verdict.pinned if reply.verdict is not None else None
    assert pinned is not None and pinned.fits is False and pinned.offload_gib > 0
