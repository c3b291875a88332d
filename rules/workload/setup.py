"""Resolve a `Workload` into a complete `Setup`: every missing input gets a stated default."""

from __future__ import annotations

from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any

from rules.types import Workload
from rules.workload.frameworks import ALL_LINEAR, FRAMEWORK_DEFAULTS, OPTIMIZERS, logits_on, release_date

DEFAULT_FRAMEWORK = "hf"
DEFAULT_METHOD = "lora"
DEFAULT_TRAIN_SEQ_LEN = 2048
DEFAULT_INFERENCE_SEQ_LEN = 4096
DEFAULT_TRAIN_BATCH = 2
DEFAULT_INFERENCE_BATCH = 1
DEFAULT_RESOLUTION = 1024
DIFFUSION_LORA_RANK = 16  # SimpleTuner and ai-toolkit example configs (rank / linear 16)
# Loss implementations a user may name (rules.memory.training LOGIT_BYTES has their memory).
LOSSES = ("full", "fp32_upcast", "compiled", "bf16", "chunked", "bf16_inplace", "fused", "cce")
# Methods with no time model yet (no measured decode or image-step rates): no hours, no cost per job.
UNTIMED_METHODS = frozenset({"inference", "diffusion"})

_TARGET_NAMES = {
    "q": "q", "q_proj": "q", "wq": "q", "k": "k", "k_proj": "k", "wk": "k", "v": "v",
    "v_proj": "v", "wv": "v", "o": "o", "o_proj": "o", "output_proj": "o", "wo": "o",
    "gate": "gate", "gate_proj": "gate", "w1": "gate", "up": "up", "up_proj": "up", "w3": "up",
    "down": "down", "down_proj": "down", "w2": "down", "lm_head": "lm_head", "output": "lm_head",
}
_TARGET_GROUPS = {
    "all": ALL_LINEAR, "all-linear": ALL_LINEAR, "all_linear": ALL_LINEAR, "qv": ("q", "v"),
    "attn": ("q", "k", "v", "o"), "attention": ("q", "k", "v", "o"), "mlp": ("gate", "up", "down"),
    "qkv": ("q", "k", "v"),
}
_RECIPE_ALIASES = {
    "mixed_adamw": "mixed", "mixed": "mixed", "amp": "mixed", "bf16_adamw": "bf16", "bf16": "bf16",
    "pure_bf16": "bf16", "optimizer_in_backward": "bf16_in_backward",
    "optimizer_in_bwd": "bf16_in_backward", "bf16_in_backward": "bf16_in_backward", "fp32": "fp32",
    "fp32_in_backward": "fp32_in_backward", "fused_backward": "fp32_in_backward",
}


@dataclass(frozen=True, slots=True)
class Setup:
    """A fully specified run: what the memory, time and plan rules compute on."""

    method: str
    framework: str
    recipe: str
    optimizer: str
    weight_format: str  # bf16, fp16, fp32, nf4, int8, fp8
    seq_len: int
    batch_size: int
    checkpointing: str
    lora_rank: int
    lora_targets: tuple[str, ...]
    gpus: int
    sharding: str
    offload: bool
    kernels: str
    logits: str
    adapter_bytes: int
    extra_grad_bytes: int
    grads_persist: bool
    resolution: int
    context_parallel: int = 1  # GPUs one sequence is split over (ring attention; 1 = off)
    offload_target: str = "cpu"  # where offloaded states live when `offload`: cpu (ZeRO-Offload) or nvme (ZeRO-Infinity)
    framework_date: str = ""  # ISO date the framework's defaults are taken from ("" = current)
    family: str = "llm"  # llm, or diffusion (image and video diffusion models: rules.memory.diffusion)
    text_encoder_training: bool = False  # diffusion: the text encoder(s) train too
    cache_latents: bool = False  # diffusion: latents and text embeddings cached, encoders and VAE off the GPU
    frames: int = 1  # video diffusion: frames per clip
    lora_params: float = 0.0  # adapter parameters when a source states the count (0 = from the shape)
    compile: bool = False  # torch.compile (recipes' `compile`, torchtitan `training.compile`)

    def __init__(self, method: str, framework: str, recipe: str, optimizer: str, weight_format: str,
                 seq_len: int, batch_size: int, checkpointing: str, lora_rank: int,
                 lora_targets: tuple[str, ...], gpus: int, sharding: str, offload: bool, kernels: str,
                 logits: str, adapter_bytes: int, extra_grad_bytes: int, grads_persist: bool, resolution: int,
                 context_parallel: int = 1, offload_target: str = "cpu", framework_date: str = "",
                 family: str = "llm", text_encoder_training: bool = False, cache_latents: bool = False,
                 frames: int = 1, lora_params: float = 0.0, compile: bool = False) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "framework", framework)
        object.__setattr__(self, "recipe", recipe)
        object.__setattr__(self, "optimizer", optimizer)
        object.__setattr__(self, "weight_format", weight_format)
        object.__setattr__(self, "seq_len", seq_len)
        object.__setattr__(self, "batch_size", batch_size)
        object.__setattr__(self, "checkpointing", checkpointing)
        object.__setattr__(self, "lora_rank", lora_rank)
        object.__setattr__(self, "lora_targets", lora_targets)
        object.__setattr__(self, "gpus", gpus)
        object.__setattr__(self, "sharding", sharding)
        object.__setattr__(self, "offload", offload)
        object.__setattr__(self, "kernels", kernels)
        object.__setattr__(self, "logits", logits)
        object.__setattr__(self, "adapter_bytes", adapter_bytes)
        object.__setattr__(self, "extra_grad_bytes", extra_grad_bytes)
        object.__setattr__(self, "grads_persist", grads_persist)
        object.__setattr__(self, "resolution", resolution)
        object.__setattr__(self, "context_parallel", context_parallel)
        object.__setattr__(self, "offload_target", offload_target)
        object.__setattr__(self, "framework_date", framework_date)
        object.__setattr__(self, "family", family)
        object.__setattr__(self, "text_encoder_training", text_encoder_training)
        object.__setattr__(self, "cache_latents", cache_latents)
        object.__setattr__(self, "frames", frames)
        object.__setattr__(self, "lora_params", lora_params)
        object.__setattr__(self, "compile", compile)

    @property
    def is_training(self) -> bool:
        return self.method != "inference"

    @property
    def is_diffusion(self) -> bool:
        return self.family == "diffusion"

    @property
    def timed(self) -> bool:
        """Whether the time model covers this run (no image/step rates for diffusion, no decode rates)."""
        return self.method not in UNTIMED_METHODS and not self.is_diffusion

    @property
    def uses_adapters(self) -> bool:
        return self.method in ("lora", "qlora")


