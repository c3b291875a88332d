"""Shared inputs for the rules tests: the catalog GPUs (knowledge/data/gpus.csv), models, offers, tables."""

from __future__ import annotations

import csv
import json
from datetime import date, UTC, datetime
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from knowledge.rule_tables import load_rule_tables
from rules.tables import RuleTables
from rules.types import GpuSpec, ModelSpec, Offer, Provider, field_names

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "cases"

_FLOATS = {"vram_gb", "memory_bandwidth_gbs", "bf16_dense_tflops", "fp16_dense_tflops",
           "fp8_dense_tflops", "fp32_tflops", "scaleup_bw_gbs", "gpu_usable_fraction"}
_INTS = {"tdp_w", "release_year", "mig_instances"}
_BOOLS = {"multinode_fabric", "bf16_support", "fp8_support", "unified_memory", "laptop", "modified"}


def _value(key: str, text: str) -> object:
    if text == "":
        return None
    if key in _FLOATS:
        return float(text)
    if key in _INTS:
        return int(text)
    if key in _BOOLS:
        return text == "true"
    if key == "purchase_usd":
        return Decimal(text)
    if key == "purchase_date":
        return date.fromisoformat(text)
    return text


@lru_cache(maxsize=1)
def catalog_gpus() -> dict[str, GpuSpec]:
    """Every GPU in the bundled catalog CSV, as the snapshot would build them."""
    with (ROOT / "knowledge" / "data" / "gpus.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return {row["id"]: GpuSpec(**{k: _value(k, row[k]) for k in field_names(GpuSpec)}) for row in rows}


def model(hf_id: str, *, kind: str = "llm") -> ModelSpec:
    """A ModelSpec from tests/cases/memory_case_models.json (shapes from each config.json)."""
    row = json.loads((CASES / "memory_case_models.json").read_text())[hf_id]
    return ModelSpec(
        id=hf_id.split("/")[-1].lower(), name=hf_id, hf_id=hf_id, family="test", kind=kind,  # type: ignore[arg-type]
        params_b=row["params_b"], active_params_b=row["params_b"], layers=row["layers"],
        hidden_size=row["hidden"], heads=row["heads"], kv_heads=row["kv_heads"],
        intermediate_size=row["ffn"], vocab_size=row["vocab"], tied_embeddings=row["tied"],
        moe_experts=0, moe_active_experts=0, max_context=131072, source="test",
    )


def providers() -> dict[str, Provider]:
    return {
        "secs": Provider("secs", "Per-second cloud", "neocloud", 1, "NVLink", "test"),
        "hourly": Provider("hourly", "Hourly cloud", "cloud", 3600, "NVLink", "test"),
    }


def offers_for(gpus: dict[str, GpuSpec], *, per_gpu: int = 4) -> dict[str, tuple[Offer, ...]]:
    """Deterministic offers: 1- and 8-GPU instances per GPU, priced by TFLOPS, sorted by $/GPU-h."""
    stamp = datetime(2026, 1, 1, tzinfo=UTC)
    out: dict[str, tuple[Offer, ...]] = {}
    for gpu in gpus.values():
        base = Decimal(str(round(0.2 + (gpu.bf16_dense_tflops or gpu.fp16_dense_tflops) / 400, 2)))
        offers = []
        for i in range(per_gpu):
            count = 8 if i % 2 else 1
            provider = "secs" if i % 4 < 2 else "hourly"
            price = base + Decimal(i) / 100
            tier = "spot" if i % 3 == 2 else "on-demand"
            offers.append(Offer(gpu.id, provider, f"{gpu.id}-x{count}-{i}", count, "us", tier,  # type: ignore[arg-type]
                                price * count, price, 1 if provider == "secs" else 3600,
                                "NVLink" if gpu.has_nvlink_class_link else "PCIe", stamp, "test"))
        out[gpu.id] = tuple(sorted(offers, key=lambda o: (o.usd_per_gpu_hour, o.instance_type)))
    return out


def tables() -> RuleTables:
    return load_rule_tables()
