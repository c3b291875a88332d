"""The snapshot kept beside a SQLite database: used only while nothing it was built from has changed."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from knowledge import snapshot_cache
from knowledge.db import make_engine
from knowledge.snapshot import Snapshot, load_snapshot

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
QUESTION = "fine-tune a 13B model with QLoRA on a budget"


def _file(engine: Engine) -> Path:
    path = snapshot_cache.sqlite_file(engine.url.render_as_string(hide_password=False))
    assert path is not None
    return path


def _kept(engine: Engine) -> tuple[Path, Snapshot]:
    """Build the snapshot as the CLI does on a miss (stamp read first) and keep it."""
    path = _file(engine)
    stamp = snapshot_cache.read_stamp(path)
    assert stamp is not None, "a SQLite database at head has a stamp"
    snap = load_snapshot(engine)
    snapshot_cache.store(path, stamp, snap)
    return path, snap


def _same(a: Snapshot, b: Snapshot) -> bool:
    return dataclasses.replace(a, taken_at=NOW, stale_after_days=14) == dataclasses.replace(b, taken_at=NOW, stale_after_days=14)


@pytest.mark.parametrize("backend", ["sqlite"])
def test_the_kept_snapshot_equals_the_one_read_from_the_database(loaded_engine: Engine) -> None:
    path, built = _kept(loaded_engine)
    kept = snapshot_cache.load(path, stale_after_days=3, now=NOW)
    assert kept is not None and _same(kept, built)
    assert kept.stale_after_days == 3 and kept.taken_at == NOW  # the settings and clock of this start
    assert kept.prices_as_of() == built.prices_as_of()


WRITES = [
    ("gpu", "UPDATE gpu SET name = name || ' x' WHERE rowid = (SELECT min(rowid) FROM gpu)"),
    ("gpu_alias", "DELETE FROM gpu_alias WHERE rowid = (SELECT min(rowid) FROM gpu_alias)"),
    ("model_preset", "UPDATE model_preset SET name = name || ' x' WHERE rowid = (SELECT min(rowid) FROM model_preset)"),
    ("model_alias", "UPDATE model_alias SET alias = alias || ' zz9' WHERE rowid = (SELECT min(rowid) FROM model_alias)"),
    ("provider", "UPDATE provider SET name = name || ' x' WHERE rowid = (SELECT min(rowid) FROM provider)"),
    ("offer update", "UPDATE offer SET usd_per_hour = usd_per_hour * 2 WHERE id = (SELECT min(id) FROM offer)"),
    ("offer delete", "DELETE FROM offer WHERE id = (SELECT max(id) FROM offer)"),
    ("offer insert", "INSERT INTO offer (gpu_id, provider_id, instance_type, gpu_count, region, tier, usd_per_hour,"
                     " billing_increment_s, interconnect, observed_at, source, active, market)"
                     " SELECT gpu_id, provider_id, instance_type || '-new', gpu_count, region, tier, usd_per_hour,"
                     " billing_increment_s, interconnect, observed_at, source, active, market FROM offer"
                     " WHERE id = (SELECT min(id) FROM offer)"),
]


@pytest.mark.parametrize("backend", ["sqlite"])
@pytest.mark.parametrize("write", [w for _, w in WRITES], ids=[name for name, _ in WRITES])
def test_any_write_to_what_a_snapshot_reads_retires_the_kept_one(loaded_engine: Engine, write: str) -> None:
    path, built = _kept(loaded_engine)
    with loaded_engine.begin() as conn:
        conn.execute(text(write))
    assert snapshot_cache.load(path, stale_after_days=14) is None
    fresh = load_snapshot(loaded_engine)
    assert not _same(fresh, built), "the write changed the snapshot"
    # Kept again after the change, it is used until the next one.
    snapshot_cache.store(path, snapshot_cache.read_stamp(path), fresh)
    kept = snapshot_cache.load(path, stale_after_days=14, now=NOW)
    assert kept is not None and _same(kept, fresh)


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_write_while_the_snapshot_is_built_is_never_hidden(loaded_engine: Engine) -> None:
    path = _file(loaded_engine)
    stamp = snapshot_cache.read_stamp(path)  # read before the build, as the CLI does
    with loaded_engine.begin() as conn:
        conn.execute(text(WRITES[5][1]))
    snapshot_cache.store(path, stamp, load_snapshot(loaded_engine))
    assert snapshot_cache.load(path, stale_after_days=14) is None


@pytest.mark.parametrize("backend", ["sqlite"])
def test_other_code_a_lost_trigger_or_a_torn_file_mean_building_afresh(
    loaded_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = _kept(loaded_engine)
    with monkeypatch.context() as m:
        m.setattr(snapshot_cache, "code_version", lambda: "another release")
        assert snapshot_cache.load(path, stale_after_days=14) is None
    assert snapshot_cache.load(path, stale_after_days=14) is not None
    snapshot_cache.cache_file(path).write_bytes(snapshot_cache.cache_file(path).read_bytes()[:5000])
    assert snapshot_cache.load(path, stale_after_days=14) is None
    _kept(loaded_engine)
    with loaded_engine.begin() as conn:  # as a later migration rebuilding a table would
        conn.execute(text("DROP TRIGGER catalog_stamp_offer_update"))
    assert snapshot_cache.read_stamp(path) is None
    assert snapshot_cache.load(path, stale_after_days=14) is None


def test_no_stamp_on_postgresql_or_without_a_file(engine: Engine, backend: str, tmp_path: Path) -> None:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT count(*) FROM catalog_stamp")).scalar_one()
    assert rows == (1 if backend == "sqlite" else 0)
    if backend == "postgres":
        assert snapshot_cache.sqlite_file(engine.url.render_as_string(hide_password=False)) is None
    assert snapshot_cache.read_stamp(tmp_path / "none.db") is None
    assert snapshot_cache.sqlite_file("sqlite:///:memory:") is None


def _ask(url: str) -> tuple[dict[str, object], list[str]]:
    """`gpu-advisor ask --json` in a fresh interpreter: its answer and the heavy modules it imported."""
    code = ("import json, sys; from bot.cli import main; status = main(sys.argv[1:]);"
            " print(json.dumps(sorted(m for m in ('sqlalchemy', 'sqlmodel', 'alembic') if m in sys.modules)),"
            " file=sys.stderr); sys.exit(status)")
    env = {**os.environ, "DATABASE_URL": url, "LOG_LEVEL": "WARNING"}
    done = subprocess.run([sys.executable, "-c", code, "ask", QUESTION, "--json"], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    answer = json.loads(done.stdout)
    return answer, json.loads(done.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_warm_ask_answers_the_same_without_sqlalchemy(loaded_engine: Engine) -> None:
    url = loaded_engine.url.render_as_string(hide_password=False)
    loaded_engine.dispose()
    cold, cold_modules = _ask(url)
    assert "sqlalchemy" in cold_modules and snapshot_cache.cache_file(_file(loaded_engine)).exists()
    warm, warm_modules = _ask(url)
    assert warm_modules == [] and warm == cold
    engine = make_engine(url)
    with engine.begin() as conn:  # a price changes: the next ask reads the database again
        conn.execute(text("UPDATE offer SET usd_per_hour = usd_per_hour * 3"))
    engine.dispose()
    after, after_modules = _ask(url)
    assert "sqlalchemy" in after_modules and after != cold
