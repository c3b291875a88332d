"""Peak GPU memory of a language-model run, per GPU, with a breakdown and a low/high band.

Model states follow the recipe (DESIGN §3); activations follow Korthikanti et al. 2022
("Reducing Activation Recomputation in Large Transformer Models", arXiv 2205.05198, §4) adapted
to Llama-style blocks with FlashAttention/SDPA (no s² term): per layer the saved tensors are the
two norm inputs and outputs, Q, K, V, the attention output, and the gated-MLP intermediates.
"""

from __future__ import annotations

from typing import NamedTuple

from rules.memory.parts import CUDA_CONTEXT_GIB, GIB, RESERVE_FRACTION, MemoryParts
from rules.workload.frameworks import SELECTIVE_KEEPS, optimizer_state_bytes, weight_and_grad_bytes
from rules.workload.setup import Setup
from rules.workload.shapes import Shape

# Bytes per logit element at the loss peak: bf16 logits (2) + fp32 upcast (4) + fp32 log-softmax
# (4) kept for backward, then fp32 gradient (4) + gradient of the upcast (4) = 18. torchtune's
# README shows 17.1 GiB saved by chunked CE on Llama 3.2 3B at b=2, s=4096 (1.05e9 logits).
# Model code that computes the loss on bf16 logits (no upcast, e.g. Qwen-1 remote code) keeps
# bf16 logits (2) + bf16 log-softmax (2) and their gradients (2 + 2) = 8.
# torchtune's chunked CE (CEWithChunkedOutputLoss, 8 chunks) still materialises every bf16 logit
# (2) but upcasts and differentiates one chunk at a time ((4 + 4) / 8 = 1): 3.
# Unsloth's 2023-24 Triton CE kernel reads bf16 logits (2) and writes the gradient in place.
# Cut cross-entropy (Wijmans et al. 2024, arXiv 2411.09009; Unsloth since Nov 2024) never
# materialises the logits: only a per-token log-sum-exp, negligible per vocabulary entry.
# "fused" = a fused linear + CE that keeps roughly a quarter of the bf16 logits (Liger-style chunks).
# Hugging Face models (transformers < 4.45 upcast the whole logits to fp32 in forward): at the
# start of backward the fp32 log-softmax kept for backward (4), its incoming gradient (4) and the
# gradient it produces (4) coexist = 12; the shifted fp32 copy made in forward is gone by then.
LOGIT_BYTES = {"full": 18.0, "fp32_upcast": 12.0, "compiled": 4.0, "bf16": 8.0, "chunked": 3.0,
               "bf16_inplace": 2.0, "fused": 0.25, "cce": 0.0}
# "compiled": a torch.compile'd loss that upcasts inside the compiled graph (torchtitan components/loss.py since
# 2025: torch.compile(cross_entropy(pred.float()))): inductor keeps only the bf16 logits (2) and writes a bf16
# gradient (2); the fp32 upcast and log-softmax live inside the fused kernels.
# "fused" (Liger FusedLinearCrossEntropy): logits are made chunk by chunk, chunk = BT / ceil(V / H) tokens, so
# one fp32 chunk (4 B x H/V per element of the full logits) and its in-place gradient: 8 H / V; for Llama 3
# (H 4096, V 128,256) 0.26 B per logit element, at most a quarter of a byte for larger vocabularies.
# With checkpointing, backward recomputes one block and holds its activations plus their
# gradients at once: about two blocks' worth of saved tensors.
BACKWARD_WORKING_LAYERS = 2.0
# PEFT's prepare_model_for_kbit_training upcasts the non-quantised parameters (embeddings, LM
# head, norms) to fp32 in Hugging Face-based QLoRA; torchtune and Unsloth keep them in bf16.
KBIT_UPCAST_FRAMEWORKS = ("hf", "axolotl", "llamafactory", "deepspeed")
# NF4 with double quantisation: 4 bits + 8-bit absmax per 64 + fp32 per 256 absmax blocks
# (Dettmers et al. 2023, QLoRA §3); GPTQ int4 with group 128 is within 1 %.
NF4_BYTES = 0.5 + 1 / 64 + 4 / (64 * 256)
# torchtune builds a QLoRA model on the GPU: every linear is created in bf16 and converted with
# torchao's to_nf4 one by one. The freed bf16 blocks are split by the smaller NF4 allocations, so
# the caching allocator's *reserved* memory after init exceeds the NF4 weights by about 0.4x the
# bf16 size of the quantised linears. Source: torchtune docs/source/tutorials/qlora_finetune.rst
# (Llama-2-7B: "Peak memory reserved, model init" 9.13 GB for QLoRA; NF4 weights + bf16 embeddings
# and head are 3.9 GB, the bf16 linears 12.96 GB: (9.13 - 3.9) / 12.96 = 0.40). The training-peak
# rows of that table are *not* used for this constant. Single device only (FSDP loads shards).
# Later logs of the same recipe show no such floor: torchtune issue #1398 (2024-08-23, v0.2.x), Llama 3.1 8B
# QLoRA default config, "Memory stats after model init: allocation 6.19 GiB, reserved 6.27 GiB" (the NF4
# weights and bf16 embeddings, nothing more). So the floor holds for runs before v0.2 (2024-07-16) only.
QUANTISE_ON_INIT_FRAGMENT = 0.40
QUANTISE_ON_INIT_FRAMEWORKS = ("torchtune",)
QUANTISE_ON_INIT_UNTIL = "2024-07-16"


