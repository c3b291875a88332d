"""Button state: a request as compact JSON for a button's `value` (≤ 2000 chars) and back, validated.

Every what-if button carries the *modified* request, so applying it is just answering that state.
Action ids are stable: whatif.method.{qlora,lora,full}, whatif.quant.{int4,fp8}, whatif.gpus.{more,fewer}, whatif.spot,
whatif.ondemand, compare.top2, share, gpu.pick.N, model.pick.N, model.size.N, kb.open.N, price.show(.N),
specs.show. Buttons in one block need distinct ids, hence the `.N` suffix; listeners match the prefix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import fields, replace
from decimal import Decimal, InvalidOperation
from typing import TypedDict

from rules.types import ModelSpec, Workload

# A JSON value as it travels in a button's `value` and in a thread's saved state.
JsonValue = str | int | float | bool | None | list["JsonValue"] | dict[str, "JsonValue"]
WorkloadFields = dict[str, JsonValue]  # `workload_state`: the given Workload fields as JSON values


class ButtonState(TypedDict, total=False):
    """The request a button carries: version, intent, workload fields, GPUs named (compare) and the count each
    was named or planned at (`n`, by GPU id), a pick."""

    v: int
    i: str
    w: WorkloadFields
    g: list[str]
    n: dict[str, int]

STATE_VERSION = 1
ACTION_ID = re.compile(
    r"^(whatif\.(method\.(qlora|lora|full)|quant\.(int4|fp8)|gpus\.(more|fewer)|spot|ondemand)|compare\.top2|share"
    r"|gpu\.pick|model\.pick|model\.size|kb\.open|price\.show|specs\.show)(\.\d+)?$"
)
_INT = {"seq_len", "batch_size", "lora_rank", "gpus", "resolution", "samples", "concurrency", "context_tokens"}
_FLOAT = {"params_b", "tokens", "epochs", "deadline_hours", "tokens_per_s"}
_DECIMAL = {"budget_usd", "budget_usd_per_hour"}
_BOOL = {"offload", "spot"}
_CHOICES = {
    "method": {"full", "pretrain", "lora", "qlora", "rl", "serving", "running", "inference", "diffusion"},
    "tokens_per_s_scope": {"per_user", "total"},
    "sharding": {"none", "ddp", "zero1", "zero2", "zero3", "fsdp"},
    "grad_checkpointing": {"none", "full", "selective", "offloaded"},
    "objective": {"cheapest", "fastest", "simplest", "balanced"},
}
_TEXT = {"framework", "recipe", "optimizer", "precision", "lora_targets", "gpu", "quantization", "kv_cache_dtype",
         "engine", "family"}
MAX_TEXT = 64
MAX_COUNT = 64  # the most GPUs a button's state may name for one type (the what-if buttons stop there too)


class BadState(ValueError):
    """A button value we did not make (or from an older version): answered with the 'out of date' card."""


def action_kind(action_id: str) -> str:
    """The action id without its `.N` position suffix; BadState if it is not one of ours."""
    match = ACTION_ID.match(action_id or "")
    if match is None:
        raise BadState(f"unknown action {action_id!r}")
    return match.group(1)


def workload_state(workload: Workload) -> WorkloadFields:
    """The workload's given fields as JSON values (model by catalog id, money as strings)."""
    out: WorkloadFields = {}
    for f in fields(Workload):
        value = getattr(workload, f.name)
        if value is None or f.name == "allowed_switches" and not value:
            continue
        if f.name == "model":
            out["model"] = value.id
        elif f.name == "allowed_switches":
            out[f.name] = sorted(value)
        elif isinstance(value, Decimal):
            out[f.name] = str(value)
        else:
            out[f.name] = value
    return out


def workload_from_state(data: object, models: Mapping[str, ModelSpec]) -> Workload:
    """Rebuild a Workload from `workload_state` output; unknown keys are ignored, bad values refused."""
    if not isinstance(data, Mapping):
        raise BadState("workload is not an object")
    values: dict[str, object] = {}
    for key, raw in data.items():
        if raw is None:
            continue
        values[key] = _field_value(key, raw, models)
    values = {k: v for k, v in values.items() if v is not None}
    return replace(Workload(), **values)  # type: ignore[arg-type]  # each value was checked by _field_value


