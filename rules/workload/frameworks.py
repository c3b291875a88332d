"""What each training framework does by default (recipe, optimizer, checkpointing, kernels, LoRA targets).

Sources: Hugging Face Transformers Trainer / PEFT defaults (optim adamw_torch, LoraConfig targets
q_proj,v_proj for Llama, adapters autocast to fp32); torchtune recipes/configs/llama3_1/*.yaml
(8B_full_single_device: PagedAdamW8bit + optimizer_in_bwd + activation checkpointing; lora: r8 on
q,v,output_proj + MLP, chunked cross-entropy since v0.3); Unsloth README (4-bit, adamw_8bit,
offloaded gradient checkpointing, fused cross-entropy, r16 all linear); LLaMA-Factory wiki
(LoRA r8 on all linear, gradient checkpointing on by default); DeepSpeed/Megatron mixed-precision
optimizers keep an extra fp32 gradient buffer (Megatron: 18 B/param, Korthikanti et al. 2022 §2).
"""

from __future__ import annotations

from dataclasses import dataclass

FRAMEWORKS = ("hf", "torchtune", "unsloth", "axolotl", "llamafactory", "deepspeed", "megatron", "torchtitan")
OPTIMIZERS = ("adamw", "adamw8bit", "paged_adamw8bit", "paged_adamw", "adafactor", "sgd", "lion")
ALL_LINEAR = ("q", "k", "v", "o", "gate", "up", "down")


@dataclass(frozen=True, slots=True)
class FrameworkDefaults:
    """Defaults a framework applies when the user does not say."""

    full_recipe: str  # recipe for full fine-tuning / pretraining on one GPU
    full_optimizer: str
    lora_optimizer: str
    checkpointing: str  # default gradient checkpointing for training
    kernels: str  # eager = unfused norms/SwiGLU; fused = Triton/compiled fused ops
    logits: str  # full = fp32 logits + grad; chunked = chunked CE; fused = fused linear+CE
    lora_rank: int
    lora_targets: tuple[str, ...]
    adapter_bytes: int  # bytes per adapter parameter (PEFT autocasts adapters to fp32)
    extra_grad_bytes: int  # extra fp32 gradient buffer per trainable param in mixed precision
    grads_persist: bool  # gradients stay allocated through the next forward (accumulation)
    multi_gpu_sharding: str  # default sharding when more than one GPU
    default_method: str  # what "fine-tune" means here when no method is given


FRAMEWORK_DEFAULTS: dict[str, FrameworkDefaults] = {
    "hf": FrameworkDefaults("mixed", "adamw", "adamw", "none", "eager", "fp32_upcast", 8, ("q", "v"),
                            4, 0, True, "ddp", "lora"),
    "torchtune": FrameworkDefaults("bf16_in_backward", "paged_adamw8bit", "adamw", "full", "eager",
                                   "chunked", 8, ("q", "v", "o", "gate", "up", "down"), 2, 0, False,
                                   "fsdp", "lora"),
    "unsloth": FrameworkDefaults("bf16", "adamw8bit", "adamw8bit", "offloaded", "fused", "cce",
                                 16, ALL_LINEAR, 2, 0, True, "ddp", "qlora"),
    "axolotl": FrameworkDefaults("mixed", "adamw", "adamw", "full", "eager", "fp32_upcast", 8, ALL_LINEAR,
                                 4, 0, True, "fsdp", "lora"),
    "llamafactory": FrameworkDefaults("mixed", "adamw", "adamw", "full", "eager", "fp32_upcast", 8,
                                      ALL_LINEAR, 4, 0, True, "zero2", "lora"),
    # DeepSpeed bf16 ZeRO keeps the bf16 model (2) and bf16 grads (2) besides the fp32 master (4),
    # fp32 grad partition (4) and Adam (8): 20 B/param (ZeRO paper §3 counts 2+2+12 = 16 for fp16
    # plus the fp32 gradient buffer DeepSpeed's bf16_optimizer keeps), i.e. 4 more than HF AMP.
    "deepspeed": FrameworkDefaults("mixed", "adamw", "adamw", "full", "eager", "fp32_upcast", 8, ("q", "v"),
                                   4, 4, True, "zero2", "full"),
    "megatron": FrameworkDefaults("mixed", "adamw", "adamw", "selective", "fused", "fused", 8,
                                  ("q", "v"), 2, 2, True, "zero1", "pretrain"),
    # torchtitan (train_configs/llama3_8b.toml, parallelisms/parallelize_llama.py): FSDP2 with fp32 sharded
    # parameters and a bf16 compute copy (MixedPrecisionPolicy param bf16, reduce fp32), AdamW, selective
    # op-level activation checkpointing, loss = cross_entropy(pred.float()) on the full logits.
    "torchtitan": FrameworkDefaults("mixed", "adamw", "adamw", "selective", "eager", "fp32_upcast", 8, ("q", "v"),
                                    2, 0, False, "fsdp", "pretrain"),
}
# What selective activation checkpointing keeps of a block, as a share of what no checkpointing keeps.
# torchtitan's op-level policy (_save_list in parallelize_llama.py) saves every other matmul output and the
# attention output: for a Llama block that is about (3h + 2kv + 2f) / 2 + h (attention out) + h (block input)
# of the 6h + 2kv + 4f saved without checkpointing, i.e. 35 % for Llama 3 8B. Megatron's selective recompute
# drops only the attention core (softmax, dropout), which FlashAttention never stores: nothing saved.
SELECTIVE_KEEPS = {"torchtitan": "op", "megatron": "all"}

