"""Diffusion memory against published VRAM figures (tests/cases/diffusion_vram_cases.json): error and band."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from rules.memory.calibration import Scored
from rules.memory.diffusion import diffusion_parts
from rules.memory.diffusion_presets import PRESETS
from rules.memory.parts import GIB, to_estimate
from rules.types import Workload
from rules.workload.setup import Setup, resolve_setup

UNITS = {"GB": 1e9 / GIB, "GiB": 1.0, "MiB": 2**20 / GIB}
SETUP_OVERRIDES = ("adapter_bytes", "lora_params")


@dataclass(frozen=True, slots=True)
class DiffusionResult(Scored):
    """One published figure against the model, in GiB."""

    case_id: str
    kind: str  # measured, claim_upper_bound
    measured_gib: float
    predicted_gib: float
    low_gib: float
    high_gib: float


def case_setup(case: Mapping[str, Any]) -> Setup:
    workload = Workload(
        method=case["method"], precision=case.get("precision"), recipe=case.get("recipe"),
        optimizer=case.get("optimizer"), batch_size=case.get("batch_size"), resolution=case.get("resolution"),
        grad_checkpointing=case.get("grad_checkpointing"), lora_rank=case.get("lora_rank"),
        gpus=case.get("gpus", 1), cache_latents=case.get("cache_latents"),
        text_encoder_training=case.get("text_encoder_training"), frames=case.get("frames"), family="diffusion",
    )
    setup = resolve_setup(workload, method=case["method"], gpus=case.get("gpus", 1), family="diffusion")
    return replace(setup, **{k: case[k] for k in SETUP_OVERRIDES if k in case})


def _level(case: Mapping[str, Any], setup: Setup) -> tuple[float, float, float]:
    parts = diffusion_parts(PRESETS[case["model"]], setup)
    estimate = to_estimate(parts, setup)
    level = {"allocated": parts.allocated_peak, "reserved": parts.reserved_peak}.get(case["basis"], parts.device_peak)
    shift = level - parts.device_peak
    return level, estimate.low_gib + shift, estimate.high_gib + shift


def evaluate_diffusion_case(case: Mapping[str, Any]) -> DiffusionResult:
    """Prediction at the case's settings; the band spans the values its source leaves open (`unknown`)."""
    setup = case_setup(case)
    predicted, low, high = _level(case, setup)
    unknown = case.get("unknown", {})
    for combo in itertools.product(*(unknown[k] for k in sorted(unknown))):
        _, alt_low, alt_high = _level(case, replace(setup, **dict(zip(sorted(unknown), combo, strict=True))))
        low, high = min(low, alt_low), max(high, alt_high)
    measured = float(case["value"]) * UNITS[case["unit"]]
    return DiffusionResult(case["id"], case["kind"], measured, predicted, low, high)
