"""How the model is to be run: method, precision, framework, sharding, checkpointing, optimizer."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from bot.parse.anchors import has_any
from bot.parse.vocabulary import Vocabulary, build_table, PhraseTable

# Tool names are the same in every language, so they live here rather than in the lexicon files.
FRAMEWORKS: dict[str, str | None] = {
    "unsloth": "unsloth", "axolotl": "axolotl", "llama-factory": "llamafactory",
    "llama factory": "llamafactory", "llamafactory": "llamafactory", "llama_factory": "llamafactory",
    "llamaboard": "llamafactory", "torchtune": "torchtune", "deepspeed": "deepspeed",
    "megatron": "megatron", "megatron-lm": "megatron", "nemo": "megatron",
    "mistral nemo": None, "mistral-nemo": None,  # a model (Mistral NeMo 12B), not the NeMo framework "trl": "hf",
    "sfttrainer": "hf", "hf trainer": "hf", "transformers": "hf", "hugging face": "hf",
    "huggingface": "hf", "accelerate": "hf", "peft": "hf", "vllm": "vllm", "ollama": "ollama",
    "llama.cpp": "llama.cpp", "tgi": "tgi", "sglang": "sglang", "ms-swift": "swift",
    "colossalai": "colossalai", "kohya": "kohya", "kohya_ss": "kohya", "diffusers": "hf",
    "mlx": "mlx", "exllama": "exllama", "exllamav2": "exllama",
}
_FRAMEWORK_RANK = ("unsloth", "axolotl", "llamafactory", "torchtune", "megatron", "kohya", "swift",
                   "colossalai", "deepspeed", "vllm", "sglang", "tgi", "llama.cpp", "ollama", "exllama", "mlx", "hf")
PRECISIONS: dict[str, str] = {
    "bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16", "half precision": "fp16",
    "半精度": "fp16", "fp32": "fp32", "float32": "fp32", "full precision": "fp32", "单精度": "fp32",
    "fp8": "fp8", "float8": "fp8", "int8": "int8", "8-bit": "int8", "8bit": "int8", "8 bit": "int8",
    "8比特": "int8", "8비트": "int8", "8ビット": "int8", "q8": "int8", "q8_0": "int8",
    "nf4": "nf4", "4-bit": "nf4", "4bit": "nf4", "4 bit": "nf4", "4 bits": "nf4", "4-bits": "nf4",
    "8 bits": "int8", "8-bits": "int8", "int4": "nf4", "fp4": "nf4",
    "4比特": "nf4", "4位": "nf4", "4비트": "nf4", "4ビット": "nf4", "gptq": "nf4", "awq": "nf4",
    "q4": "nf4", "q4_k_m": "nf4", "q4_0": "nf4", "bnb 4bit": "nf4",
}
SHARDING: dict[str, str] = {
    "zero-3": "zero3", "zero3": "zero3", "zero 3": "zero3", "zero stage 3": "zero3", "ds_z3": "zero3",
    "stage 3": "zero3", "zero-2": "zero2", "zero2": "zero2", "zero 2": "zero2", "ds_z2": "zero2",
    "stage 2": "zero2", "zero-1": "zero1", "zero1": "zero1", "zero 1": "zero1", "fsdp": "fsdp",
    "fsdp2": "fsdp", "ddp": "ddp", "data parallel": "ddp",
}
CHECKPOINTING: dict[str, str] = {
    "gradient checkpointing": "full", "grad checkpointing": "full", "activation checkpointing": "full",
    "grad ckpt": "full", "gradient_checkpointing": "full", "梯度检查点": "full", "梯度檢查點": "full",
    "重计算": "full", "그래디언트 체크포인팅": "full", "勾配チェックポイント": "full",
    "no gradient checkpointing": "none", "without gradient checkpointing": "none",
    "unsloth gradient checkpointing": "offloaded", "offloaded checkpointing": "offloaded",
}
OPTIMIZERS: dict[str, str] = {
    "paged adamw 8bit": "paged_adamw8bit", "paged_adamw_8bit": "paged_adamw8bit",
    "paged adamw": "paged_adamw8bit", "adamw8bit": "adamw8bit", "adamw 8bit": "adamw8bit",
    "8-bit adam": "adamw8bit", "8bit adam": "adamw8bit", "adamw_8bit": "adamw8bit",
    "adafactor": "adafactor", "sgd": "sgd", "lion": "lion", "galore": "galore", "adamw": "adamw",
}
_OFFLOAD = re.compile(r"(?<![a-z])(?:cpu[\s_-]?offload|offload(?:ing)?|卸载到cpu|오프로드|オフロード)(?![a-z])")
_OFFLOAD_ANCHORS = ("offload", "卸载到cpu", "오프로드", "オフロード")
_SPECIFIC = ("qlora", "lora", "full", "pretrain")
_INFERENCE = ("inference", "serving", "running", "generate")
_TUNING = ("qlora", "lora", "full", "finetune")  # words that make a big token count a fine-tuning set
_DIFFUSION_TRAINING = ("dreambooth", "textual inversion", "드림부스")  # diffusion words that are training words
PRETRAIN_TOKENS = 1e9  # "training a 1B model on 20B tokens" with no fine-tuning word is pretraining


@dataclass(slots=True)
class _Context:
    """What the method rules look at, gathered once."""

    found: list[str]
    training: bool
    diffusion: bool
    sharded: bool
    peft: bool
    tuning_words: bool
    dataset_tokens: float
    assumed: dict[str, str]


@dataclass(frozen=True, slots=True)
class TrainingFound:
    method: str | None = None
    precision: str | None = None
    framework: str | None = None
    sharding: str | None = None
    grad_checkpointing: str | None = None
    optimizer: str | None = None
    offload: bool | None = None
    family: str | None = None  # "diffusion": an image model is trained or run
    rl_tuning: str | None = None  # an RL run's parameter mode: full, lora, qlora
    assumed: dict[str, str] = field(default_factory=dict)


@functools.lru_cache(maxsize=1)
def _tables() -> dict[str, PhraseTable]:
    return {
        "framework": build_table(FRAMEWORKS),
        "precision": build_table(PRECISIONS),
        "sharding": build_table(SHARDING),
        "checkpointing": build_table(CHECKPOINTING),
        "optimizer": build_table(OPTIMIZERS),
    }


def find_training(
    text: str, vocabulary: Vocabulary, config: dict[str, object], *, dataset_tokens: float | None = None,
    diffusion_model: bool = False,
) -> TrainingFound:
    """Everything about how the model runs; config values win over prose."""
    tables = _tables()
    assumed: dict[str, str] = {}
    precision, quant = _precision(text, tables["precision"], config)
    sharding = config.get("sharding") or tables["sharding"].first(text)
    context = _context(text, vocabulary, sharding, dataset_tokens, diffusion_model, assumed)
    method = _method(text, vocabulary, config, quant, context)
    rl_tuning = _rl_tuning(context, quant) if method == "rl" else None
    frameworks = [v for v, _, _ in tables["framework"].find(text) if isinstance(v, str)]  # None: a model (FRAMEWORKS)
    if isinstance(config.get("framework"), str):
        frameworks.append(str(config["framework"]))
    framework = pick_framework(frameworks)
    offload = config.get("offload") or (True if has_any(text, _OFFLOAD_ANCHORS) and _OFFLOAD.search(text) else None)
    return TrainingFound(
        method=method,
        precision=precision,
        framework=framework,
        sharding=str(sharding) if sharding else None,
        grad_checkpointing=_str(config.get("grad_checkpointing")) or tables["checkpointing"].first(text),
        optimizer=_str(config.get("optimizer")) or tables["optimizer"].first(text),
        offload=bool(offload) if offload else None,
        family="diffusion" if context.diffusion else None,
        rl_tuning=rl_tuning,
        assumed=assumed,
    )


def _context(
    text: str, vocabulary: Vocabulary, sharding: object, dataset_tokens: float | None, diffusion_model: bool,
    assumed: dict[str, str],
) -> _Context:
    matches = vocabulary.methods.find(text)
    found = [v for v, _, _ in matches]
    diffusion_training = any(text[s:e] in _DIFFUSION_TRAINING for _, s, e in matches)
    return _Context(
        found=found,
        training=diffusion_training or any(v in found for v in (*_SPECIFIC, "finetune", "train", "rl")),
        diffusion=diffusion_model or "diffusion" in found or "generate" in found,
        sharded=sharding in ("zero3", "fsdp"),
        peft=any(v in found for v in ("lora", "qlora")),
        tuning_words=any(v in found for v in _TUNING),
        dataset_tokens=dataset_tokens or 0.0,
        assumed=assumed,
    )


def pick_framework(names: list[str]) -> str | None:
    """The most specific tool named: a trainer (axolotl) over the library it drives (deepspeed, hf)."""
    known = [n for n in names if n in _FRAMEWORK_RANK]
    return min(known, key=_FRAMEWORK_RANK.index) if known else None


def _precision(text: str, table: PhraseTable, config: dict[str, object]) -> tuple[str | None, str | None]:
    """Weights' storage format: a quantisation wins over the compute dtype ("4-bit" + "bf16" = nf4)."""
    found = [v for v, _, _ in table.find(text)]
    quant = _str(config.get("quant")) or next((p for p in found if p in ("nf4", "int8")), None)
    plain = _str(config.get("precision")) or next((p for p in found if p not in ("nf4", "int8")), None)
    return quant or plain, quant


