"""Diffusion presets attach to catalog models by id, Hugging Face id or name; shapes from the model configs."""

import dataclasses

import pytest

from rules.memory.diffusion import PRESETS, find_diffusion_model, latent_tokens, lora_params


def test_catalog_presets_are_found_by_id(snapshot):
    assert find_diffusion_model(snapshot.models["flux.1-dev"], None).id == "flux.1-dev"
    assert find_diffusion_model(snapshot.models["sd-1.5"], None).id == "sd15"
    assert find_diffusion_model(snapshot.models["sdxl"], None).id == "sdxl"


def test_an_unlisted_preset_takes_the_nearest_image_model_by_size(snapshot):
    # Named like SDXL but SD-1.5-sized: the size decides (a substring match would say SDXL).
    odd = dataclasses.replace(snapshot.models["sd-1.5"], id="my-xl-style-unet", name="My XL style", hf_id=None,
                              params_b=0.9, active_params_b=0.9)
    assert find_diffusion_model(odd, None).id == "sd15"
    assert find_diffusion_model(None, 11.0).id in ("flux.1-dev", "flux.1-schnell")
    assert find_diffusion_model(None, None).id == "sdxl"


def test_flux_tokens_follow_the_vae_and_patch():
    """Flux at 1024 px: 1024 / 8 (VAE) / 2 (patch) = 64 per side, 4,096 image tokens."""
    assert latent_tokens(PRESETS["flux.1-dev"], 1024, 1) == 4096


def test_video_tokens_count_latent_frames():
    """Wan 2.1 at the 480p area (632 px side) and 81 frames: (632 / 16)^2 x (1 + 80 / 4 = 21) latent frames."""
    assert latent_tokens(PRESETS["wan2.1-14b"], 632, 81) == pytest.approx((632 / 16) ** 2 * 21)


def test_lora_counts_follow_the_block_shapes():
    """Flux: 76 stream-blocks x r x h x (8 + 2 x 4) = 76 x 16 x 3072 x 16 = 59.8M at rank 16.
    SDXL: (10 x (28 x 640 + 2 x 2048) + 60 x (28 x 1280 + 2 x 2048)) x r = 2,617,600 x 32 = 83.8M at rank 32,
    i.e. ~168 MB in fp16, the size of a rank-32 SDXL LoRA file."""
    assert lora_params(PRESETS["flux.1-dev"], 16) == 76 * 16 * 3072 * 16
    assert lora_params(PRESETS["sdxl"], 32) == (10 * (28 * 640 + 4096) + 60 * (28 * 1280 + 4096)) * 32
