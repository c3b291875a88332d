"""Generating images with a diffusion model: the pipeline's weights by part, and a named card's verdict from them.

Expected values are arithmetic on the parameter counts of the models' published configs (the presets'
sources in rules/memory/diffusion_presets.py): FLUX.1-dev transformer 11.9B, CLIP-L 123.1M + T5-XXL encoder
4.762B, VAE 83.8M; SDXL UNet 2.567B, CLIP-L + OpenCLIP bigG 694.7M, VAE 83.7M. Two bytes a weight in BF16,
one in FP8; GiB = 2**30 bytes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.answer.diffusion_run import card_verdict, pipeline_weights
from rules.types import Workload

NOW = datetime(2026, 11, 26, tzinfo=UTC)
GIB = 2**30


def _card(text: str, snapshot: Any, lang: str = "en") -> str:
    from bot.answer.pipeline import answer

    return answer(text, snapshot=snapshot, now=NOW, lang=lang).terminal()


def test_flux_dev_weights_by_part(snapshot: Any) -> None:
    kind, encoders, denoiser_b, encoders_b, weights = pipeline_weights(Workload(model=snapshot.models["flux.1-dev"]))
    assert (kind, encoders) == ("dit", ("CLIP-L", "T5-XXL"))
    assert weights.denoiser_bf16 == pytest.approx(11.9e9 * 2 / GIB)  # 22.17 GiB
    assert weights.denoiser_fp8 == pytest.approx(11.9e9 / GIB)  # 11.08 GiB
    assert weights.encoders_bf16 == pytest.approx((0.1231 + 4.762) * 1e9 * 2 / GIB)  # 9.10 GiB
    assert weights.all_bf16 == pytest.approx((11.9 + 0.1231 + 4.762 + 0.0838) * 1e9 * 2 / GIB)  # 31.42 GiB
    assert weights.largest_bf16 == weights.denoiser_bf16
    assert weights.largest_fp8 == weights.denoiser_fp8  # the FP8 transformer (11.08) outweighs the encoders (9.10)
    assert encoders_b == pytest.approx(4.8851) and denoiser_b == 11.9


def test_a_card_gets_the_least_offload_its_memory_holds(snapshot: Any) -> None:
    """RTX 4090: 24 GB less the 5 % margin = 22.8 GiB: not 31.4 at once, the 22.17 GiB transformer alone in BF16
    with 0.63 GiB left; an 8 GB card (7.6 GiB usable) holds not even the 11.08 GiB FP8 transformer."""
    flux = pipeline_weights(Workload(model=snapshot.models["flux.1-dev"]))[4]
    key, left, usable = card_verdict(flux, snapshot.gpus["rtx-4090"], 0.05)
    assert (key, usable) == ("diff.run.fits_offload", pytest.approx(22.8))
    assert left == pytest.approx(22.8 - 11.9e9 * 2 / GIB)
    key, need, usable = card_verdict(flux, snapshot.gpus["rtx-3050-8gb"], 0.05)
    assert key == "diff.run.no" and need == pytest.approx(flux.largest_fp8) and usable == pytest.approx(7.6)
    sdxl = pipeline_weights(Workload(model=snapshot.models["sdxl"]))[4]
    key, left, _ = card_verdict(sdxl, snapshot.gpus["rtx-3060"], 0.05)
    assert key == "diff.run.fits_all" and left == pytest.approx(11.4 - (2.567 + 0.1231 + 0.6947 + 0.0837) * 2e9 / GIB)


def test_asked_to_run_flux_the_card_opens_with_generation_not_the_fine_tune(snapshot: Any) -> None:
    card = _card("flux dev inference on a 4090", snapshot)
    lines = [line for line in card.splitlines() if line.strip()]
    assert lines[2].startswith("Generating images with FLUX.1 [dev]")  # before the LoRA verdict
    assert "22.2 GiB in BF16 (11.1 GiB in FP8)" in card and "All on the GPU at once: 31.4 GiB" in card
    assert "GeForce RTX 4090 (22.8 GiB usable): not every part at once" in card
    assert "The rest of this card sizes a LoRA fine-tune of the model." in card


def test_training_flux_gets_no_generation_section(snapshot: Any) -> None:
    assert "Generating images" not in _card("LoRA fine-tune flux dev on a 4090", snapshot)


@pytest.mark.parametrize("lang", ["de", "es", "fr", "ja", "ko", "vi", "zh-Hans"])
def test_the_section_speaks_every_language(snapshot: Any, lang: str) -> None:
    card = _card("can I run flux dev on an 8gb card?", snapshot, lang=lang)
    assert "11,1 GiB" in card or "11.1 GiB" in card
    assert "{" not in card.split("\n", 3)[2]  # every placeholder filled
