"""Shared fixtures: fresh databases on SQLite and PostgreSQL, a loaded catalog, a snapshot, golden files.

PostgreSQL tests use TEST_POSTGRES_URL (default: the local server, database `test`). Each test
gets its own database cloned from a migrated template, so tests never see each other's rows and
several test runs can share one server. Under CI=true a missing server fails the run loudly;
elsewhere its tests are skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, text

from knowledge.db import make_engine

pytest_plugins = ("log_scan",)  # every log line of the suite is scanned for secrets (tests/log_scan.py)

PG_ADMIN_URL = os.environ.get("TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
BACKENDS = ("sqlite", "postgres")
_RUN = uuid.uuid4().hex[:8]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files from current output")


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


class _Postgres:
    """Creates and drops uniquely named databases on the admin server."""

    def __init__(self) -> None:
        self.admin: Engine | None = None
        self.error: str | None = None
        self.created: list[str] = []

    def connect(self) -> Engine | None:
        if self.admin is None and self.error is None:
            try:
                self.admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT", pool_pre_ping=True)
                with self.admin.connect() as conn:
                    conn.execute(text("select 1"))
            except Exception as exc:  # any connection failure means "no server"
                self.admin, self.error = None, f"PostgreSQL not reachable at {PG_ADMIN_URL}: {exc}"
        return self.admin

    def url_for(self, name: str) -> str:
        base = PG_ADMIN_URL.rsplit("/", 1)[0]
        return f"{base}/{name}"

    def create(self, name: str, template: str | None = None) -> str:
        admin = self.connect()
        assert admin is not None
        clause = f' TEMPLATE "{template}"' if template else ""
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"{clause}'))
        self.created.append(name)
        return self.url_for(name)

    def drop_all(self) -> None:
        if self.admin is None:
            return
        with self.admin.connect() as conn:
            for name in reversed(self.created):
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        self.admin.dispose()


@pytest.fixture(scope="session")
def _pg() -> Iterator[_Postgres]:
    pg = _Postgres()
    yield pg
    pg.drop_all()


def _require_backend(backend: str, pg: _Postgres) -> None:
    if backend == "postgres" and pg.connect() is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs PostgreSQL: {pg.error}", pytrace=False)
        pytest.skip(pg.error or "no PostgreSQL")


class _Templates:
    """Per backend: an empty migrated database and one with the catalog and bundled prices loaded."""

    def __init__(self, pg: _Postgres, tmp: Path) -> None:
        self.pg, self.tmp, self.made = pg, tmp, {}

    def get(self, backend: str, kind: str) -> str:
        key = (backend, kind)
        if key not in self.made:
            self.made[key] = self._build(backend, kind)
        return self.made[key]

    def _build(self, backend: str, kind: str) -> str:
        from knowledge.db import upgrade_schema
        from knowledge.load import load_catalog
        from knowledge.setup import import_bundled_prices

        name = f"gpuadv_{_RUN}_tpl_{kind}"
        url = self.pg.create(name) if backend == "postgres" else f"sqlite:///{self.tmp / (name + '.db')}"
        engine = make_engine(url)
        upgrade_schema(engine)
        if kind == "loaded":
            load_catalog(engine)
            import_bundled_prices(engine)
        engine.dispose()
        return name if backend == "postgres" else url

    def clone(self, backend: str, kind: str, tmp_path: Path) -> str:
        source = self.get(backend, kind)
        name = f"gpuadv_{_RUN}_{uuid.uuid4().hex[:10]}"
        if backend == "postgres":
            return self.pg.create(name, template=source)
        target = tmp_path / f"{name}.db"
        shutil.copyfile(source[len("sqlite:///") :], target)
        return f"sqlite:///{target}"


@pytest.fixture(scope="session")
def _templates(_pg: _Postgres, tmp_path_factory: pytest.TempPathFactory) -> _Templates:
    return _Templates(_pg, tmp_path_factory.mktemp("templates"))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, _pg: _Postgres) -> str:
    _require_backend(request.param, _pg)
    return str(request.param)


@pytest.fixture
def db_url(backend: str, _pg: _Postgres, tmp_path: Path) -> str:
    """A fresh, empty database (no schema) on each backend."""
    if backend == "postgres":
        return _pg.create(f"gpuadv_{_RUN}_{uuid.uuid4().hex[:10]}")
    return f"sqlite:///{tmp_path / 'fresh.db'}"


@pytest.fixture
def engine(backend: str, _templates: _Templates, tmp_path: Path) -> Iterator[Engine]:
    """A fresh database with the schema at head and no rows, on each backend."""
    eng = make_engine(_templates.clone(backend, "empty", tmp_path))
    yield eng
    eng.dispose()


@pytest.fixture
def loaded_engine(backend: str, _templates: _Templates, tmp_path: Path) -> Iterator[Engine]:
    """A fresh database with the catalog and the bundled SkyPilot prices; free to change."""
    eng = make_engine(_templates.clone(backend, "loaded", tmp_path))
    yield eng
    eng.dispose()


@pytest.fixture(scope="session", params=BACKENDS)
def catalog_engine(
    request: pytest.FixtureRequest, _pg: _Postgres, _templates: _Templates, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    """One shared loaded database per backend for read-only tests: do not write to it.

    It is a clone, not the template itself: PostgreSQL cannot copy a template that has connections.
    """
    _require_backend(request.param, _pg)
    eng = make_engine(_templates.clone(request.param, "loaded", tmp_path_factory.mktemp("catalog")))
    yield eng
    eng.dispose()


@pytest.fixture(scope="session")
def snapshot(_templates: _Templates, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The loaded catalog and bundled offers as a Snapshot (built from SQLite once per run)."""
    from knowledge.snapshot import load_snapshot

    eng = make_engine(_templates.clone("sqlite", "loaded", tmp_path_factory.mktemp("snapshot")))
    snap = load_snapshot(eng)
    eng.dispose()
    return snap
