"""The wide-catalog fields (unified memory, laptop, modified, dated prices, model shape) survive the round trip."""

from datetime import date

from alembic import command
from sqlalchemy import inspect

from knowledge.db import alembic_config
from knowledge.load import load_catalog
from knowledge.snapshot import load_snapshot
from rules.types import GpuSpec, ModelSpec


def test_new_fields_have_the_agreed_defaults():
    gpu_defaults = {f: GpuSpec.__dataclass_fields__[f].default for f in (
        "unified_memory", "gpu_usable_fraction", "laptop", "modified", "purchase_date", "purchase_source")}
    assert gpu_defaults == {
        "unified_memory": False, "gpu_usable_fraction": 1.0, "laptop": False, "modified": False,
        "purchase_date": None, "purchase_source": None,
    }
    model_defaults = {f: ModelSpec.__dataclass_fields__[f].default for f in (
        "head_dim", "kv_lora_rank", "qk_rope_head_dim", "native_dtype", "sliding_window", "sliding_layers")}
    assert model_defaults == {
        "head_dim": 0, "kv_lora_rank": 0, "qk_rope_head_dim": 0, "native_dtype": "bf16",
        "sliding_window": 0, "sliding_layers": 0,
    }


def test_snapshot_carries_the_new_fields(engine):
    load_catalog(engine)
    snap = load_snapshot(engine)
    assert all(isinstance(g.unified_memory, bool) and 0 < g.gpu_usable_fraction <= 1 for g in snap.gpus.values())
    dated = [g for g in snap.gpus.values() if g.purchase_date is not None]
    assert all(isinstance(g.purchase_date, date) and g.purchase_source for g in dated)
    assert all(m.attention_head_dim > 0 for m in snap.models.values())


def test_migration_0004_downgrades_and_upgrades(engine):
    cfg = alembic_config(engine)
    command.downgrade(cfg, "0003")
    cols = {c["name"] for c in inspect(engine).get_columns("gpu")}
    assert "unified_memory" not in cols and not inspect(engine).has_table("hub_model")
    command.upgrade(cfg, "head")
    cols = {c["name"] for c in inspect(engine).get_columns("gpu")}
    assert {"unified_memory", "gpu_usable_fraction", "laptop", "modified", "purchase_date"} <= cols
    assert inspect(engine).has_table("hub_model")