def parse_lora_targets(text: str | None) -> tuple[str, ...] | None:
    """'all' / 'qv' / 'attn' / 'q_proj,v_proj' -> canonical module names; None when unknown."""
    if text is None:
        return None
    key = text.strip().lower()
    if key in _TARGET_GROUPS:
        return _TARGET_GROUPS[key]
    names = [_TARGET_NAMES.get(part.strip()) for part in key.replace(";", ",").split(",") if part.strip()]
    if not names or any(name is None for name in names):
        return None
    return tuple(dict.fromkeys(name for name in names if name is not None))


def _weight_format(method: str, precision: str | None) -> str:
    if method == "qlora":
        return "int8" if precision == "int8" else "nf4"
    if precision in ("fp32", "fp16", "int8", "fp8", "nf4"):
        return precision
    return "bf16"


def _recipe(workload: Workload, method: str, framework: str, gpus: int) -> str:
    if workload.recipe is not None and workload.recipe.lower() == "fp32_in_backward":
        return "fp32_in_backward"
    if workload.precision == "fp32":
        return "fp32"
    if workload.recipe is not None and workload.recipe.lower() in _RECIPE_ALIASES:
        return _RECIPE_ALIASES[workload.recipe.lower()]
    if workload.precision == "fp16":
        return "mixed"  # fp16 training needs fp32 master weights and loss scaling
    recipe = FRAMEWORK_DEFAULTS[framework].full_recipe if method in ("full", "pretrain") else "bf16"
    if recipe == "bf16_in_backward" and gpus > 1:
        return "bf16"  # torchtune's distributed recipes step after backward
    return recipe


def _optimizer(workload: Workload, method: str, framework: str, recipe: str) -> str:
    given = (workload.optimizer or "").lower().replace("-", "_")
    if given in OPTIMIZERS:
        return given
    aliases = {"adamw_8bit": "adamw8bit", "adamw_bnb_8bit": "adamw8bit", "adam": "adamw",
               "adamw_torch": "adamw", "paged_adamw_8bit": "paged_adamw8bit",
               "paged_adamw_32bit": "paged_adamw", "adamw_torch_fused": "adamw"}
    if given in aliases:
        return aliases[given]
    defaults = FRAMEWORK_DEFAULTS[framework]
    if method in ("full", "pretrain"):
        return defaults.full_optimizer if recipe == "bf16_in_backward" or framework != "torchtune" else "adamw"
    return defaults.lora_optimizer


def _checkpointing(method: str, framework: str) -> str:
    """Framework default; PEFT's prepare_model_for_kbit_training turns checkpointing on for QLoRA."""
    if method == "inference":
        return "none"
    default = FRAMEWORK_DEFAULTS[framework].checkpointing
    return "full" if method == "qlora" and default == "none" else default


