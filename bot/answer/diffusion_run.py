"""Generating images with a diffusion model: what its weights take, by part, and what that means for a named card.

The engine sizes diffusion training only (rules.engine: a diffusion model never takes the serving path). Asked
to run one ("what GPU do I need to run Flux dev?"), the card opens with this section: the weights of every
part of the pipeline from the preset's parameter counts (each model's published config files:
rules.memory.diffusion_presets), in BF16 and with the denoiser in FP8, all on the GPU at once or one part at a
time as diffusers' model CPU offload moves them (`enable_model_cpu_offload`: each model moves to the GPU when
it runs and back to the CPU after, so the largest part sets the peak). The activations of a generation are not
modelled, so weights are a lower bound: a card they do not fit is a sure "no", a card they fit is "fits, with
this much left for the activations", never a plain yes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rules.memory.diffusion import find_diffusion_model
from rules.memory.parts import GIB
from rules.plans.fit import usable_gib
from rules.types import GpuSpec, Workload

BF16_BYTES = 2.0
FP8_BYTES = 1.0


@dataclass(frozen=True, slots=True)
class PipelineWeights:
    """GiB of each part of a diffusion pipeline's weights."""

    denoiser_bf16: float
    denoiser_fp8: float
    encoders_bf16: float
    vae_bf16: float

    @property
    def all_bf16(self) -> float:
        return self.denoiser_bf16 + self.encoders_bf16 + self.vae_bf16

    @property
    def largest_bf16(self) -> float:
        """The peak of model CPU offload: one part at a time."""
        return max(self.denoiser_bf16, self.encoders_bf16, self.vae_bf16)

    @property
    def largest_fp8(self) -> float:
        """The same with the denoiser in FP8 (the text encoders stay in BF16)."""
        return max(self.denoiser_fp8, self.encoders_bf16, self.vae_bf16)


def pipeline_weights(workload: Workload) -> tuple[str, tuple[str, ...], float, float, PipelineWeights]:
    """(denoiser kind, encoder names, denoiser and encoders' parameters in billions, the weights in GiB)."""
    preset = find_diffusion_model(workload.model, workload.params_b)
    encoders = sum(params for _, params in preset.encoders)
    weights = PipelineWeights(
        denoiser_bf16=preset.denoiser_params_b * 1e9 * BF16_BYTES / GIB,
        denoiser_fp8=preset.denoiser_params_b * 1e9 * FP8_BYTES / GIB,
        encoders_bf16=encoders * 1e9 * BF16_BYTES / GIB,
        vae_bf16=preset.vae_params_b * 1e9 * BF16_BYTES / GIB,
    )
    return preset.kind, tuple(name.upper() for name, _ in preset.encoders), preset.denoiser_params_b, encoders, weights


def card_verdict(weights: PipelineWeights, gpu: GpuSpec, headroom_fraction: float) -> tuple[str, float, float]:
    """(message key, GiB left for activations or the smallest need, the card's usable GiB): the least offload
    whose weights fit the card's usable memory (rules.plans.fit.usable_gib, the margin every plan keeps)."""
    usable = usable_gib(gpu, headroom_fraction)
    for key, need in (("diff.run.fits_all", weights.all_bf16), ("diff.run.fits_offload", weights.largest_bf16),
                      ("diff.run.fits_fp8_offload", weights.largest_fp8)):
        if need <= usable:
            return key, usable - need, usable
    return "diff.run.no", weights.largest_fp8, usable


def diffusion_running_section(workload: Workload, gpus: Mapping[str, GpuSpec] | None, headroom_fraction: float,
                              lang: str) -> str:
    """The section's mrkdwn in `lang`: the parts' weights, the named card's verdict when one was named, and
    that the rest of the card sizes a LoRA fine-tune."""
    from bot.render.cards import language_tools

    messages, f = language_tools(lang)
    kind, encoders, denoiser_b, encoders_b, weights = pipeline_weights(workload)
    name = workload.model.name if workload.model is not None else f"{workload.params_b or denoiser_b:g}B"
    lines = [messages.text(
        "diff.run.parts", model=name,
        denoiser=messages.plain("diff.run.unet") if kind == "unet" else messages.plain("diff.run.transformer"),
        denoiser_b=f.fixed(denoiser_b, 1), denoiser_bf16=f.gib(weights.denoiser_bf16),
        denoiser_fp8=f.gib(weights.denoiser_fp8), encoders=", ".join(encoders), encoders_b=f.fixed(encoders_b, 1),
        encoders_bf16=f.gib(weights.encoders_bf16), vae=f.gib(weights.vae_bf16), all=f.gib(weights.all_bf16),
        largest=f.gib(weights.largest_bf16), largest_fp8=f.gib(weights.largest_fp8))]
    gpu = gpus.get(workload.gpu) if gpus is not None and workload.gpu else None
    if gpu is not None:
        key, amount, usable = card_verdict(weights, gpu, headroom_fraction)
        lines.append(messages.text(key, gpu=gpu.name, usable=f.gib(usable), amount=f.gib(amount)))
    lines.append(messages.text("diff.run.tail"))
    return "\n".join(lines)