# adapter_param_count by shape object, rank and targets: the planner asks for the same count for every GPU and
# plan of a request (a Shape is immutable; the entry holds the shape, so its id is not reused while cached).
_ADAPTER_COUNTS: dict[tuple[int, int, tuple[str, ...]], tuple[Shape, float]] = {}
_ADAPTER_COUNTS_LIMIT = 1024


def adapter_param_count(shape: Shape, rank: int, targets: tuple[str, ...]) -> float:
    """LoRA parameters: r·(d_in + d_out) per adapted matrix, per layer (MoE: per expert)."""
    key = (id(shape), rank, targets)
    found = _ADAPTER_COUNTS.get(key)
    if found is not None and found[0] is shape:
        return found[1]
    if len(_ADAPTER_COUNTS) >= _ADAPTER_COUNTS_LIMIT:
        _ADAPTER_COUNTS.clear()
    total = _count_adapter_params(shape, rank, targets)
    _ADAPTER_COUNTS[key] = (shape, total)
    return total


def _count_adapter_params(shape: Shape, rank: int, targets: tuple[str, ...]) -> float:
    h, kv, f = shape.hidden_size, shape.kv_dim, shape.intermediate_size
    dims = {"q": (h, h), "k": (h, kv), "v": (h, kv), "o": (h, h), "gate": (h, f), "up": (h, f),
            "down": (f, h)}
    experts = max(shape.moe_experts, 1)
    per_layer = 0.0
    for target in targets:
        if target in dims:
            d_in, d_out = dims[target]
            copies = experts if target in ("gate", "up", "down") else 1
            per_layer += copies * rank * (d_in + d_out)
    total = per_layer * shape.layers
    if "lm_head" in targets:
        total += rank * (h + shape.vocab_size)
    return total


def trainable_params(shape: Shape, setup: Setup) -> float:
    """Parameters the optimizer updates: every weight for full training, else the LoRA adapters."""
    if setup.method in ("full", "pretrain"):
        return shape.params_b * 1e9
    return adapter_param_count(shape, setup.lora_rank, setup.lora_targets)


def frozen_weight_bytes(shape: Shape, weight_format: str, framework: str = "hf") -> float:
    """Base weights in their storage format; QLoRA keeps embeddings and the LM head unquantised."""
    params = shape.params_b * 1e9
    embed_bytes = 4.0 if framework in KBIT_UPCAST_FRAMEWORKS else 2.0
    if weight_format == "nf4":
        return shape.linear_params * NF4_BYTES + shape.embedding_params * embed_bytes
    if weight_format == "int8":
        return shape.linear_params * (1 + 4 / 4096) + shape.embedding_params * embed_bytes
    if weight_format == "fp32":
        return params * 4
    return params * 2