# Release dates of framework versions (git tags), to read a version as the date its defaults date from.
RELEASES = {
    "torchtune": {"0.1": "2024-04-15", "0.2": "2024-07-16", "0.3": "2024-09-17", "0.4": "2024-11-13",
                  "0.5": "2024-12-20", "0.6": "2025-03-18"},
}
# torchtune's recipes computed the loss on full fp32 logits until CEWithChunkedOutputLoss became the configs'
# default (PR #1390, 2024-08-28, released in v0.3); LinearCrossEntropyLoss (PR #2531, 2025-04-30) keeps the
# same order of logit memory. Unsloth's cut cross-entropy replaced its Triton CE kernel in November 2024.
LOGITS_HISTORY: dict[str, tuple[tuple[str, str], ...]] = {
    "torchtune": (("", "full"), ("2024-08-28", "chunked")),
    "unsloth": (("", "bf16_inplace"), ("2024-11-01", "cce")),
}


def release_date(framework: str, version: str | None) -> str:
    """ISO date for a version string ("0.2.1") or a date ("2024-05", "2024-05-10"); "" when unknown."""
    if not version:
        return ""
    text = version.strip().lower().lstrip("v")
    if len(text) >= 4 and text[:4].isdigit() and (len(text) == 4 or text[4] == "-"):
        return text[:10]
    parts = text.split(".")
    return RELEASES.get(framework, {}).get(".".join(parts[:2]), "")


def logits_on(framework: str, date: str) -> str:
    """The framework's loss implementation on `date` ("" = today)."""
    history = LOGITS_HISTORY.get(framework)
    if history is None:
        return FRAMEWORK_DEFAULTS[framework].logits
    value = history[-1][1]
    if date:
        value = [v for since, v in history if since <= date][-1]
    return value


def optimizer_state_bytes(optimizer: str, recipe: str) -> float:
    """Optimizer state bytes per trainable parameter (AdamW: two moments), excluding master weights."""
    state_bytes = 2.0 if recipe in ("bf16", "bf16_in_backward") else 4.0
    if optimizer in ("adamw8bit", "paged_adamw8bit"):
        # bitsandbytes block-wise 8-bit: two 1-byte states + an fp32 absmax per 2048-value block.
        return 2.0 + 2 * 4 / 2048
    if optimizer == "adafactor":
        # Factored second moment (row + column vectors), no first moment by default: ~0 per param.
        return 0.05
    if optimizer in ("sgd", "lion"):
        return state_bytes  # one momentum buffer
    return 2 * state_bytes  # adamw, paged_adamw


def weight_and_grad_bytes(recipe: str) -> tuple[float, float, float]:
    """(weights, gradients, master copy) bytes per trainable parameter for a recipe.

    mixed: fp32 weights/master + fp32 grads (HF AMP) = 4 + 4, Adam adds 8 -> 16 B/param;
    bf16: pure bf16 weights and grads; bf16_in_backward: the step runs in backward, so only one
    parameter's gradient exists at a time (torchtune optimizer_in_bwd); fp32: everything in fp32.
    """
    if recipe == "bf16":
        return 2.0, 2.0, 0.0
    if recipe == "bf16_in_backward":
        return 2.0, 0.0, 0.0
    if recipe == "fp32_in_backward":  # kohya --fused_backward_pass without mixed precision (fp32 weights)
        return 4.0, 0.0, 0.0
    return 4.0, 4.0, 0.0