# A question about memory, in the eight languages: VRAM, (GPU) memory, 显存/顯存, 内存, メモリ, 메모리, bộ nhớ,
# Speicher, memoria, mémoire.
MEMORY_QUESTION = re.compile(r"vram|memory|显存|顯存|内存|記憶體|メモリ|메모리|bộ nhớ|speicher|memoria|mémoire", re.IGNORECASE)


def _method(
    text: str, vocabulary: Vocabulary, config: dict[str, object], quant: str | None, context: _Context
) -> str | None:
    """The workload kind the words name; first rule that applies wins (each rule says why in `assumed`).

    An RL method (GRPO, PPO, DPO, RLHF...) is the kind even when LoRA or "all parameters" is said: the
    parameter mode is kept apart (`TrainingFound.rl_tuning`). Diffusion training is LoRA unless full or
    QLoRA is named; diffusion with generation words only is running.
    """
    found = context.found
    method = _str(config.get("method"))
    if method is None and config.get("stage") == "pretrain":
        method = "pretrain"
    if method is None and "rl" in found:
        return "rl"
    training = context.training or config.get("stage") == "finetune"
    inference = any(v in found for v in _INFERENCE)
    if method is None and "qlora" in found:
        method = "qlora"
    if method is None:
        method = next((v for v in found if v in _SPECIFIC), None)
    if method is None and context.diffusion and not training and inference:
        return "running"
    if method is None and training and context.sharded and not context.peft:
        method = "full"
        context.assumed["method"] = "full fine-tune (ZeRO-3/FSDP sharding and no LoRA named)"
    if method is None and training and not context.tuning_words and context.dataset_tokens >= PRETRAIN_TOKENS:
        method = "pretrain"
        context.assumed["method"] = f"pretraining (training on {context.dataset_tokens / 1e9:g}B tokens, no fine-tuning word)"
    if method is None and training:
        method = "lora"
        what = "diffusion fine-tuning" if context.diffusion else "fine-tuning"
        context.assumed["method"] = f"lora ({what} without a method named: LoRA assumed)"
    if method is None and inference:
        # Serving words (an endpoint, several users, a serving engine) win over running words ("run", ollama).
        method = "serving" if "serving" in found else "running"
    if method is None and MEMORY_QUESTION.search(text):
        # "how much VRAM does Llama 3 70B need?": asked of a model with no training word, most people mean
        # running it (the calculators they compare with size inference first); the card says it assumed so
        method = "running"
        context.assumed["method"] = "running (memory asked with no training word: running the model assumed)"
    if method == "lora" and quant == "nf4":
        method = "qlora"
        context.assumed["method"] = "qlora (LoRA on a 4-bit base model)"
    return method


def _rl_tuning(context: _Context, quant: str | None) -> str:
    """Which weights an RL run updates: as named, else all of them (TRL's trainers update every weight
    unless given a PEFT config: https://huggingface.co/docs/trl/main/en/peft_integration)."""
    if "qlora" in context.found or ("lora" in context.found and quant == "nf4"):
        mode = "qlora"
    elif "lora" in context.found:
        mode = "lora"
    else:
        mode = "full"
    if mode != "full" or "full" in context.found:
        context.assumed["rl_tuning"] = f"RL training with {mode} parameter updates, as written"
    else:
        context.assumed["rl_tuning"] = "full-parameter RL (no LoRA named; TRL updates every weight without a PEFT config)"
    return mode


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
