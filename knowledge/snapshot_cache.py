"""A snapshot kept beside a SQLite database and used again while the database's catalog stamp is unchanged.

`gpu-advisor ask` builds its snapshot from the database on every start: importing SQLAlchemy and the table
models and reading the catalog and offers was ~0.3 s of a ~0.7 s start. Migration 0009's triggers bump
`catalog_stamp.version` on any write to a table the snapshot reads, in the writing transaction itself, so
the file is used only when nothing it was built from has changed since. Read with the standard library's
sqlite3 alone; any doubt (no file, another stamp, schema not at head, a trigger missing, other code, an
unreadable file) means the snapshot is built from the database as before and the file written again.

Only SQLite: a PostgreSQL database has no stamp (migration 0009 says why), so this never applies there.
The file is a pickle, trusted as much as the database file beside it (same folder, same owner).
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import sqlite3
import tempfile
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from knowledge.revision import head_revision

if TYPE_CHECKING:
    from knowledge.snapshot import Snapshot

log = logging.getLogger(__name__)
SUFFIX = ".snapshot"
# Migration 0009's triggers: 6 tables x insert, update, delete. A table rebuilt by a later migration (SQLite
# batch mode copies it) loses its triggers; then the stamp is not trusted.
TRIGGERS = 18
_ROOT = Path(__file__).resolve().parents[1]
# The code and data a pickled snapshot depends on: another version of any of them builds it afresh.
_SOURCES = ("knowledge", "rules")
_DATA = (Path(__file__).parent / "data" / "purchase_prices.csv",)


def sqlite_file(database_url: str) -> Path | None:
    """The database file of a `sqlite:///PATH` URL (None for memory databases and other engines)."""
    if not database_url.startswith("sqlite:///"):
        return None
    path = database_url[len("sqlite:///"):].split("?", 1)[0]
    return Path(path).expanduser() if path and path != ":memory:" else None


def cache_file(database: Path) -> Path:
    return database.with_name(database.name + SUFFIX)


def read_stamp(database: Path) -> str | None:
    """"revision:token:version" of a SQLite database at the newest schema with its stamp intact, else None."""
    if not database.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return None
    try:
        with conn:  # one read transaction: the three answers belong together
            revision = conn.execute("SELECT version_num FROM alembic_version").fetchall()
            stamp = conn.execute("SELECT token, version FROM catalog_stamp WHERE id = 1").fetchone()
            triggers = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' "
                                    "AND name LIKE 'catalog\\_stamp\\_%' ESCAPE '\\'").fetchone()[0]
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    if revision != [(head_revision(),)] or stamp is None or triggers != TRIGGERS:
        return None
    return f"{revision[0][0]}:{stamp[0]}:{stamp[1]}"


def code_version() -> str:
    """A digest of the source, compiled and data files the pickled values depend on (names, sizes, change times)."""
    digest = hashlib.sha256()
    # Compiled modules (rules/*.so, setup.py) too: their classes pickle differently from the pure ones.
    files = sorted(p for folder in _SOURCES for pattern in ("*.py", "*.so") for p in (_ROOT / folder).rglob(pattern))
    for path in [*files, *_DATA]:
        info = path.stat()
        digest.update(f"{path.relative_to(_ROOT)}:{info.st_size}:{info.st_mtime_ns}\n".encode())
    from rules import types  # compiled or source, as this process runs it (GPU_ADVISOR_COMPILED=0: source)

    digest.update(str(types.__file__).encode())
    return digest.hexdigest()


def load(database: Path, *, stale_after_days: int, now: datetime | None = None) -> Snapshot | None:
    """The kept snapshot when the database's stamp and the code are those it was built with, else None."""
    stamp = read_stamp(database)
    if stamp is None:
        return None
    try:
        with cache_file(database).open("rb") as fh:
            if pickle.load(fh) != (stamp, code_version()):  # the key first: a stale snapshot is never unpickled
                return None
            snapshot: Snapshot = pickle.load(fh)
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001  # a torn or foreign file: built afresh, never fatal
        log.info("snapshot cache %s not used: %s", cache_file(database), type(exc).__name__)
        return None
    return replace(snapshot, taken_at=now or datetime.now(UTC), stale_after_days=stale_after_days)


def store(database: Path, stamp: str | None, snapshot: Snapshot) -> None:
    """Keep `snapshot`, built after `stamp` was read (a write in between changes the stamp: never used)."""
    if stamp is None:
        return
    target = cache_file(database)
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=target.name + ".", dir=target.parent)
        with os.fdopen(fd, "wb") as fh:
            pickle.dump((stamp, code_version()), fh, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.dump(snapshot, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, target)  # readers see the old file or the new one, never half of one
    except OSError as exc:  # a read-only folder: the next start builds the snapshot again
        log.info("snapshot cache %s not written: %s", target, exc)
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
