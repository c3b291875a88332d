"""Compare the memory model with published measured runs: per-case error, band hits, summary stats."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rules.memory.parts import GIB, to_estimate
from rules.memory.training import estimate_parts, trainable_params
from rules.speed.calibration import ThroughputCase, percentile, tokens_per_gpu_s
from rules.speed.training import gpu_class, job_hours, mfu_for
from rules.tables import RuleTables
from rules.types import GpuSpec, Workload
from rules.workload.setup import Setup, resolve_setup
from rules.workload.shapes import Shape

HOLDOUT_MODULUS = 3  # a case is held out when sha256(id) % 3 == 0 (never tuned on)
# Setup fields a case may pin because its source states them (e.g. torch.compile on -> fused kernels).
SETUP_OVERRIDES = ("logits", "kernels", "context_parallel")


class Scored:
    """Error and band of a published figure against the model (a measurement, or an upper-bound claim)."""

    __slots__ = ()
    kind: str  # measured, claim_upper_bound
    measured_gib: float
    predicted_gib: float
    low_gib: float
    high_gib: float

    @property
    def error_pct(self) -> float:
        """Signed % error of the prediction; an upper-bound claim that holds counts as 0."""
        if self.kind == "claim_upper_bound" and self.predicted_gib <= self.measured_gib:
            return 0.0
        return 100.0 * (self.predicted_gib - self.measured_gib) / self.measured_gib

    @property
    def in_band(self) -> bool:
        if self.kind == "claim_upper_bound":
            return self.low_gib <= self.measured_gib
        return self.low_gib <= self.measured_gib <= self.high_gib


@dataclass(frozen=True, slots=True)
class CaseResult(Scored):
    """One measured run against the model, in GiB."""

    case_id: str
    source: str  # short source family: torchtune, peft, qwen, llamafactory, unsloth, qlora
    kind: str  # measured, fit_limit, claim_upper_bound
    method: str  # full, lora, qlora (as the engine ran it)
    held_out: bool
    measured_gib: float
    predicted_gib: float
    low_gib: float
    high_gib: float
    framework: str = ""  # the framework the case ran (settings), for per-framework figures
    table: str = "dev"  # dev = ../shared/data/memory_cases_dev.json; more = tests/cases/memory_cases_more.json



@dataclass(frozen=True, slots=True)
class Summary:
    """Median / p90 absolute % error and band coverage over a group of cases."""

    label: str
    count: int
    median_abs_pct: float
    p90_abs_pct: float
    in_band: int


def is_held_out(case_id: str) -> bool:
    return int(hashlib.sha256(case_id.encode()).hexdigest(), 16) % HOLDOUT_MODULUS == 0


def source_family(case_id: str) -> str:
    prefix = case_id.split("-", 1)[0]
    return {"lf": "llamafactory", "tt": "torchtune", "tt2024": "torchtune", "tt2024apr": "torchtune",
            "ttdoc": "torchtune", "peft": "peft", "qwen": "qwen", "qlora": "qlora",
            "unsloth": "unsloth", "titan": "torchtitan", "trainy": "torchtitan"}.get(prefix, prefix)


def shape_from_config(name: str, row: Mapping[str, Any]) -> Shape:
    return Shape(
        name=name, params_b=float(row["params_b"]), active_params_b=float(row["params_b"]),
        layers=int(row["layers"]), hidden_size=int(row["hidden"]), heads=int(row["heads"]),
        kv_heads=int(row["kv_heads"]), intermediate_size=int(row["ffn"]),
        vocab_size=int(row["vocab"]), tied_embeddings=bool(row["tied"]), moe_experts=0,
        moe_active_experts=0, gated_mlp=bool(row.get("gated", True)), assumed=False,
    )


def measured_gib(case: Mapping[str, Any]) -> float:
    value = float(case["measured_peak_gb_per_gpu"])
    return value if str(case["unit"]).startswith("GiB") else value * 1e9 / GIB


def case_setup(settings: Mapping[str, Any]) -> Setup:
    """The engine's setup for a case: its stated settings, framework defaults for the rest."""
    workload = Workload(
        method=settings["method"], framework=settings.get("framework"), recipe=settings.get("recipe"),
        optimizer=settings.get("optimizer"), precision=settings.get("precision"),
        seq_len=settings["seq_len"], batch_size=settings["batch_size"],
        grad_checkpointing=settings.get("grad_checkpointing"), lora_rank=settings.get("lora_rank"),
        lora_targets=settings.get("lora_targets"), gpus=settings["gpus"],
        sharding=settings.get("sharding"), offload=settings.get("offload"),
        framework_version=settings.get("date"), compile=settings.get("compile"),
    )
    setup = resolve_setup(workload, method=settings["method"], gpus=settings["gpus"])
    overrides = {key: settings[key] for key in SETUP_OVERRIDES if key in settings}
    return replace(setup, **overrides)


