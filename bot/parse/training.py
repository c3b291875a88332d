"""How the model is to be run: method, precision, framework, sharding, checkpointing, optimizer."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from bot.parse.anchors import has_any
from bot.parse.vocabulary import Vocabulary, build_table, PhraseTable

# Tool names are the same in every language, so they live here rather than in the lexicon files.
FRAMEWORKS: dict[str, str] = {
    "unsloth": "unsloth", "axolotl": "axolotl", "llama-factory": "llamafactory",
    "llama factory": "llamafactory", "llamafactory": "llamafactory", "llama_factory": "llamafactory",
    "llamaboard": "llamafactory", "torchtune": "torchtune", "deepspeed": "deepspeed",
    "megatron": "megatron", "megatron-lm": "megatron", "nemo": "megatron", "trl": "hf",
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
_INFERENCE = ("inference", "serving", "running")


@dataclass(frozen=True, slots=True)
class TrainingFound:
    method: str | None = None
    precision: str | None = None
    framework: str | None = None
    sharding: str | None = None
    grad_checkpointing: str | None = None
    optimizer: str | None = None
    offload: bool | None = None
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


def find_training(text: str, vocabulary: Vocabulary, config: dict[str, object]) -> TrainingFound:
    """Everything about how the model runs; config values win over prose."""
    tables = _tables()
    assumed: dict[str, str] = {}
    precision, quant = _precision(text, tables["precision"], config)
    method = _method(text, vocabulary, config, quant, assumed)
    frameworks = [v for v, _, _ in tables["framework"].find(text)]
    if isinstance(config.get("framework"), str):
        frameworks.append(str(config["framework"]))
    framework = pick_framework(frameworks)
    sharding = config.get("sharding") or tables["sharding"].first(text)
    offload = config.get("offload") or (True if has_any(text, _OFFLOAD_ANCHORS) and _OFFLOAD.search(text) else None)
    return TrainingFound(
        method=method,
        precision=precision,
        framework=framework,
        sharding=str(sharding) if sharding else None,
        grad_checkpointing=_str(config.get("grad_checkpointing")) or tables["checkpointing"].first(text),
        optimizer=_str(config.get("optimizer")) or tables["optimizer"].first(text),
        offload=bool(offload) if offload else None,
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


def _method(
    text: str, vocabulary: Vocabulary, config: dict[str, object], quant: str | None, assumed: dict[str, str]
) -> str | None:
    found = [v for v, _, _ in vocabulary.methods.find(text)]
    stage = config.get("stage")
    method = _str(config.get("method"))
    if method is None and stage == "pretrain":
        method = "pretrain"
    if method is None and "qlora" in found:
        method = "qlora"
    training = any(v in found for v in (*_SPECIFIC, "finetune", "train")) or stage == "finetune"
    inference = any(v in found for v in _INFERENCE)
    if method is None and "diffusion" in found and (not inference or training):
        method = "diffusion"
    if method is None:
        method = next((v for v in found if v in _SPECIFIC), None)
    if method is None and training:
        method = "lora"
        assumed["method"] = "lora (fine-tuning without a method named: LoRA assumed)"
    if method is None and inference:
        # Serving words (an endpoint, several users, a serving engine) win over running words ("run", ollama).
        method = "serving" if "serving" in found else "running"
    if method == "lora" and quant == "nf4":
        method = "qlora"
        assumed["method"] = "qlora (LoRA on a 4-bit base model)"
    return method


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
