"""Upgrading a database people already use: a populated schema moves to the newest migration whole, or not at all.

SQLite copies a table to alter it (Alembic batch mode) and dropping the old copy is refused while populated
tables point at it with foreign keys; a run that failed or was killed half way left `_alembic_tmp_gpu`
behind and every later start failed on it. These tests build a database at migration 0003 with a GPU, a
provider and an offer in it (the state of every installation before the wide catalog), then upgrade it.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command

from knowledge.db import alembic_config, head_revision, make_engine, upgrade_schema
from knowledge.setup import prepare_database


def _filler(column: sa.Column[Any]) -> object:
    """A value of the column's type for the NOT NULL columns the test does not care about."""
    kind = column.type
    if isinstance(kind, sa.Boolean):
        return False
    if isinstance(kind, sa.Integer):
        return 1
    if isinstance(kind, (sa.Float, sa.Numeric)):
        return Decimal("1.5") if isinstance(kind, sa.Numeric) and not isinstance(kind, sa.Float) else 1.5
    if isinstance(kind, sa.DateTime):
        return sa.func.current_timestamp()
    return "x"


def _insert(conn: sa.Connection, table: sa.Table, **given: object) -> None:
    values = {c.name: _filler(c) for c in table.columns if not c.nullable and c.name not in given
              and not c.autoincrement is True}
    conn.execute(table.insert().values(**values, **given))


def _at_0003(path: Path) -> sa.Engine:
    engine = make_engine(f"sqlite:///{path}")
    command.upgrade(alembic_config(engine), "0003")
    meta = sa.MetaData()
    meta.reflect(engine)
    with engine.begin() as conn:
        _insert(conn, meta.tables["gpu"], id="rtx-4090", name="GeForce RTX 4090", vram_gb=24.0)
        _insert(conn, meta.tables["provider"], id="runpod", name="RunPod")
        _insert(conn, meta.tables["offer"], id=1, gpu_id="rtx-4090", provider_id="runpod", gpu_count=1)
    return engine


def _version(engine: sa.Engine) -> str:
    with engine.connect() as conn:
        return str(conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar_one())


def _tables(engine: sa.Engine) -> set[str]:
    return set(sa.inspect(engine).get_table_names())


def test_a_populated_database_upgrades_to_head(tmp_path: Path) -> None:
    engine = _at_0003(tmp_path / "old.db")
    upgrade_schema(engine)
    assert _version(engine) == head_revision()
    assert not {t for t in _tables(engine) if t.startswith("_alembic_tmp_")}
    with engine.connect() as conn:
        row = conn.execute(sa.text("SELECT name, vram_gb, unified_memory, gpu_usable_fraction FROM gpu")).one()
        assert tuple(row) == ("GeForce RTX 4090", 24.0, 0, 1.0)  # kept, and the new columns at their defaults
        assert conn.execute(sa.text("SELECT gpu_id FROM offer")).scalars().all() == ["rtx-4090"]
        assert conn.execute(sa.text("PRAGMA foreign_keys")).scalar_one() == 1  # back on after the upgrade


def test_a_failed_upgrade_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new columns are added, then the migration fails: the database is left exactly at 0003."""
    engine = _at_0003(tmp_path / "old.db")
    import alembic.operations.base as alembic_ops

    real = alembic_ops.Operations.create_table

    def failing(self: object, name: str, *args: object, **kwargs: object) -> object:
        if name == "hub_model":  # after the gpu and model_preset tables were rebuilt
            raise OSError("disk full (injected)")
        return real(self, name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(alembic_ops.Operations, "create_table", failing)
    with pytest.raises(OSError, match="injected"):
        upgrade_schema(engine)
    assert _version(engine) == "0003"
    assert "hub_model" not in _tables(engine) and not {t for t in _tables(engine) if t.startswith("_alembic")}
    columns = {c["name"] for c in sa.inspect(engine).get_columns("gpu")}
    assert "unified_memory" not in columns
    monkeypatch.setattr(alembic_ops.Operations, "create_table", real)
    upgrade_schema(engine)  # and the same upgrade, uninterrupted, goes through
    assert _version(engine) == head_revision()


def test_a_copy_left_by_an_older_interrupted_upgrade_is_dropped(tmp_path: Path) -> None:
    engine = _at_0003(tmp_path / "old.db")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE _alembic_tmp_gpu (id VARCHAR PRIMARY KEY)")
    upgrade_schema(engine)
    assert _version(engine) == head_revision() and "_alembic_tmp_gpu" not in _tables(engine)


def test_starting_on_an_upgraded_database_refreshes_the_catalog(tmp_path: Path) -> None:
    """The CLI and the servers call prepare_database: after upgrading an old database it holds the whole
    catalog of this release, not the one GPU it had."""
    path = tmp_path / "old.db"
    _at_0003(path).dispose()
    engine = prepare_database(f"sqlite:///{path}")
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM gpu")).scalar_one() >= 150
