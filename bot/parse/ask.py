"""The `Ask`: what a person's message asked for, as typed values, plus its mapping onto a `Workload`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from rules.types import Checkpointing, Method, Objective, Sharding, Workload

if TYPE_CHECKING:  # the snapshot module belongs to the lead; only its attributes are used here
    from knowledge.snapshot import Snapshot

Quantization = str  # "bf16", "fp8", "int8", "int4", "nf4", "awq", "gptq", "exl2", "mxfp4", "nvfp4", "gguf", "gguf-q4_k_m", ...
Intent = Literal[
    "advise", "compare", "price", "specs", "help", "digest", "alert", "language", "explain"
]
Language = Literal["en", "zh-Hans", "zh-Hant", "ko", "ja", "es", "de", "fr", "vi"]
GpuStatus = Literal["found", "ambiguous", "none", "class"]
# The workload kinds the parser tells apart: the engine's training methods plus RL training, serving (an
# endpoint for many users) and running (one user, local or batch); `ask_to_workload` maps them for the engine.
AskMethod = Literal["full", "pretrain", "lora", "qlora", "rl", "serving", "running", "inference", "diffusion"]
Qualitative = Literal["low", "medium", "high"]


# Clarification kinds the renderer turns into questions.
CLARIFY_GPU_AMBIGUOUS = "gpu_ambiguous"  # detail = the query, e.g. "a100"
CLARIFY_GPU_UNKNOWN = "gpu_unknown"  # detail = the query that matched nothing
CLARIFY_MODEL_SIZE = "model_size_missing"  # detail = None or the family named, e.g. "llama"
CLARIFY_MODEL_AMBIGUOUS = "model_ambiguous"  # detail = the query
CLARIFY_MODEL_UNKNOWN = "model_unknown"  # detail = the name; ModelMention.candidates = the closest presets
CLARIFY_COMPARE_NEEDS_TWO = "compare_needs_two"  # detail = None


def _empty_mapping() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ModelMention:
    """A model the text named: a catalog preset (`model_id`) or just a size (`params_b`)."""

    model_id: str | None
    name: str | None
    params_b: float | None
    candidates: tuple[str, ...] = ()  # a name the catalog lacks: the closest presets, for the clarification


@dataclass(frozen=True, slots=True)
class GpuMention:
    """One GPU span found in the text and what the catalog resolver made of it."""

    status: GpuStatus
    gpu_id: str | None
    name: str | None
    candidates: tuple[str, ...]
    count: int | None
    query: str
    memory_gb: float | None = None  # status "class": a GPU described by its memory only ("a 24 GB card")
    segment: str | None = None  # status "class": consumer, workstation, datacenter, apple


@dataclass(frozen=True, slots=True)
class Budget:
    """Money the user mentioned, converted to USD with dated fixed rates (see lexicon/currency.json)."""

    usd_total: Decimal | None = None
    usd_per_hour: Decimal | None = None
    qualitative: Qualitative | None = None


@dataclass(frozen=True, slots=True)
class Ask:
    """A parsed request. `None` = not said. `assumed` and `ignored` are shown back to the user."""

    intent: Intent
    language: Language
    text: str
    model: ModelMention | None = None
    params_b: float | None = None
    method: AskMethod | None = None
    precision: str | None = None  # bf16, fp16, fp32, fp8, int8, int4, nf4
    framework: str | None = None  # hf, unsloth, axolotl, llamafactory, torchtune, deepspeed, ...
    optimizer: str | None = None
    seq_len: int | None = None
    batch_size: int | None = None
    gpus: tuple[GpuMention, ...] = ()
    gpu_count: int | None = None
    gpu_count_range: tuple[int, int] | None = None  # "2-4 GPUs": gpu_count is then the upper bound
    budget: Budget = field(default_factory=Budget)
    deadline_hours: float | None = None
    dataset_tokens: float | None = None
    samples: int | None = None
    epochs: float | None = None
    spot: bool | None = None
    objective: Objective | None = None
    sharding: Sharding | None = None
    grad_checkpointing: Checkpointing | None = None
    lora_rank: int | None = None
    resolution: int | None = None
    offload: bool | None = None
    # Serving and running (the serving issue): users or requests in flight, request rate, context per
    # sequence (prompt + output), a tokens/s target, the weight format, KV-cache type, engine, preference.
    family: str | None = None  # "diffusion" when the model is an image/video diffusion model
    concurrency: int | None = None
    requests_per_s: float | None = None
    context_tokens: int | None = None
    tokens_per_s: float | None = None
    tokens_per_s_scope: Literal["per_user", "total"] | None = None
    quantization: Quantization | None = None
    kv_cache_dtype: str | None = None
    engine: str | None = None
    priority: Literal["throughput", "latency"] | None = None
    rl_tuning: Literal["full", "lora", "qlora"] | None = None  # method "rl": which weights the run updates
    audio_hours: float | None = None  # hours of recorded audio to transcribe (a speech model: "1000 hours of audio")
    # A follow-up in a thread ("and with 4-bit?", "那换成AWQ呢？"): only the fields it changes are set; the
    # answering layer merges it with the thread's previous request.
    follow_up: bool = False
    ignored: tuple[str, ...] = ()
    assumed: Mapping[str, str] = field(default_factory=_empty_mapping)
    clarifications: tuple[tuple[str, str | None], ...] = ()

    @property
    def reply_language(self) -> str:
        """The locale replies use: both Chinese scripts are answered in simplified Chinese."""
        return "zh-Hans" if self.language == "zh-Hant" else self.language


def ask_to_dict(ask: Ask) -> dict[str, Any]:
    """The JSON shape of `gpu-advisor parse --json` (issue 4 item 5); names are frozen."""
    model = None
    if ask.model is not None:
        model = {"id": ask.model.model_id, "name": ask.model.name, "params_b": ask.model.params_b}
    return {
        "intent": ask.intent,
        "language": ask.language,
        "model": model,
        "params_b": ask.params_b,
        "method": ask.method,
        "precision": ask.precision,
        "framework": ask.framework,
        "seq_len": ask.seq_len,
        "batch_size": ask.batch_size,
        "gpus": [
            {"status": g.status, "id": g.gpu_id, "name": g.name, "candidates": list(g.candidates), "count": g.count,
             "memory_gb": g.memory_gb, "segment": g.segment}
            for g in ask.gpus
        ],
        "gpu_count": ask.gpu_count,
        "gpu_count_range": list(ask.gpu_count_range) if ask.gpu_count_range else None,
        "budget": {
            "usd_total": _money(ask.budget.usd_total),
            "usd_per_hour": _money(ask.budget.usd_per_hour),
            "qualitative": ask.budget.qualitative,
        },
        "deadline_hours": ask.deadline_hours,
        "dataset_tokens": ask.dataset_tokens,
        "spot": ask.spot,
        "objective": ask.objective,
        "family": ask.family,
        "concurrency": ask.concurrency,
        "requests_per_s": ask.requests_per_s,
        "context_tokens": ask.context_tokens,
        "tokens_per_s": ask.tokens_per_s,
        "tokens_per_s_scope": ask.tokens_per_s_scope,
        "quantization": ask.quantization,
        "kv_cache_dtype": ask.kv_cache_dtype,
        "engine": ask.engine,
        "priority": ask.priority,
        "rl_tuning": ask.rl_tuning,
        "audio_hours": ask.audio_hours,
        "follow_up": ask.follow_up,
        "ignored": list(ask.ignored),
        "assumed": dict(ask.assumed),
    }


_ENGINE_METHODS: dict[str, Method] = {
    m: m for m in ("full", "pretrain", "lora", "qlora", "inference", "diffusion")
}


def engine_method(ask: Ask) -> Method | None:
    """The engine's method for the parsed workload kind.

    Serving and running are its own; training a diffusion model keeps its method (LoRA or full) with the family
    "diffusion" beside it (a diffusion model named with no method is the engine's diffusion default); RL is sized as the training of its policy with the parameter mode the text gave (full unless LoRA is
    named) until the engine models the extra reference/reward models and rollouts.
    """
    method = ask.method
    if method in ("serving", "running"):
        return method
    if ask.family == "diffusion" and method in (None, "diffusion"):
        return "diffusion"
    if method == "rl":
        return _ENGINE_METHODS[ask.rl_tuning or "full"]
    return _ENGINE_METHODS.get(method) if method else None


def _money(value: Decimal | None) -> float | None:
    # JSON has no decimal type; amounts are whole cents, which a float carries exactly enough to show.
    return None if value is None else float(value)


def ask_to_workload(ask: Ask, snapshot: Snapshot) -> Workload:
    """The engine's `Workload` for this request; a GPU is pinned only when exactly one was found.

    Budget words set the objective when none was stated (DESIGN §3 Ranking): "on a budget" -> cheapest,
    "money is no object" -> fastest; a moderate budget leaves the balanced default.
    """
    model = None
    if ask.model is not None and ask.model.model_id is not None:
        model = snapshot.models.get(ask.model.model_id)
    found = [g.gpu_id for g in ask.gpus if g.status == "found" and g.gpu_id]
    classes = [g.candidates[0] for g in ask.gpus if g.status == "class" and g.candidates]
    found = found or classes  # a GPU described by memory stands as its class's slowest card (said in assumed)
    pinned = found[0] if len(set(found)) == 1 else None
    budget_objective: Objective | None = {"low": "cheapest", "high": "fastest"}.get(  # type: ignore[assignment]
        ask.budget.qualitative or "")
    return Workload(
        model=model,
        params_b=ask.params_b,
        method=engine_method(ask),
        framework=ask.framework,
        optimizer=ask.optimizer,
        precision=ask.precision,
        seq_len=ask.seq_len,
        batch_size=ask.batch_size,
        grad_checkpointing=ask.grad_checkpointing,
        lora_rank=ask.lora_rank,
        gpus=ask.gpu_count,
        sharding=ask.sharding,
        offload=ask.offload,
        gpu=pinned,
        resolution=ask.resolution,
        tokens=ask.dataset_tokens,
        samples=ask.samples,
        epochs=ask.epochs,
        budget_usd=ask.budget.usd_total,
        budget_usd_per_hour=ask.budget.usd_per_hour,
        deadline_hours=ask.deadline_hours,
        spot=ask.spot,
        objective=ask.objective or budget_objective,
        concurrency=ask.concurrency,
        context_tokens=ask.context_tokens,
        tokens_per_s=ask.tokens_per_s,
        tokens_per_s_scope=ask.tokens_per_s_scope,
        quantization=ask.quantization,
        kv_cache_dtype=ask.kv_cache_dtype,
        engine=ask.engine,
        family=ask.family,
    )
