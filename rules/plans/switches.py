"""The memory savers the planner may turn on, in order of what they cost the user, and when each applies.

The planner (rules.plans.fit) tries them one at a time on each GPU count before it adds GPUs, and
CPU/NVMe offload only after every count failed without it (issue 17 item 2). What each saver does to
memory is in rules.memory.training; what it costs in speed is in rules.speed.training (`switch_costs`).

Where each comes from (the frameworks that provide it; a user who named another framework does not
get it):
- checkpointing: every framework (HF `gradient_checkpointing`, torchtune `enable_activation_checkpointing`,
  Unsloth `use_gradient_checkpointing`, DeepSpeed activation checkpointing, Megatron `--recompute-*`).
- chunked_loss: torchtune `CEWithChunkedOutputLoss` (recipes/configs, since v0.3, Aug 2024); Liger
  kernel's FusedLinearCrossEntropy (HF `use_liger_kernel`, axolotl `liger_fused_linear_cross_entropy`,
  LLaMA-Factory `enable_liger_kernel`); Unsloth's cut cross-entropy is on by default.
- 8bit_optimizer / paged_optimizer: bitsandbytes AdamW8bit / PagedAdamW8bit (HF `optim=adamw_bnb_8bit` /
  `paged_adamw_8bit`, torchtune `optimizer=bitsandbytes.optim.PagedAdamW8bit`,
  docs/source/tutorials/memory_optimizations.rst "Lower precision optimizers": paged optimizers "will
  also offload to CPU if there isn't enough GPU memory available"). Paged state that pages out is a
  form of offload, so the planner lets it page out only in the offload pass; until then it must fit.
- optimizer_in_backward: torchtune `optimizer_in_bwd` (memory_optimizations.rst "Fusing optimizer step into
  backward pass"; not compatible with gradient accumulation), pure bf16 weights as its recipes use.
- activation_offload: torchtune `enable_activation_offloading` (needs activation checkpointing);
  Unsloth `use_gradient_checkpointing="unsloth"` (offloaded checkpoints).
- qlora: only when the user allowed it (it changes the trained model's base precision); for diffusion
  models an NF4 base (bitsandbytes; SimpleTuner nf4-bnb, the diffusers Flux QLoRA recipe).
- cache_latents (diffusion): latents and text embeddings computed once, the VAE and text encoders off the
  GPU (kohya `--cache_latents --cache_text_encoder_outputs`, SimpleTuner always, ai-toolkit
  `cache_latents_to_disk` / `cache_text_embeddings`); not with text-encoder training.
- fp8_base (diffusion LoRA): the frozen denoiser stored in 8 bits (kohya and musubi `--fp8_base`,
  ai-toolkit `quantize: true`, SimpleTuner int8/fp8-quanto): the ecosystem's default way to train
  Flux-class models on 24 GB, so open unless the user stated a precision.
- context_parallel: ring attention over the GPUs of a node (torchtitan `context_parallel_degree`,
  benchmarks/llama3_h100_202412_torchtitan.md Table 2; Megatron `--context-parallel-size`), for
  sequences of at least CONTEXT_PARALLEL_MIN_SEQ tokens.
- offload / nvme_offload: DeepSpeed ZeRO-Offload / ZeRO-Infinity (`offload_optimizer`/`offload_param`
  device cpu / nvme), FSDP CPUOffload; torchtune's 70B full fine-tune on 8x A100 uses it (README).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rules.types import Workload
from rules.workload.setup import Setup, with_switch

SWITCH_ORDER = ("cache_latents", "checkpointing", "chunked_loss", "8bit_optimizer", "optimizer_in_backward",
                "activation_offload", "micro_batch", "fp8_base", "qlora", "context_parallel")
# Tried only after every GPU count failed with the savers above: each keeps state in host RAM (or NVMe).
# paged_optimizer = bitsandbytes paged 8-bit state that pages out to host RAM when the card is full.
OFFLOAD_ORDER = ("paged_optimizer", "offload", "nvme_offload")
# Frameworks that provide a switch; None = all of them.
SWITCH_FRAMEWORKS: dict[str, tuple[str, ...] | None] = {
    "cache_latents": None,
    "fp8_base": None,
    "checkpointing": None,
    "chunked_loss": ("hf", "torchtune", "axolotl", "llamafactory", "unsloth"),
    "8bit_optimizer": ("hf", "torchtune", "unsloth", "axolotl", "llamafactory"),
    "paged_optimizer": ("hf", "torchtune", "unsloth", "axolotl", "llamafactory"),
    "optimizer_in_backward": ("torchtune",),
    "activation_offload": ("torchtune", "unsloth"),
    "micro_batch": None,
    "qlora": ("hf", "torchtune", "unsloth", "axolotl", "llamafactory", "deepspeed"),
    "context_parallel": ("torchtitan", "megatron", "deepspeed", "axolotl", "llamafactory"),
    "offload": ("deepspeed", "hf", "axolotl", "llamafactory", "torchtune"),
    "nvme_offload": ("deepspeed", "hf", "axolotl", "llamafactory"),
}
# Context parallelism pays for its ring communication only when activations dominate: torchtitan turns
# it on from 64k tokens per sequence (Table 2: FSDP 4 x CP 2 at 65,536); one GPU holds 32k with FSDP alone.
CONTEXT_PARALLEL_MIN_SEQ = 32_768
# On Apple silicon (unified memory) training runs through MLX (mlx-lm: LoRA, QLoRA on a 4-bit model and full
# fine-tuning, mlx-lm LORA.md) or PyTorch on MPS. Not there: bitsandbytes' 8-bit and paged optimizers (CUDA
# kernels), Liger's fused chunked loss (Triton kernels) and torchtune's fused optimizer step, and offloading
# to "host" RAM is the same memory the GPU already uses (activation, CPU and NVMe offload gain nothing).
UNIFIED_UNAVAILABLE = frozenset({"8bit_optimizer", "paged_optimizer", "chunked_loss", "optimizer_in_backward",
                                 "activation_offload", "offload", "nvme_offload"})
_FULL = ("full", "pretrain")
_CHEAP_LOSSES = ("chunked", "fused", "bf16_inplace", "cce")


@dataclass(frozen=True, slots=True)
class Permission:
    """Which switches the user left open: a given input is never overridden."""

    switches: frozenset[str]
    framework_named: bool

    def __init__(self, switches: frozenset[str], framework_named: bool) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "switches", switches)
        object.__setattr__(self, "framework_named", framework_named)


def permission_for(workload: Workload, *, unified: bool = False) -> Permission:
    """Savers the planner may turn on without being asked: those whose input the user did not give.

    QLoRA changes the base model's precision, so it needs the user's consent (allowed_switches);
    offload is open unless the user said `offload=False`. `unified`: a Mac, where UNIFIED_UNAVAILABLE are not.
    """
    open_: set[str] = set(workload.allowed_switches)
    if workload.grad_checkpointing is None:
        open_ |= {"checkpointing", "activation_offload"}
    if getattr(workload, "loss", None) is None:
        open_.add("chunked_loss")
    if workload.optimizer is None or workload.optimizer.lower().startswith("paged"):
        open_ |= {"8bit_optimizer", "paged_optimizer"}
    if workload.optimizer is None and workload.recipe is None and workload.precision in (None, "bf16"):
        open_.add("optimizer_in_backward")
    if workload.batch_size is None:
        open_.add("micro_batch")
    if workload.cache_latents is None and not workload.text_encoder_training:
        open_.add("cache_latents")
    if workload.precision is None:
        open_.add("fp8_base")
    open_.add("context_parallel")  # applies only on more than one GPU (a count the user fixed is kept)
    if workload.offload is not False:
        open_ |= set(OFFLOAD_ORDER)
    if unified:
        open_ -= UNIFIED_UNAVAILABLE
    return Permission(frozenset(open_), workload.framework is not None)


def applicable(switch: str, setup: Setup, permission: Permission) -> bool:
    """Allowed, offered by the user's framework (any when none was named) and able to save memory here."""
    frameworks = SWITCH_FRAMEWORKS[switch]
    if switch not in permission.switches or not setup.is_training:
        return False
    if permission.framework_named and frameworks is not None and setup.framework not in frameworks:
        return False
    return _saves(switch, setup)


