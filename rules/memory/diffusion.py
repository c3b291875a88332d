"""Diffusion training memory per GPU: denoiser (LoRA or full), text encoders, VAE and activations by latent tokens.

Components (rules.memory.diffusion_presets): the denoiser's weights in their stored format (bf16 2 B;
fp8/int8 1 B as kohya's `--fp8_base`, ai-toolkit `quantize`, SimpleTuner int8-quanto; NF4 0.516 B as
bitsandbytes), LoRA adapters counted from the block shapes and trained in fp32 (diffusers
`cast_training_params`, kohya's network in fp32 under mixed precision) with their gradients and AdamW
state, or full training states by recipe; the frozen text encoders and the VAE on the GPU unless the run
caches latents and text embeddings (kohya `--cache_latents --cache_text_encoder_outputs`, SimpleTuner
always, ai-toolkit `cache_latents_to_disk` / `cache_text_embeddings`), or trains the text encoder.

Activations: a DiT block keeps about (27 + 2m)·h elements per token (m = MLP ratio), counted on the
diffusers blocks in eager mode (FluxTransformerBlock, FluxSingleTransformerBlock, WanTransformerBlock):
norm and modulation (2h), the q/k/v input (h), q and k RMSNorm computed in fp32 (4h in bf16 units),
rotary embedding applied in fp32 (8h), SDPA's q, k, v and output (4h), output-projection input (h),
second norm and modulation (2h), the MLP's input (h) and its two m·h tensors, residual (h) and the
joint-attention concatenation copies (3h); with checkpointing each
block keeps its input (h) and backward recomputes one block at a time (two blocks' worth at once, as
for LLMs). Tokens per sample = (side / VAE factor / patch)² x latent frames (+ the joint-attention text
tokens). UNets have no token shape to count: saved bytes per latent pixel are fitted on published runs
(tests/cases/diffusion_vram_cases.json).
"""

from __future__ import annotations

from rules.memory.diffusion_presets import ALIASES, PRESETS, DiffusionModel
from rules.memory.parts import CUDA_CONTEXT_GIB, GIB, RESERVE_FRACTION, MemoryParts
from rules.memory.training import BACKWARD_WORKING_LAYERS, NF4_BYTES
from rules.types import ModelSpec
from rules.workload.frameworks import optimizer_state_bytes, weight_and_grad_bytes
from rules.workload.setup import Setup

BASE_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "nf4": NF4_BYTES}
ENCODER_BYTES = 2.0  # frozen text encoders and VAE in bf16/fp16
# UNet saved activation bytes per latent pixel per sample, no checkpointing, bf16 (fitted on the cases:
# tests/cases/diffusion_vram_cases.json); checkpointing keeps UNET_CKPT_SHARE of it (block inputs plus the
# block being recomputed).
UNET_BYTES_PER_LATENT_PX = {"sd15": 1.1e6, "sdxl": 1.2e6}
UNET_CKPT_SHARE = 0.15
# VAE encoding when latents are not cached: its first stage runs at full resolution with 128 channels
# (AutoencoderKL block_out_channels[0]); about six such tensors are alive at once (resnet input, norm,
# activation, conv output, residual, downsample input), in bf16. Video VAEs encode 4 frames per chunk.
VAE_CHANNELS = 128
VAE_LIVE_TENSORS = 6
DIT_BLOCK_ELEMENTS = 27  # per token and block, in units of the width, besides the MLP's 2m (module docstring)
DEFAULT_VIDEO_FRAMES = 40  # ai-toolkit config/examples/train_lora_wan21_14b_24gb.yaml num_frames
VIDEO_SIDE = 632  # sqrt(832 x 480): the 480p pixel area ai-toolkit's Wan configs train at ("around 480p")


def find_diffusion_model(model: ModelSpec | None, params_b: float | None) -> DiffusionModel:
    """The preset for a catalog model (by id, Hugging Face id or name), else the nearest by size (SDXL default)."""
    if model is not None:
        for text in (model.id, (model.hf_id or "").split("/")[-1], model.name):
            key = ALIASES.get(text.strip().lower())
            if key is not None:
                return PRESETS[key]
    size = model.params_b if model is not None else params_b
    if size is None:
        return PRESETS["sdxl"]
    images = [p for p in PRESETS.values() if not p.video]
    return min(images, key=lambda p: abs(p.denoiser_params_b - size))


def default_resolution(model: DiffusionModel) -> int:
    """Native training side: SD 1.5 512 px, SDXL/SD3/Flux 1024 px, video models the 480p area."""
    return 512 if model.id == "sd15" else VIDEO_SIDE if model.video else 1024


def latent_tokens(model: DiffusionModel, resolution: int, frames: int) -> float:
    """Tokens (DiT) or latent pixels (UNet) per sample."""
    side = resolution / model.spatial_factor / model.patch
    latent_frames = 1 + (max(frames, 1) - 1) // model.temporal_factor if model.video else 1
    return side * side * latent_frames