def resolve_setup(workload: Workload, *, method: str, gpus: int, family: str = "llm") -> Setup:
    """Fill every missing input from the framework's defaults and the house defaults above.

    Diffusion (family "diffusion"): micro-batch 1, LoRA rank 16, no checkpointing and no caching unless
    asked (the diffusers scripts' and kohya's defaults); the planner turns them on (rules.plans.switches).
    """
    framework = (workload.framework or DEFAULT_FRAMEWORK).lower()
    framework = framework if framework in FRAMEWORK_DEFAULTS else DEFAULT_FRAMEWORK
    defaults = FRAMEWORK_DEFAULTS[framework]
    inference = method == "inference"
    recipe = _recipe(workload, method, framework, gpus)
    sharding = workload.sharding or ("none" if gpus == 1 else defaults.multi_gpu_sharding)
    date = release_date(framework, workload.framework_version)
    loss = (workload.loss or "").lower()
    diffusion = family == "diffusion"
    return Setup(
        method=method,
        framework=framework,
        recipe=recipe,
        optimizer=_optimizer(workload, method, framework, recipe),
        weight_format=_weight_format(method, workload.precision),
        seq_len=workload.seq_len or (DEFAULT_INFERENCE_SEQ_LEN if inference else DEFAULT_TRAIN_SEQ_LEN),
        batch_size=workload.batch_size or (DEFAULT_INFERENCE_BATCH if inference or diffusion else DEFAULT_TRAIN_BATCH),
        checkpointing=workload.grad_checkpointing or ("none" if diffusion else _checkpointing(method, framework)),
        lora_rank=workload.lora_rank or (DIFFUSION_LORA_RANK if diffusion else defaults.lora_rank),
        lora_targets=parse_lora_targets(workload.lora_targets) or defaults.lora_targets,
        gpus=gpus,
        sharding="none" if gpus == 1 and sharding in ("ddp", "none") else sharding,
        offload=bool(workload.offload),
        kernels=defaults.kernels,
        logits=loss if loss in LOSSES else logits_on(framework, date),
        adapter_bytes=defaults.adapter_bytes,
        extra_grad_bytes=defaults.extra_grad_bytes,
        grads_persist=defaults.grads_persist,
        resolution=workload.resolution or DEFAULT_RESOLUTION,
        framework_date=date,
        family="diffusion" if diffusion else "llm",
        text_encoder_training=bool(workload.text_encoder_training),
        cache_latents=bool(workload.cache_latents),
        frames=workload.frames or 1,
        compile=bool(workload.compile),
    )


_SETUP_FIELDS = tuple(f.name for f in fields(Setup))
_SETUP_INDEX = {name: index for index, name in enumerate(_SETUP_FIELDS)}
_setup_values = attrgetter(*_SETUP_FIELDS)


def changed(setup: Setup, **changes: Any) -> Setup:
    """`dataclasses.replace(setup, **changes)` at half the cost (the planner builds dozens of setups per answer):
    every field is an init field and Setup has no __post_init__, so the same constructor call is made."""
    values = list(_setup_values(setup))
    for name, value in changes.items():
        values[_SETUP_INDEX[name]] = value
    return Setup(*values)


def with_switch(setup: Setup, switch: str) -> Setup:
    """The setup with one memory-saving switch on (rules.plans.switches lists them, in ladder order)."""
    if switch == "checkpointing":
        return changed(setup, checkpointing="full")
    if switch == "chunked_loss":
        # torchtune: CEWithChunkedOutputLoss (recipes' `loss`); elsewhere a fused linear + CE that never
        # holds the whole logits (Liger's FusedLinearCrossEntropy: HF `use_liger_kernel`, axolotl, LLaMA-Factory).
        return changed(setup, logits="chunked" if setup.framework == "torchtune" else "fused")
    if switch == "micro_batch":
        return changed(setup, batch_size=1)  # gradient accumulation keeps the effective batch
    if switch == "8bit_optimizer":
        return changed(setup, optimizer="adamw8bit")
    if switch == "paged_optimizer":
        return changed(setup, optimizer="paged_adamw8bit")
    if switch == "optimizer_in_backward":
        return changed(setup, recipe="bf16_in_backward")
    if switch == "activation_offload":
        return changed(setup, checkpointing="offloaded")
    if switch == "qlora":
        return changed(setup, method="qlora", weight_format="nf4")
    if switch == "cache_latents":
        return changed(setup, cache_latents=True)
    if switch == "fp8_base":
        return changed(setup, weight_format="fp8")
    if switch == "context_parallel":
        return changed(setup, context_parallel=max(setup.gpus, 1))
    if switch == "offload":
        return changed(setup, offload=True, offload_target="cpu")
    if switch == "nvme_offload":
        return changed(setup, offload=True, offload_target="nvme")
    raise ValueError(f"unknown switch {switch!r}")
