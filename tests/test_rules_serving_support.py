"""Shared inputs for the serving tests: catalog model presets (knowledge/data/models.csv) as ModelSpec."""

from __future__ import annotations

import csv
from functools import lru_cache

from rules.types import GpuSpec, ModelSpec, field_names
from test_rules_support import ROOT, catalog_gpus

_INTS = {"layers", "hidden_size", "heads", "kv_heads", "intermediate_size", "vocab_size", "moe_experts",
         "moe_active_experts", "max_context", "head_dim", "kv_lora_rank", "qk_rope_head_dim", "sliding_window",
         "sliding_layers"}
_FLOATS = {"params_b", "active_params_b"}


def _value(key: str, text: str) -> object:
    if key in _INTS:
        return int(text or 0)
    if key in _FLOATS:
        return float(text)
    if key == "tied_embeddings":
        return text == "true"
    return text or None


@lru_cache(maxsize=1)
def catalog_models() -> dict[str, ModelSpec]:
    """Every preset of the bundled catalog CSV (the columns this ModelSpec has)."""
    with (ROOT / "knowledge" / "data" / "models.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    fields = field_names(ModelSpec)
    return {row["id"]: ModelSpec(**{k: _value(k, row[k]) for k in fields if k in row}) for row in rows}


def catalog_model(model_id: str) -> ModelSpec:
    return catalog_models()[model_id]


STAND_IN = "stand-in Mac (tests/test_rules_serving_support.py): compute figures copied from an RTX 4090"


def apple_gpu(name: str, *, memory_gb: float, bandwidth_gbs: float, usable_fraction: float = 0.75) -> GpuSpec:
    """An Apple-silicon Mac as a GPU: unified memory, its bandwidth; compute taken from a catalog card (the
    tests that use it read only memory and bandwidth)."""
    base = catalog_gpus()["rtx-4090"]
    values = {f: getattr(base, f) for f in field_names(GpuSpec)}
    values.update(id=name, name=name, vram_gb=memory_gb, memory_bandwidth_gbs=bandwidth_gbs, segment="consumer",
                  purchase_usd=None, unified_memory=True, gpu_usable_fraction=usable_fraction, source=STAND_IN)
    return GpuSpec(**values)
