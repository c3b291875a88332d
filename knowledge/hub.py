"""Any Hugging Face model: read its config.json and safetensors counts, cache them, size them into a ModelSpec.

`size_hub_model("org/name", engine=...)` answers with a typed outcome, never an exception for the
user's input: `HubSized` (a ModelSpec and how it was read), `HubOffline` (the Hub could not be
reached and nothing is cached: ask for a parameter count), `HubNotFound` (no such public repo, or
gated) or `HubUnreadable` (a config the sizing does not understand). The network is touched only
through the `fetch` callable, so tests pass recorded files instead.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

from knowledge.tables import HubModel
from rules.types import ModelSpec

log = logging.getLogger(__name__)
HF_ID = re.compile(r"^[A-Za-z0-9][\w.\-]{0,95}/[\w.\-]{1,96}$")
SAFETENSORS_BITS = {"F64": 64, "F32": 32, "BF16": 16, "F16": 16, "F8_E4M3": 8, "F8_E5M2": 8, "I64": 64, "I32": 32,
                    "I16": 16, "I8": 8, "U8": 8, "BOOL": 8, "F8_E8M0": 8}


@dataclass(frozen=True, slots=True)
class HubFiles:
    """What the Hub gave for one repo: its config.json and safetensors parameter counts per dtype."""

    config: Mapping[str, Any]
    params_by_dtype: Mapping[str, int] = field(default_factory=dict)  # {"BF16": 8030261248}; empty = unknown
    revision: str = ""


@dataclass(frozen=True, slots=True)
class HubSized:
    model: ModelSpec
    quantization: str | None  # "awq", "gptq", "fp8", "mxfp4", "nvfp4", "compressed-tensors int8" ...
    params_by_dtype: Mapping[str, int]
    params_from: str  # "safetensors" (exact) or "shape" (estimated from the config)
    cached: bool


@dataclass(frozen=True, slots=True)
class HubOffline:
    hf_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class HubNotFound:
    hf_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class HubUnreadable:
    hf_id: str
    reason: str


HubOutcome = HubSized | HubOffline | HubNotFound | HubUnreadable
Fetch = Callable[[str], HubFiles]


class HubUnavailable(Exception):
    """Raised by a fetch function when the Hub cannot be reached (turned into HubOffline)."""


class HubMissing(Exception):
    """Raised by a fetch function for a repo that does not exist or is gated (turned into HubNotFound)."""


def fetch_from_hub(hf_id: str) -> HubFiles:
    """Read config.json and the safetensors metadata with huggingface_hub (network; honours HF_HUB_OFFLINE)."""
    try:
        from huggingface_hub import HfApi, hf_hub_download
        from huggingface_hub import errors as hf_errors
    except ImportError as exc:  # the package is a dependency; a broken install reads as offline
        raise HubUnavailable(f"huggingface_hub is not installed: {exc}") from None
    missing = (hf_errors.RepositoryNotFoundError, hf_errors.GatedRepoError, hf_errors.EntryNotFoundError)
    try:
        path = hf_hub_download(hf_id, "config.json")
        with open(path, encoding="utf-8") as fh:
            config = json.load(fh)
    except missing as exc:
        raise HubMissing(type(exc).__name__) from None
    except Exception as exc:  # offline mode, DNS, timeouts, proxies: all mean "could not ask the Hub"
        raise HubUnavailable(f"{type(exc).__name__}: {exc}"[:300]) from None
    counts: dict[str, int] = {}
    try:
        meta = HfApi().get_safetensors_metadata(hf_id)
        counts = {str(k): int(v) for k, v in (getattr(meta, "parameter_count", None) or {}).items()}
    except Exception as exc:  # no safetensors (a .bin repo) or no network: size from the shape instead
        log.info("no safetensors metadata for %s: %s", hf_id, exc)
    return HubFiles(config=config, params_by_dtype=counts)


def size_hub_model(hf_id: str, *, engine: Engine, fetch: Fetch = fetch_from_hub, now: datetime | None = None) -> HubOutcome:
    """Size a Hub model: the cached read if there is one, else the Hub (then cached)."""
    hf_id = hf_id.strip()
    if not HF_ID.fullmatch(hf_id):
        return HubNotFound(hf_id, "not a Hugging Face id (org/name)")
    cached = _read_cache(engine, hf_id)
    if cached is not None:
        return sized_from_files(hf_id, cached, cached_read=True)
    try:
        files = fetch(hf_id)
    except HubUnavailable as exc:
        return HubOffline(hf_id, str(exc))
    except HubMissing as exc:
        return HubNotFound(hf_id, str(exc))
    outcome = sized_from_files(hf_id, files, cached_read=False)
    if isinstance(outcome, HubSized):
        _write_cache(engine, hf_id, files, now or datetime.now(UTC))
    return outcome


def sized_from_files(hf_id: str, files: HubFiles, *, cached_read: bool = False) -> HubSized | HubUnreadable:
    """A ModelSpec from a config.json (+ safetensors counts); HubUnreadable when the shape is missing."""
    try:
        return _sized(hf_id, files, cached_read)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        return HubUnreadable(hf_id, f"config.json: {type(exc).__name__}: {exc}"[:200])


def _sized(hf_id: str, files: HubFiles, cached_read: bool) -> HubSized:
    from knowledge.hub_shape import model_shape, quantization_of, stored_params

    config = dict(files.config)
    shape = model_shape(config)
    quant, native = quantization_of(config)
    if files.params_by_dtype:
        total = stored_params(files.params_by_dtype, quant)
        params_from = "safetensors"
    else:
        total = shape.estimated_params
        params_from = "shape"
    if total <= 0:
        raise ValueError("no parameters")
    active = total * shape.active_fraction
    name = hf_id.split("/", 1)[1]
    spec = ModelSpec(
        id=_slug(hf_id), name=name, hf_id=hf_id, family=str(config.get("model_type") or "hub"), kind=shape.kind,
        params_b=round(total / 1e9, 6), active_params_b=round(active / 1e9, 6), layers=shape.layers,
        hidden_size=shape.hidden, heads=shape.heads, kv_heads=shape.kv_heads, intermediate_size=shape.intermediate,
        vocab_size=shape.vocab, tied_embeddings=shape.tied, moe_experts=shape.experts,
        moe_active_experts=shape.active_experts, max_context=shape.max_context,
        source=f"https://huggingface.co/{hf_id}/blob/main/config.json", head_dim=shape.head_dim,
        kv_lora_rank=shape.kv_lora_rank, qk_rope_head_dim=shape.qk_rope_head_dim, native_dtype=native,
        sliding_window=shape.sliding_window, sliding_layers=shape.sliding_layers,
    )
    return HubSized(spec, quant, dict(files.params_by_dtype), params_from, cached_read)


def _slug(hf_id: str) -> str:
    return "hub-" + re.sub(r"[^a-z0-9.]+", "-", hf_id.casefold()).strip("-")[:70]


def _read_cache(engine: Engine, hf_id: str) -> HubFiles | None:
    with Session(engine) as session:
        row = session.get(HubModel, hf_id)
        if row is None:
            return None
        return HubFiles(json.loads(row.config_json), json.loads(row.params_by_dtype_json), row.revision)


def _write_cache(engine: Engine, hf_id: str, files: HubFiles, now: datetime) -> None:
    with Session(engine) as session:
        row = session.get(HubModel, hf_id) or HubModel(hf_id=hf_id, revision="", config_json="{}", params_by_dtype_json="{}",
                                                       fetched_at=now)
        row.revision = files.revision
        row.config_json = json.dumps(dict(files.config), sort_keys=True)
        row.params_by_dtype_json = json.dumps(dict(files.params_by_dtype), sort_keys=True)
        row.fetched_at = now
        session.add(row)
        session.commit()