def lora_params(model: DiffusionModel, rank: int) -> float:
    """LoRA on every linear of the blocks: r·(d_in + d_out) each.

    DiT stream-block: qkv (h→3h), out (h→h), MLP in (h→mh), MLP out (mh→h): r·h·(8 + 2m).
    UNet transformer block: self-attention q, k, v, out (4 x 2w), cross-attention q, out (2 x 2w) and k, v
    from the context (2 x (c + w)), GEGLU in (w→8w) and out (4w→w): r·(28w + 2c).
    """
    if model.kind == "dit":
        return model.weight_blocks * rank * model.hidden * (8 + 2 * model.mlp_ratio)
    return sum(count * rank * (28 * width + 2 * model.context_dim) for count, width in model.unet_blocks)


def setup_lora_params(model: DiffusionModel, setup: Setup) -> float:
    """The run's adapter count: a stated count (setup.lora_params) or every linear at the run's rank."""
    return setup.lora_params or lora_params(model, setup.lora_rank)


def activation_bytes(model: DiffusionModel, setup: Setup) -> float:
    """Saved activations (plus the recomputation working set) for one micro-batch."""
    element = 4.0 if setup.recipe in ("fp32", "fp32_in_backward") else 2.0
    tokens = latent_tokens(model, setup.resolution, setup.frames) * setup.batch_size
    checkpointed = setup.checkpointing != "none"
    if model.kind == "unet":
        saved = UNET_BYTES_PER_LATENT_PX.get(model.id, 1.2e6) * tokens * element / 2.0
        return saved * (UNET_CKPT_SHARE if checkpointed else 1.0)
    tokens += model.joint_text_tokens * setup.batch_size
    block = (DIT_BLOCK_ELEMENTS + 2 * model.mlp_ratio) * model.hidden * tokens * element
    if not checkpointed:
        return model.depth * block
    boundaries = (2 if setup.checkpointing == "offloaded" else model.depth) * model.hidden * tokens * element
    return boundaries + BACKWARD_WORKING_LAYERS * block


def _encoder_bytes(model: DiffusionModel, setup: Setup) -> tuple[float, float]:
    """(frozen encoders + VAE weights, VAE encoding working set) on the GPU."""
    weights = 0.0
    if not setup.cache_latents or setup.text_encoder_training:
        weights += sum(params for _, params in model.encoders) * 1e9 * ENCODER_BYTES
    if setup.cache_latents:
        return weights, 0.0
    weights += model.vae_params_b * 1e9 * ENCODER_BYTES
    frames = min(setup.frames, model.temporal_factor) if model.video else 1
    working = VAE_CHANNELS * VAE_LIVE_TENSORS * setup.resolution ** 2 * frames * setup.batch_size * ENCODER_BYTES
    return weights, working


def _denoiser_states(model: DiffusionModel, setup: Setup) -> tuple[float, float, float, float]:
    """(weights, gradients, optimizer, adapters) of the denoiser."""
    params = model.denoiser_params_b * 1e9
    if setup.uses_adapters:
        count = setup_lora_params(model, setup)
        moments = 2.0 if "8bit" in setup.optimizer else 0.05 if setup.optimizer == "adafactor" else 2.0 * setup.adapter_bytes
        return (params * BASE_BYTES.get(setup.weight_format, 2.0), 0.0, 0.0,
                count * (2 * setup.adapter_bytes + moments))
    weight_b, grad_b, _ = weight_and_grad_bytes(setup.recipe)
    return params * weight_b, params * grad_b, params * optimizer_state_bytes(setup.optimizer, setup.recipe), 0.0


def diffusion_parts(model: DiffusionModel, setup: Setup) -> MemoryParts:
    """Per-GPU peak for diffusion training; FSDP (or ZeRO-3) shards the denoiser's weights and states."""
    weights, grads, optim, adapters = _denoiser_states(model, setup)
    n = max(setup.gpus, 1) if setup.sharding in ("fsdp", "zero3") else 1
    weights, grads, optim = weights / n, grads / n, optim / n
    cpu = 0.0
    if setup.offload:  # kohya blocks_to_swap / ZeRO offload: optimizer state and all but two blocks on the host
        cpu, optim, grads = optim + grads, 0.0, 0.0
    encoders, vae_working = _encoder_bytes(model, setup)
    acts = activation_bytes(model, setup)
    if setup.weight_format in ("fp8", "int8", "nf4"):  # one dequantised linear (and its input) at a time
        acts += 2 * 2 * model.hidden * model.hidden * max(model.mlp_ratio, 4.0)
    dynamic = max(acts + grads, vae_working)
    allocated = weights + encoders + optim + adapters + dynamic
    return MemoryParts(
        weights=(weights + encoders) / GIB, gradients=grads / GIB, optimizer=optim / GIB, adapters=adapters / GIB,
        activations=(dynamic - grads) / GIB, logits=0.0, context=CUDA_CONTEXT_GIB,
        reserve=RESERVE_FRACTION * dynamic / GIB, cpu_offload=cpu / GIB, allocated_peak=allocated / GIB,
    )
