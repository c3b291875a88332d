"""Published serving measurements (tests/cases/serving_throughput.jsonl) against the throughput model.

Each measured figure becomes one case: decode tokens/s per user (llama-bench tg, single streams), output
tokens/s of all sequences (fixed concurrency, fixed batch, offline maximum), prefill tokens/s (pp), or an
end-to-end latency turned into tokens/s. The caller resolves the GPU and the model shape (pure module).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rules.memory.serving import GPU_MEMORY_UTILIZATION, is_large_card, kv_bytes_per_sequence, serving_memory
from rules.memory.parts import GIB
from rules.speed.serving import decode_rate, prefill_rate
from rules.tables import ServingTables
from rules.types import GpuSpec
from rules.workload.serving import PAGED_ENGINES, ServingSetup
from rules.workload.shapes import Shape

# How the cases name weight formats -> ours. "unstated" vLLM runs load the checkpoint's bf16.
WEIGHT_NAMES = {"f16": "fp16", "bf16": "bf16", "fp8": "fp8", "mxfp8": "fp8", "nvfp4": "nvfp4", "mxfp4": "mxfp4",
                "gptq-4bit": "gptq", "awq-4bit": "awq", "unstated (vLLM default dtype)": "bf16"}
ENGINE_NAMES = {"nim": "tensorrt-llm"}  # NVIDIA NIM for LLMs runs TensorRT-LLM
METRICS = ("output_tokens_per_s_per_user", "output_tokens_per_s_total", "output_tokens_per_s_per_gpu",
           "prefill_tokens_per_s", "e2e_latency_ms")
# llama-bench "tg N" with no prompt: the cache grows from 0 to N, on average N / 2 tokens.
DEFAULT_TG = 128


@dataclass(frozen=True, slots=True)
class ServingCase:
    """One published figure and the run it came from."""

    case_id: str
    engine: str
    gpu_id: str
    gpus: int
    model: str
    weights: str  # our format name
    kv_cache_dtype: str
    load: str  # single-stream, fixed-concurrency, fixed-batch, offline-max
    concurrency: int | None
    input_tokens: int
    output_tokens: int
    metric: str
    measured: float


@dataclass(frozen=True, slots=True)
class CaseError:
    case: ServingCase
    predicted: float

    @property
    def error_pct(self) -> float:
        """Signed % error of the predicted rate against the measured one."""
        return 100.0 * (self.predicted - self.case.measured) / self.case.measured


def cases_from_rows(rows: Sequence[Mapping[str, object]]) -> tuple[list[ServingCase], list[str]]:
    """Cases we can predict, and the ids of rows skipped (format or metric we do not model)."""
    out: list[ServingCase] = []
    skipped: list[str] = []
    for row in rows:
        weights = str(row.get("weights") or "")
        fmt = weights if weights.startswith("gguf-") else WEIGHT_NAMES.get(weights)
        measured = row.get("measured") or {}
        if fmt is None or not isinstance(measured, Mapping):
            skipped.append(str(row["id"]))
            continue
        engine = str(row["engine"])
        kv = str(row.get("kv_cache_dtype") or ("fp16" if fmt == "fp16" else "bf16"))
        for metric in METRICS:
            value = measured.get(metric)
            if isinstance(value, (int, float)) and value > 0:
                out.append(ServingCase(
                    str(row["id"]), ENGINE_NAMES.get(engine, engine), str(row["gpu"]), int(str(row["gpu_count"] or 1)),
                    str(row["model"]), fmt, kv, str(row["load"]),
                    int(str(row["concurrency"])) if row.get("concurrency") is not None else None,
                    int(str(row.get("input_tokens") or 0)), int(str(row.get("output_tokens") or 0)), metric,
                    float(value)))
    return out, skipped


def _setup(case: ServingCase, context: int) -> ServingSetup:
    return ServingSetup("serving", case.engine, case.weights, case.kv_cache_dtype, case.concurrency or 1,
                        max(context, 1), case.gpus, full_load=case.concurrency is None)


def offline_batch(case: ServingCase, shape: Shape, gpu: GpuSpec, cap: int) -> int:
    """Sequences in flight at the offline maximum: as many as the paged cache holds at the average fill
    (prompt + half the output), at most the engine's cap."""
    fill = case.input_tokens + case.output_tokens // 2
    setup = _setup(case, fill)
    memory = serving_memory(shape, setup, large=is_large_card(gpu), unified=False)
    budget = gpu.vram_gb * GPU_MEMORY_UTILIZATION * GIB - (memory.fixed - memory.context)
    per_seq = kv_bytes_per_sequence(shape, setup)
    return max(1, min(cap, int(budget // per_seq)))


def predict(case: ServingCase, shape: Shape, gpu: GpuSpec, tables: ServingTables, *, cap: int,
            bandwidth_gbs: float | None = None) -> float:
    """The model's figure for the case's metric."""
    prompt, output = case.input_tokens, case.output_tokens or DEFAULT_TG
    setup = _setup(case, prompt + output)
    if case.metric == "prefill_tokens_per_s":
        return prefill_rate(shape, gpu, setup, tables, prompt or 512)
    batch = case.concurrency or 1
    if case.load == "offline-max" and case.engine in PAGED_ENGINES:
        batch = offline_batch(case, shape, gpu, cap) if case.concurrency is None else case.concurrency
    rate = decode_rate(shape, setup, gpu, tables, batch=batch, kv_len=prompt + output // 2,
                       bandwidth_gbs=bandwidth_gbs)
    if case.metric == "output_tokens_per_s_per_user":
        return rate.output_tokens_per_s_per_user
    # All sequences: each request's prompt is prefilled between decode steps (continuous batching).
    seconds_per_token = 1.0 / rate.output_tokens_per_s + (prompt / output) / rate.prefill_tokens_per_s
    total = 1.0 / seconds_per_token
    if case.metric == "output_tokens_per_s_per_gpu":
        return total / case.gpus
    if case.metric == "e2e_latency_ms":  # predicted latency of one batch: prompt prefill + output steps
        return 1000.0 * (batch * prompt / rate.prefill_tokens_per_s + output / rate.output_tokens_per_s_per_user)
    return total


def summary(errors: Sequence[CaseError]) -> tuple[int, float, float]:
    """(count, median |%|, p90 |%|); latency cases count as the error of the implied rate."""
    values = sorted(abs(_rate_error(e)) for e in errors)
    if not values:
        return 0, 0.0, 0.0
    p90 = values[min(len(values) - 1, int(round(0.9 * (len(values) - 1))))]
    return len(values), statistics.median(values), p90


def _rate_error(error: CaseError) -> float:
    if error.case.metric == "e2e_latency_ms":  # a latency too high is a rate too low
        return 100.0 * (error.case.measured / error.predicted - 1.0)
    return error.error_pct
