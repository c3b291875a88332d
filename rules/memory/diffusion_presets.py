"""Diffusion model presets: the components a training run holds (denoiser, text encoders, VAE) and their shapes.

Parameter counts and shapes from each model's published config files on Hugging Face (the `source` of
each preset): the denoiser's config.json (UNet block widths and transformer depths; DiT blocks, width,
patch), the text encoders' configs and the VAE's config (latent channels, spatial/temporal compression).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DiffusionModel:
    """One diffusion model family member, by component."""

    id: str
    kind: str  # "unet" or "dit"
    denoiser_params_b: float
    encoders: tuple[tuple[str, float], ...]  # frozen text encoders: (name, parameters in billions)
    vae_params_b: float
    spatial_factor: int  # VAE downscale per side (8; 16 for Wan 2.2 TI2V-5B)
    temporal_factor: int  # video VAEs compress 4 frames into one latent frame; images 1
    patch: int  # DiT patch side in latent pixels (2); UNet 1
    hidden: int  # DiT width; UNet: widest transformer width
    depth: int  # DiT blocks a token passes through (double-stream + single-stream); UNet 0
    weight_blocks: int  # DiT blocks with their own weights (a double-stream block counts twice: two streams)
    mlp_ratio: float  # DiT MLP width / hidden
    joint_text_tokens: int  # text tokens in the joint attention sequence (MMDiT, Flux, HunyuanVideo); 0 = cross-attention
    unet_blocks: tuple[tuple[int, int], ...]  # UNet transformer blocks: (count, width)
    context_dim: int  # cross-attention context width (UNet); text width for DiTs
    video: bool
    source: str


PRESETS: dict[str, DiffusionModel] = {
    # UNet 859.5M (block_out_channels 320/640/1280/1280, one transformer block per attention resnet:
    # 5 at 320, 5 at 640, 6 at 1280), CLIP ViT-L/14 text encoder 123.1M, AutoencoderKL 83.7M.
    "sd15": DiffusionModel("sd15", "unet", 0.8595, (("clip-l", 0.1231),), 0.0837, 8, 1, 1, 1280, 0, 0, 0.0, 0,
                           ((5, 320), (5, 640), (6, 1280)), 768, False,
                           "stable-diffusion-v1-5/stable-diffusion-v1-5 unet/config.json, text_encoder, vae"),
    # UNet 2.567B (transformer_layers_per_block 1/2/10 at 320/640/1280: 10 blocks at 640, 60 at 1280),
    # CLIP ViT-L 123.1M + OpenCLIP ViT-bigG 694.7M, AutoencoderKL 83.7M; cross-attention width 2048.
    "sdxl": DiffusionModel("sdxl", "unet", 2.567, (("clip-l", 0.1231), ("clip-g", 0.6947)), 0.0837, 8, 1, 1,
                           1280, 0, 0, 0.0, 0, ((10, 640), (60, 1280)), 2048, False,
                           "stabilityai/stable-diffusion-xl-base-1.0 unet/config.json, text_encoder(_2), vae"),
    # MMDiT 2.03B (24 joint blocks x 2 streams, width 1536, patch 2), CLIP-L + CLIP-G + T5-XXL encoder
    # 4.76B, 16-channel VAE; joint sequence = image tokens + 77 CLIP + 256 T5 tokens (max_sequence_length).
    "sd3-medium": DiffusionModel("sd3-medium", "dit", 2.03, (("clip-l", 0.1231), ("clip-g", 0.6947),
                                                             ("t5-xxl", 4.762)), 0.0838, 8, 1, 2, 1536, 24,
                                 48, 4.0, 333, (), 4096, False, "stabilityai/stable-diffusion-3-medium-diffusers"),
    "sd3.5-medium": DiffusionModel("sd3.5-medium", "dit", 2.47, (("clip-l", 0.1231), ("clip-g", 0.6947),
                                                                 ("t5-xxl", 4.762)), 0.0838, 8, 1, 2, 1536, 24,
                                   48, 4.0, 333, (), 4096, False, "stabilityai/stable-diffusion-3.5-medium"),
    # MMDiT 8.1B: 38 joint blocks, width 2432.
    "sd3.5-large": DiffusionModel("sd3.5-large", "dit", 8.06, (("clip-l", 0.1231), ("clip-g", 0.6947),
                                                               ("t5-xxl", 4.762)), 0.0838, 8, 1, 2, 2432, 38,
                                  76, 4.0, 333, (), 4096, False, "stabilityai/stable-diffusion-3.5-large"),
    # FluxTransformer2DModel 11.9B: 19 double-stream + 38 single-stream blocks, width 3072, MLP 4x, patch 2;
    # CLIP-L + T5-XXL encoder 4.76B (max_sequence_length 512 for dev, 256 for schnell), 16-channel VAE.
    "flux.1-dev": DiffusionModel("flux.1-dev", "dit", 11.9, (("clip-l", 0.1231), ("t5-xxl", 4.762)), 0.0838, 8, 1,
                                 2, 3072, 57, 76, 4.0, 512, (), 4096, False, "black-forest-labs/FLUX.1-dev transformer"),
    "flux.1-schnell": DiffusionModel("flux.1-schnell", "dit", 11.9, (("clip-l", 0.1231), ("t5-xxl", 4.762)), 0.0838,
                                     8, 1, 2, 3072, 57, 76, 4.0, 256, (), 4096, False,
                                     "black-forest-labs/FLUX.1-schnell transformer"),
    # WanTransformer3DModel: 1.3B = 30 blocks, width 1536, FFN 8960; 14B = 40 blocks, width 5120, FFN 13824;
    # patch (1, 2, 2); umT5-XXL encoder 5.68B (512 tokens, cross-attention); Wan-VAE 127M, 4x8x8 compression.
    "wan2.1-1.3b": DiffusionModel("wan2.1-1.3b", "dit", 1.3, (("umt5-xxl", 5.68),), 0.127, 8, 4, 2, 1536, 30,
                                  30, 8960 / 1536, 0, (), 4096, True, "Wan-AI/Wan2.1-T2V-1.3B-Diffusers"),
    "wan2.1-14b": DiffusionModel("wan2.1-14b", "dit", 14.0, (("umt5-xxl", 5.68),), 0.127, 8, 4, 2, 5120, 40,
                                 40, 13824 / 5120, 0, (), 4096, True, "Wan-AI/Wan2.1-T2V-14B-Diffusers"),
    # Wan 2.2 A14B: two 14B experts (high- and low-noise); a LoRA run trains one expert at a time.
    "wan2.2-a14b": DiffusionModel("wan2.2-a14b", "dit", 14.0, (("umt5-xxl", 5.68),), 0.127, 8, 4, 2, 5120, 40,
                                  40, 13824 / 5120, 0, (), 4096, True, "Wan-AI/Wan2.2-T2V-A14B-Diffusers"),
    # Wan 2.2 TI2V-5B: 30 blocks, width 3072, FFN 14336; Wan2.2-VAE 16x16x4 compression.
    "wan2.2-5b": DiffusionModel("wan2.2-5b", "dit", 5.0, (("umt5-xxl", 5.68),), 0.7, 16, 4, 2, 3072, 30,
                                30, 14336 / 3072, 0, (), 4096, True, "Wan-AI/Wan2.2-TI2V-5B-Diffusers"),
    # HunyuanVideo 13B: 20 dual-stream + 40 single-stream blocks, width 3072, MLP 4x, patch (1, 2, 2);
    # text: LLaVA-LLaMA-3-8B (8B) + CLIP-L, 256 text tokens in the joint sequence; causal 3D VAE 246M, 4x8x8.
    "hunyuanvideo": DiffusionModel("hunyuanvideo", "dit", 12.8, (("llava-llama-3-8b", 8.03), ("clip-l", 0.1231)),
                                   0.246, 8, 4, 2, 3072, 60, 80, 4.0, 256, (), 4096, True,
                                   "hunyuanvideo-community/HunyuanVideo transformer/config.json"),
}
# How people and catalogs name them (catalog ids, Hugging Face ids, short names), lower case.
ALIASES: dict[str, str] = {
    "sd-1.5": "sd15", "sd1.5": "sd15", "stable-diffusion-v1-5": "sd15", "sdxl": "sdxl",
    "stable-diffusion-xl-base-1.0": "sdxl", "sd3": "sd3-medium", "stable-diffusion-3-medium": "sd3-medium",
    "stable-diffusion-3-medium-diffusers": "sd3-medium", "sd3.5-medium": "sd3.5-medium",
    "stable-diffusion-3.5-medium": "sd3.5-medium", "sd3.5-large": "sd3.5-large", "sd3.5": "sd3.5-large",
    "stable-diffusion-3.5-large": "sd3.5-large", "flux.1-dev": "flux.1-dev", "flux": "flux.1-dev",
    "flux.1-schnell": "flux.1-schnell", "wan2.1-t2v-1.3b": "wan2.1-1.3b", "wan2.1-1.3b": "wan2.1-1.3b",
    "wan2.1-t2v-14b": "wan2.1-14b", "wan2.1-14b": "wan2.1-14b", "wan2.1": "wan2.1-14b",
    "wan2.2-t2v-a14b": "wan2.2-a14b", "wan2.2-i2v-a14b": "wan2.2-a14b", "wan2.2-a14b": "wan2.2-a14b",
    "wan2.2": "wan2.2-a14b", "wan2.2-ti2v-5b": "wan2.2-5b", "wan2.2-5b": "wan2.2-5b",
    "hunyuanvideo": "hunyuanvideo", "hunyuan-video": "hunyuanvideo",
}