def layer_activation_elements(shape: Shape, kernels: str) -> float:
    """Saved elements per token in one block (FlashAttention: no s² term)."""
    h, kv = shape.hidden_size, shape.kv_dim
    f = shape.intermediate_size * max(shape.moe_active_experts, 1)
    mlp_tensors = 4 if shape.gated_mlp else 2  # gate, up, act(gate), product | fc1 out, act out
    if kernels == "fused":
        return 5 * h + 2 * kv + mlp_tensors / 2 * f  # fused RMSNorm and SwiGLU keep inputs only
    return 6 * h + 2 * kv + mlp_tensors * f


def selective_layer_elements(shape: Shape, setup: Setup) -> float:
    """Saved elements per token of one block under selective checkpointing (rules.workload.frameworks)."""
    h, kv = shape.hidden_size, shape.kv_dim
    f = shape.intermediate_size * max(shape.moe_active_experts, 1)
    keeps = SELECTIVE_KEEPS.get(setup.framework, "half")
    if keeps == "op":  # every other matmul output + attention output + block input
        return (3 * h + 2 * kv + 2 * f) / 2 + 2 * h
    if keeps == "all":
        return layer_activation_elements(shape, setup.kernels)
    return (layer_activation_elements(shape, setup.kernels) + h) / 2  # every other block checkpointed


def activation_split(shape: Shape, setup: Setup) -> tuple[float, float]:
    """(saved, working): what the forward keeps for backward, and what recomputing one block adds in backward."""
    element = 4.0 if setup.recipe == "fp32" else 2.0
    tokens = setup.seq_len / max(setup.context_parallel, 1) * setup.batch_size * element
    layer = layer_activation_elements(shape, setup.kernels) * tokens
    boundary = shape.hidden_size * tokens  # one layer input kept per checkpoint
    layers = shape.layers
    working = BACKWARD_WORKING_LAYERS * layer
    if setup.checkpointing == "full":
        saved = layers * boundary
    elif setup.checkpointing == "offloaded":
        saved = 2 * boundary
    elif setup.checkpointing == "selective":
        saved = layers * selective_layer_elements(shape, setup) * tokens
    else:
        saved, working = layers * layer, 0.0
    return saved + 2 * boundary, working  # + embedding output and final norm output


def activation_bytes(shape: Shape, setup: Setup) -> float:
    """Saved activations for one micro-batch under the checkpointing mode, with the backward working set."""
    saved, working = activation_split(shape, setup)
    return saved + working


def logit_bytes(shape: Shape, setup: Setup) -> float:
    """Loss memory: bytes per logit element by loss implementation (context parallel splits the tokens)."""
    tokens = setup.batch_size * setup.seq_len / max(setup.context_parallel, 1)
    return LOGIT_BYTES[setup.logits] * tokens * shape.vocab_size


class _States(NamedTuple):
    """Model states per GPU (bytes), an intermediate of `estimate_parts` (a tuple: several per estimate)."""

    weights: float
    gradients: float
    optimizer: float
    adapters: float
    cpu: float = 0.0


def _full_states(shape: Shape, setup: Setup) -> _States:
    params = shape.params_b * 1e9
    weight_b, grad_b, _ = weight_and_grad_bytes(setup.recipe)
    extra = setup.extra_grad_bytes if setup.recipe == "mixed" else 0
    return _States(
        weights=params * weight_b,
        gradients=params * (grad_b + extra),
        optimizer=params * optimizer_state_bytes(setup.optimizer, setup.recipe),
        adapters=0.0,
    )


def _adapter_states(shape: Shape, setup: Setup) -> _States:
    count = adapter_param_count(shape, setup.lora_rank, setup.lora_targets)
    per_param = setup.adapter_bytes * 2  # adapter weight + its gradient
    if setup.optimizer in ("adamw8bit", "paged_adamw8bit"):
        per_param += 2
    else:
        per_param += 2 * setup.adapter_bytes
    return _States(
        weights=frozen_weight_bytes(shape, setup.weight_format, setup.framework),
        gradients=0.0,
        optimizer=0.0,
        adapters=count * per_param,
    )


