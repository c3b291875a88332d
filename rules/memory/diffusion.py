"""Diffusion training memory (SD 1.5, SDXL, Flux): denoiser states + frozen encoders + activations by latent area.

Parameter counts from the model cards (SD 1.5 UNet 0.86B, CLIP-L 0.12B; SDXL UNet 2.57B, CLIP-L +
OpenCLIP-G 0.82B; Flux.1 transformer 11.9B, T5-XXL 4.76B + CLIP-L). Activation bytes per latent
pixel (latent = image/8) are order-of-magnitude estimates from the block widths (not calibrated on
measured runs: the band is wider, ±40 %).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rules.memory.parts import CUDA_CONTEXT_GIB, GIB, RESERVE_FRACTION, MemoryParts
from rules.types import ModelSpec
from rules.workload.frameworks import optimizer_state_bytes, weight_and_grad_bytes
from rules.workload.setup import Setup


@dataclass(frozen=True, slots=True)
class DiffusionModel:
    id: str
    denoiser_params_b: float
    encoder_params_b: float  # text encoders + VAE, frozen
    act_bytes_per_latent_px: float  # saved activations per latent pixel per image, no checkpointing
    ckpt_fraction: float  # share left with gradient checkpointing


DIFFUSION_MODELS = {
    "sd15": DiffusionModel("sd15", 0.86, 0.21, 1.1e6, 0.25),
    "sdxl": DiffusionModel("sdxl", 2.57, 0.90, 1.2e6, 0.25),
    "flux": DiffusionModel("flux", 11.9, 4.97, 1.5e6, 0.12),
}
# Catalog presets (knowledge/data/models.csv, stable ids) these constants belong to.
BY_CATALOG_ID = {"sd-1.5": "sd15", "sdxl": "sdxl", "flux.1-dev": "flux"}


def find_diffusion_model(model: ModelSpec | None, params_b: float | None) -> DiffusionModel:
    """The constants for a catalog diffusion preset, with the catalog's own id and parameter count.

    A preset without constants of its own, or a bare parameter count, takes the nearest by size
    (default SDXL).
    """
    size = model.params_b if model is not None else params_b
    key = BY_CATALOG_ID.get(model.id) if model is not None else None
    if key is None:
        if size is None:
            return DIFFUSION_MODELS["sdxl"]
        key = min(DIFFUSION_MODELS, key=lambda k: abs(DIFFUSION_MODELS[k].denoiser_params_b - size))
    preset = DIFFUSION_MODELS[key]
    if model is None:
        return preset
    return replace(preset, id=model.id, denoiser_params_b=model.params_b)


def diffusion_parts(model: DiffusionModel, setup: Setup) -> MemoryParts:
    """Per-GPU peak for diffusion training (full denoiser fine-tune or LoRA on it)."""
    params = model.denoiser_params_b * 1e9
    encoders = model.encoder_params_b * 1e9 * 2  # bf16, frozen
    if setup.uses_adapters:
        weights, grads, optim = params * 2, 0.0, 0.0
        adapters = 0.01 * params * (2 * setup.adapter_bytes + 2 * setup.adapter_bytes)
    else:
        weight_b, grad_b, _ = weight_and_grad_bytes(setup.recipe)
        weights, grads = params * weight_b, params * grad_b
        optim, adapters = params * optimizer_state_bytes(setup.optimizer, setup.recipe), 0.0
    latent_px = (setup.resolution / 8) ** 2
    acts = model.act_bytes_per_latent_px * latent_px * setup.batch_size
    if setup.checkpointing != "none":
        acts *= model.ckpt_fraction
    allocated = weights + encoders + grads + optim + adapters + acts
    return MemoryParts(
        weights=(weights + encoders) / GIB, gradients=grads / GIB, optimizer=optim / GIB,
        adapters=adapters / GIB, activations=acts / GIB, logits=0.0, context=CUDA_CONTEXT_GIB,
        reserve=RESERVE_FRACTION * (acts + grads) / GIB, cpu_offload=0.0,
        allocated_peak=allocated / GIB,
    )
