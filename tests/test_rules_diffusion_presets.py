"""Diffusion constants attach to catalog presets by id; sizes come from the catalog, not a second table."""

import dataclasses

from rules.memory.diffusion import DIFFUSION_MODELS, find_diffusion_model


def test_catalog_presets_keep_their_id_and_catalog_size(snapshot):
    # FLUX.1 [dev]'s model card: "a 12 billion parameter rectified flow transformer" (the catalog row).
    flux = snapshot.models["flux.1-dev"]
    found = find_diffusion_model(flux, None)
    assert (found.id, found.denoiser_params_b) == ("flux.1-dev", flux.params_b)
    assert found.encoder_params_b == DIFFUSION_MODELS["flux"].encoder_params_b
    assert find_diffusion_model(snapshot.models["sd-1.5"], None).act_bytes_per_latent_px == (
        DIFFUSION_MODELS["sd15"].act_bytes_per_latent_px)


def test_an_unlisted_preset_takes_the_nearest_size_not_a_name_guess(snapshot):
    # Named like SDXL but SD-1.5-sized: the size decides (the old substring match said SDXL).
    odd = dataclasses.replace(snapshot.models["sd-1.5"], id="my-xl-style-unet", params_b=0.9, active_params_b=0.9)
    found = find_diffusion_model(odd, None)
    assert found.ckpt_fraction == DIFFUSION_MODELS["sd15"].ckpt_fraction and found.id == "my-xl-style-unet"
    assert find_diffusion_model(None, 11.0).encoder_params_b == DIFFUSION_MODELS["flux"].encoder_params_b
    assert find_diffusion_model(None, None) == DIFFUSION_MODELS["sdxl"]