def evaluate_case(case: Mapping[str, Any], settings: Mapping[str, Any], shape: Shape) -> CaseResult:
    """Run the memory model on one case's settings and compare with its measured peak."""
    setup = case_setup(settings)
    predicted, low, high = _level_and_band(shape, setup, settings)
    for alternative in alternatives(settings):
        _, alt_low, alt_high = _level_and_band(shape, replace(setup, **alternative), settings)
        low, high = min(low, alt_low), max(high, alt_high)
    return CaseResult(
        case_id=case["id"], source=source_family(case["id"]), kind=case["kind"], method=setup.method,
        held_out=is_held_out(case["id"]), measured_gib=measured_gib(case), predicted_gib=predicted,
        low_gib=low, high_gib=high, framework=setup.framework, table=str(case.get("table", "dev")),
    )


def _level_and_band(shape: Shape, setup: Setup, settings: Mapping[str, Any]) -> tuple[float, float, float]:
    """Prediction at the memory level the source reports, with the band moved to that level."""
    parts = estimate_parts(shape, setup, device_gib=settings.get("device_gib"))
    estimate = to_estimate(parts, setup)
    basis = settings["basis"]
    level = {"allocated": parts.allocated_peak, "reserved": parts.reserved_peak}.get(basis, parts.device_peak)
    shift = level - parts.device_peak  # the band moves with the reported level
    return level, estimate.low_gib + shift, estimate.high_gib + shift


def alternatives(settings: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every combination of the values a source left open (`unknown`: {setup field: [values]})."""
    unknown = settings.get("unknown", {})
    names = sorted(unknown)
    return [dict(zip(names, combo, strict=True))
            for combo in itertools.product(*(unknown[name] for name in names))] if names else []


def evaluate_cases(
    cases: Sequence[Mapping[str, Any]], settings: Mapping[str, Any], models: Mapping[str, Any]
) -> list[CaseResult]:
    return [
        evaluate_case(case, settings[case["id"]], shape_from_config(case["model"], models[case["model"]]))
        for case in cases
    ]


def summarise(label: str, results: Iterable[CaseResult]) -> Summary:
    rows = list(results)
    errors = [abs(r.error_pct) for r in rows]
    return Summary(label, len(rows), percentile(errors, 0.5), percentile(errors, 0.9),
                   sum(r.in_band for r in rows))


def summaries(results: Sequence[CaseResult]) -> list[Summary]:
    """Overall, tuned vs held-out, per method, framework, case table and source family."""
    out = [summarise("all", results),
           summarise("tuned", (r for r in results if not r.held_out)),
           summarise("held-out", (r for r in results if r.held_out))]
    for method in sorted({r.method for r in results}):
        out.append(summarise(f"method:{method}", (r for r in results if r.method == method)))
        out.append(summarise(f"method:{method}:held-out",
                             (r for r in results if r.method == method and r.held_out)))
    for framework in sorted({r.framework for r in results}):
        out.append(summarise(f"framework:{framework}", (r for r in results if r.framework == framework)))
        out.append(summarise(f"framework:{framework}:held-out",
                             (r for r in results if r.framework == framework and r.held_out)))
    for table in sorted({r.table for r in results}):
        out.append(summarise(f"table:{table}", (r for r in results if r.table == table)))
        out.append(summarise(f"table:{table}:held-out", (r for r in results if r.table == table and r.held_out)))
    for source in sorted({r.source for r in results}):
        out.append(summarise(f"source:{source}", (r for r in results if r.source == source)))
        out.append(summarise(f"source:{source}:held-out",
                             (r for r in results if r.source == source and r.held_out)))
    return out


def throughput_cases(cases: Sequence[Mapping[str, Any]], settings: Mapping[str, Any], models: Mapping[str, Any],
                     gpus: Mapping[str, GpuSpec], tables: RuleTables) -> list[ThroughputCase]:
    """Every case whose throughput text gives a token rate on a catalog GPU, as the utilisation it implies.

    The implied utilisation is the table's value scaled by predicted / measured hours, where the prediction
    is the engine's own time model (attention FLOPs, FP8, collectives, host traffic) on the case's setup.
    """
    out: list[ThroughputCase] = []
    for case in cases:
        row = settings[case["id"]]
        gpu = gpus.get(row.get("gpu_id", ""))
        setup = case_setup(row)
        rate = tokens_per_gpu_s(case.get("throughput"), seq_len=setup.seq_len, batch_size=setup.batch_size,
                                gpus=setup.gpus, micro_batches_per_it=row.get("micro_batches_per_it"))
        if gpu is None or rate is None:
            continue
        shape = shape_from_config(case["model"], models[case["model"]])
        parts = estimate_parts(shape, setup, device_gib=row.get("device_gib"))
        tokens = 1e9
        predicted = job_hours(tokens, shape.active_params_b, gpu, setup.gpus, setup, tables, setup_precision(row),
                              host_gib=parts.cpu_offload, trainable_b=trainable_params(shape, setup) / 1e9,
                              shape=shape)
        measured = tokens / (rate * setup.gpus) / 3600.0
        method = {"pretrain": "full"}.get(setup.method, setup.method)
        implied = mfu_for(gpu, setup, tables) * predicted / measured
        out.append(ThroughputCase(case["id"], gpu_class(gpu), method, is_held_out(case["id"]), rate, implied))
    return out


def setup_precision(settings: Mapping[str, Any]) -> str | None:
    """The compute precision a case states (fp8 for Float8 / Transformer Engine runs)."""
    value = settings.get("precision")
    return str(value) if value else None