def init_reserved_bytes(shape: Shape, setup: Setup) -> float:
    """Allocator reserve left by quantising bf16 linears on the GPU at model init (0 elsewhere)."""
    if (setup.weight_format != "nf4" or setup.gpus > 1 or setup.framework not in QUANTISE_ON_INIT_FRAMEWORKS
            or not setup.framework_date or setup.framework_date >= QUANTISE_ON_INIT_UNTIL):
        return 0.0
    nf4 = frozen_weight_bytes(shape, "nf4", setup.framework)
    return nf4 + QUANTISE_ON_INIT_FRAGMENT * shape.linear_params * 2.0


def _layer_weight_bytes(shape: Shape, setup: Setup) -> float:
    """One block's weights as gathered by ZeRO-3/FSDP (in their storage format)."""
    linear = shape.linear_params / max(shape.layers, 1)
    per_param = NF4_BYTES if setup.weight_format == "nf4" else 2.0
    return linear * per_param


def _shard(states: _States, shape: Shape, setup: Setup) -> _States:
    """Divide states over GPUs by ZeRO stage / FSDP, then move offloaded parts to the host."""
    n = max(setup.gpus, 1)
    w, g, o, a = states.weights, states.gradients, states.optimizer, states.adapters
    stage = {"zero1": 1, "zero2": 2, "zero3": 3, "fsdp": 3}.get(setup.sharding, 0) if n > 1 else 0
    if setup.offload and stage == 0:
        stage = 2 if setup.gpus == 1 else stage  # single-GPU offload = ZeRO-Offload
    o = o / n if stage >= 1 else o
    g = g / n if stage >= 2 else g
    if stage >= 3:
        w, a = w / n, a / n
    cpu = 0.0
    if setup.offload:
        cpu = o + g
        o, g = 0.0, 0.0
        if stage >= 3 or setup.sharding in ("zero3", "fsdp"):
            cpu += w
            w = 0.0
    if stage >= 3 or (setup.offload and setup.sharding in ("zero3", "fsdp")):
        w += 2 * _layer_weight_bytes(shape, setup)  # current + prefetched block
    return _States(w, g, o, a, cpu)


def estimate_parts(shape: Shape, setup: Setup, *, device_gib: float | None = None) -> MemoryParts:
    """Peak memory per GPU by part (training; serving is rules.memory.serving). Paged optimizer state
    (bitsandbytes, unified memory) fills what the card has left and pages the rest to the host: `device_gib`
    (the card) says how much stays resident; without it all of it is counted as resident."""
    full = setup.method in ("full", "pretrain")
    states = _shard(_full_states(shape, setup) if full else _adapter_states(shape, setup), shape, setup)
    paged = 0.0
    if setup.optimizer.startswith("paged") and states.optimizer > 0:
        paged, states = states.optimizer, _States(states.weights, states.gradients, 0.0, states.adapters,
                                                   states.cpu)
    acts = activation_bytes(shape, setup)
    logits = logit_bytes(shape, setup)
    if setup.weight_format in ("nf4", "int8"):
        acts += 2 * 2 * shape.hidden_size * shape.intermediate_size  # dequantised working copies
    dynamic = acts + logits
    static = states.weights + states.adapters
    grads = states.gradients
    in_flight = grads + dynamic if setup.grads_persist else max(grads, dynamic)
    shown_grads = grads if setup.grads_persist or grads >= dynamic else 0.0
    shown_dynamic = 1.0 if setup.grads_persist or dynamic > grads else 0.0
    allocated = static + states.optimizer + in_flight
    reserve = max(RESERVE_FRACTION * in_flight, init_reserved_bytes(shape, setup) - allocated)
    resident = paged
    if device_gib is not None:
        fixed = allocated + reserve + CUDA_CONTEXT_GIB * GIB
        resident = min(paged, max(0.0, device_gib * GIB - fixed))
    return MemoryParts(
        weights=states.weights / GIB,
        gradients=shown_grads / GIB,
        optimizer=states.optimizer / GIB,
        adapters=states.adapters / GIB,
        activations=acts * shown_dynamic / GIB,
        logits=logits * shown_dynamic / GIB,
        context=CUDA_CONTEXT_GIB,
        reserve=reserve / GIB,
        cpu_offload=(states.cpu + paged - resident) / GIB,
        allocated_peak=allocated / GIB,
        paged=resident / GIB,
    )