def _saves(switch: str, setup: Setup) -> bool:
    return _SAVES[switch](setup)


def _llm(setup: Setup) -> bool:
    return not setup.is_diffusion


def _full(setup: Setup) -> bool:
    return setup.method in _FULL


# Whether each switch saves memory on a setup; one check per switch, evaluated only for that switch.
_SAVES: dict[str, Callable[[Setup], bool]] = {
    "cache_latents": lambda s: s.is_diffusion and not s.cache_latents and not s.text_encoder_training,
    "checkpointing": lambda s: s.checkpointing == "none",
    "chunked_loss": lambda s: _llm(s) and s.logits not in _CHEAP_LOSSES,
    "8bit_optimizer": lambda s: _full(s) and s.optimizer in ("adamw", "paged_adamw"),
    "paged_optimizer": lambda s: (_llm(s) and _full(s) and not s.offload
                                  and s.optimizer in ("adamw", "adamw8bit", "paged_adamw8bit", "paged_adamw")),
    "optimizer_in_backward": lambda s: _llm(s) and _full(s) and s.recipe in ("mixed", "bf16"),
    "activation_offload": lambda s: s.checkpointing == "full",
    # Gradient accumulation keeps the effective batch; it cannot run with the step fused into backward.
    "micro_batch": lambda s: s.batch_size > 1 and s.recipe != "bf16_in_backward",
    "fp8_base": lambda s: s.is_diffusion and s.uses_adapters and s.weight_format in ("bf16", "fp16"),
    "qlora": lambda s: s.method == "lora",
    "context_parallel": lambda s: (_llm(s) and s.gpus > 1 and s.context_parallel == 1
                                   and s.seq_len >= CONTEXT_PARALLEL_MIN_SEQ),
    "offload": lambda s: not s.offload,
    "nvme_offload": lambda s: not s.offload or s.offload_target != "nvme",
}


def ladder(setup: Setup, permission: Permission, order: tuple[str, ...] = SWITCH_ORDER
           ) -> list[tuple[tuple[str, ...], Setup]]:
    """(), then switches added one at a time in `order`, only those allowed and applicable; each step
    with its setup (the previous step's with one more switch on)."""
    steps: list[tuple[tuple[str, ...], Setup]] = [((), setup)]
    current = setup
    for switch in order:
        if applicable(switch, current, permission):
            current = with_switch(current, switch)
            steps.append((steps[-1][0] + (switch,), current))
    return steps