def _field_value(key: str, raw: object, models: Mapping[str, ModelSpec]) -> object:
    try:
        if key == "model":
            return models[raw] if isinstance(raw, str) and raw in models else None
        if key in _INT and isinstance(raw, int) and not isinstance(raw, bool) and 0 < raw <= 10**9:
            return raw
        if key in _FLOAT and isinstance(raw, (int, float)) and not isinstance(raw, bool) and 0 < raw < 1e15:
            return float(raw)
        if key in _DECIMAL and isinstance(raw, str) and len(raw) < 20:
            value = Decimal(raw)
            return value if value.is_finite() and value >= 0 else None
        if key in _BOOL and isinstance(raw, bool):
            return raw
        if key in _CHOICES and raw in _CHOICES[key]:
            return raw
        if key in _TEXT and isinstance(raw, str) and len(raw) <= MAX_TEXT:
            return raw
        if key == "allowed_switches" and isinstance(raw, list) and all(isinstance(s, str) for s in raw):
            return frozenset(raw[:8])
    except InvalidOperation:
        pass
    if key in _INT | _FLOAT | _DECIMAL | _BOOL | set(_CHOICES) | _TEXT | {"model", "allowed_switches"}:
        raise BadState(f"bad value for {key}")
    return None


def make_state(intent: str, workload: Workload, *, gpus: tuple[str, ...] = (),
               counts: Mapping[str, int] | None = None) -> ButtonState:
    """The compact request state: version, intent, workload, GPUs named (for compare) and the counts given for
    them ("2x 3090 vs 1x 4090"), so that a button answers for the same hardware."""
    state: ButtonState = {"v": STATE_VERSION, "i": intent, "w": workload_state(workload)}
    if gpus:
        state["g"] = list(gpus[:4])
        named = {g: int(counts[g]) for g in gpus[:4] if counts and counts.get(g)}
        if named:
            state["n"] = named
    return state


def with_workload(state: ButtonState, **changes: JsonValue) -> ButtonState:
    """A copy of `state` whose workload has `changes` (None removes a field)."""
    workload: WorkloadFields = dict(state.get("w") or {})
    for key, value in changes.items():
        if value is None:
            workload.pop(key, None)
        else:
            workload[key] = value
    return {**state, "w": workload}


def button_state(raw: JsonValue) -> ButtonState:
    """A button's state checked field by field: `v` an int, `i` a string, `w` an object, `g` a list of strings."""
    if not isinstance(raw, Mapping):
        raise BadState("state is not an object")
    state: ButtonState = {}
    version, intent, workload, gpus = raw.get("v"), raw.get("i"), raw.get("w"), raw.get("g")
    if isinstance(version, int) and not isinstance(version, bool):
        state["v"] = version
    if intent is not None:
        if not isinstance(intent, str):
            raise BadState("intent is not a string")
        state["i"] = intent
    if workload is not None:
        if not isinstance(workload, dict):
            raise BadState("workload is not an object")
        state["w"] = workload
    if gpus is not None:
        if not isinstance(gpus, list) or not all(isinstance(g, str) for g in gpus):
            raise BadState("gpus is not a list of ids")
        state["g"] = [g for g in gpus if isinstance(g, str)]
    counts = raw.get("n")
    if counts is not None:
        if not isinstance(counts, dict) or not all(
                isinstance(c, int) and not isinstance(c, bool) and 1 <= c <= MAX_COUNT for c in counts.values()):
            raise BadState(f"counts is not an object of GPU counts (1-{MAX_COUNT})")
        state["n"] = {str(g): int(c) for g, c in counts.items() if isinstance(c, int)}
    return state


def read_value(value: str | Mapping[str, JsonValue]) -> dict[str, JsonValue]:
    """Parse a button's `value` (JSON text) into a mapping; BadState when it is not ours."""
    if isinstance(value, Mapping):
        return dict(value)
    if not isinstance(value, str) or len(value) > 2000:
        raise BadState("value is not a string of at most 2000 characters")
    try:
        data = json.loads(value)
    except json.JSONDecodeError as error:
        raise BadState("value is not JSON") from error
    if not isinstance(data, dict):
        raise BadState("value is not an object")
    return data
