"""Pasted training configs (LLaMA-Factory, axolotl, HF TrainingArguments, DeepSpeed) as key/values."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

MAX_IGNORED_KEYS = 12
_TRUE = frozenset({"true", "yes", "1", "on"})
# Config keys whose value we read, and the setting each one feeds.
_KEYS: dict[str, str] = {
    "model_name_or_path": "model", "base_model": "model", "model_name": "model", "model_id": "model",
    "pretrained_model_name_or_path": "model", "model": "model", "base_model_name_or_path": "model",
    "finetuning_type": "method", "adapter": "method", "stage": "stage", "peft_type": "method",
    "lora_rank": "lora_rank", "lora_r": "lora_rank",
    "cutoff_len": "seq_len", "max_seq_length": "seq_len", "sequence_len": "seq_len",
    "max_seq_len": "seq_len", "seq_len": "seq_len", "max_length": "seq_len", "model_max_length": "seq_len",
    "per_device_train_batch_size": "batch_size", "micro_batch_size": "batch_size",
    "train_micro_batch_size_per_gpu": "batch_size", "batch_size": "batch_size",
    "bf16": "bf16", "fp16": "fp16", "quantization_bit": "quant_bit", "load_in_4bit": "load4",
    "load_in_8bit": "load8", "bnb_4bit_quant_type": "quant_type",
    "deepspeed": "deepspeed", "zero_stage": "zero_stage", "fsdp": "fsdp",
    "gradient_checkpointing": "checkpointing", "use_gradient_checkpointing": "checkpointing",
    "num_train_epochs": "epochs", "num_epochs": "epochs", "epochs": "epochs",
    "optim": "optimizer", "optimizer": "optimizer", "resolution": "resolution",
    "num_gpus": "gpus", "nproc_per_node": "gpus", "num_processes": "gpus",
}
# Keys that identify the tool the config was written for.
_FRAMEWORK_KEYS: dict[str, str] = {
    "finetuning_type": "llamafactory", "cutoff_len": "llamafactory", "quantization_bit": "llamafactory",
    "template": "llamafactory", "base_model": "axolotl", "sequence_len": "axolotl",
    "micro_batch_size": "axolotl", "adapter": "axolotl", "sample_packing": "axolotl",
}
_OPTIMIZERS = {
    "paged_adamw_8bit": "paged_adamw8bit", "paged_adamw_32bit": "paged_adamw", "adamw_8bit": "adamw8bit",
    "adamw_bnb_8bit": "adamw8bit", "adamw_torch": "adamw", "adamw_torch_fused": "adamw", "adamw_hf": "adamw",
    "adamw": "adamw", "adafactor": "adafactor", "sgd": "sgd", "lion": "lion", "galore_adamw": "galore",
}


@dataclass(frozen=True, slots=True)
class ConfigFound:
    """Settings read from config lines; `values` keys are Ask fields."""

    values: dict[str, object] = field(default_factory=dict)
    model_query: str | None = None
    framework: str | None = None
    ignored: tuple[str, ...] = ()


@functools.lru_cache(maxsize=1)
def _pattern() -> re.Pattern[str]:
    # key: value (YAML), "key": value (JSON), key=value or --key value (command lines)
    return re.compile(
        r"""(?:^|(?<=[\s{,]))(?:--)?["']?([a-z][a-z0-9_]{1,50})["']?\s?(?:[:=]\s?|(?<=[a-z0-9_])\s(?=["']?[\w./-]))["']?([^\s"',}\]#]{1,200})""",
        re.MULTILINE,
    )


def find_config(text: str) -> ConfigFound:
    """Read known keys; report unknown snake_case keys as ignored. Prose rarely has `key: value`."""
    values: dict[str, object] = {}
    ignored: list[str] = []
    model_query, framework = None, None
    if not (":" in text or "=" in text or "--" in text):  # only explicit `key: value` pairs are read
        return ConfigFound()
    for m in _pattern().finditer(text):
        key, raw = m.group(1), m.group(2).strip()
        explicit = text[m.start() : m.start() + 2] == "--" or ":" in m.group(0) or "=" in m.group(0)
        if not explicit:
            continue
        target = _KEYS.get(key)
        if target is None:
            if "_" in key and len(ignored) < MAX_IGNORED_KEYS:
                ignored.append(f"{key}: {raw}")
            continue
        framework = framework or _FRAMEWORK_KEYS.get(key)
        if target == "model":
            model_query = model_query or raw
        else:
            _apply(values, target, raw)
    return ConfigFound(values, model_query, framework, tuple(ignored))


def _apply(values: dict[str, object], target: str, raw: str) -> None:
    """Turn one recognised key's raw value into Ask field values."""
    number = _int(raw)
    if target in ("seq_len", "batch_size", "lora_rank", "resolution", "gpus") and number:
        values.setdefault(target, number)
    elif target == "epochs":
        try:
            values.setdefault("epochs", float(raw))
        except ValueError:
            pass
    elif target == "method":
        method = {"lora": "lora", "qlora": "qlora", "full": "full", "freeze": "full", "dora": "lora"}.get(raw)
        if method:
            values.setdefault("method", method)
    elif target == "stage" and raw in ("1", "2", "3"):
        _deepspeed(values, raw)
    elif target == "stage":
        values.setdefault("stage", {"pt": "pretrain", "sft": "finetune", "dpo": "finetune"}.get(raw, raw))
    elif target in ("bf16", "fp16") and raw in _TRUE:
        values.setdefault("precision", target)
    elif (target == "quant_bit" and raw == "4") or (target == "load4" and raw in _TRUE):
        values["quant"] = "nf4"
    elif (target == "quant_bit" and raw == "8") or (target == "load8" and raw in _TRUE):
        values.setdefault("quant", "int8")
    elif target == "quant_type" and raw in ("nf4", "fp4"):
        values["quant"] = "nf4"
    elif target in ("deepspeed", "zero_stage"):
        _deepspeed(values, raw)
    elif target == "fsdp" and raw not in ("", "false", "none", "null", "[]"):
        values.setdefault("sharding", "fsdp")
    elif target == "checkpointing":
        values.setdefault("grad_checkpointing", "offloaded" if raw == "unsloth" else "full" if raw in _TRUE else "none")
    elif target == "optimizer" and raw in _OPTIMIZERS:
        values.setdefault("optimizer", _OPTIMIZERS[raw])


def _deepspeed(values: dict[str, object], raw: str) -> None:
    stage = re.search(r"(?:z|zero|stage)[_-]?([123])|^([123])$", raw)
    if stage:
        values.setdefault("sharding", f"zero{stage.group(1) or stage.group(2)}")
    if "offload" in raw:
        values.setdefault("offload", True)
    values.setdefault("framework", "deepspeed")


def _int(raw: str) -> int | None:
    try:
        value = int(float(raw))
    except ValueError:
        return None
    return value if value > 0 else None
