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
from typing import Any
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


# --- no unhandled traceback in the log (issue 19) --------------------------------------------------------
#
# Every log record of the whole run passes through one handler on the root logger. A record that carries
# a traceback (exc_info, or "Traceback (most recent call last)" in its text) at WARNING or above fails
# the test during which it was logged, unless the test expects one: it is marked `expect_traceback`
# (a fault injected on purpose, whose error boundary must log it). Records logged between tests (by a
# thread a test left running) fail the run at the end, listed in the summary. Subprocesses (the HTTP server,
# spawned answer workers) log to their own stderr, which this does not see.

import logging  # noqa: E402
import traceback  # noqa: E402

TRACEBACK_TEXT = "Traceback (most recent call last)"
# Tests written before this check whose fault injection makes an error boundary log a traceback, by node
# id prefix: a fault on purpose (a core that raises "boom", a template or a gpuhunt source that fails).
EXPECTED_TRACEBACKS: dict[str, str] = {
    "tests/test_ask.py::test_a_failing_component_gives_an_error_card_in_the_users_language":
        "a component made to raise: the pipeline's last line of defence logs it",
    "tests/test_ask_routing.py::test_broken_knowledge_base_without_workload_gets_help_not_a_recommendation":
        "a knowledge base made to raise: the route logs it and answers without it",
    "tests/test_slack_http.py::test_a_failure_is_answered_in_the_users_language_with_a_reference":
        "a core made to raise 'boom': the listeners' error boundary logs it with the request id",
    "tests/test_digest_gpuhunt.py::test_failed_refresh_keeps_last_good_data": "gpuhunt made to fail",
    "tests/test_digest_gpuhunt.py::test_import_failing_halfway_leaves_previous_data_intact": "an import made to fail",
}


class _TracebackWatch(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.test: str | None = None
        self.during: list[logging.LogRecord] = []
        self.between: list[tuple[str, logging.LogRecord]] = []
        self.after: str = "the start of the run"

    def emit(self, record: logging.LogRecord) -> None:
        if not (record.exc_info or TRACEBACK_TEXT in str(record.msg)):
            return
        if self.test is not None:
            self.during.append(record)
        else:
            self.between.append((self.after, record))


_WATCH = _TracebackWatch()


def _shown(record: logging.LogRecord) -> str:
    head = f"{record.levelname} {record.name}: {record.getMessage()}"
    if record.exc_info and record.exc_info[1] is not None:
        head += "\n" + "".join(traceback.format_exception(*record.exc_info))
    return head


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "expect_traceback: the test injects a fault whose traceback is logged")
    logging.getLogger().addHandler(_WATCH)


def _expects_traceback(item: pytest.Item) -> bool:
    return item.get_closest_marker("expect_traceback") is not None or any(
        item.nodeid.startswith(prefix) for prefix in EXPECTED_TRACEBACKS)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item):  # type: ignore[no-untyped-def]
    _WATCH.test, _WATCH.during = item.nodeid, []
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    if call.when != "teardown":
        return
    report = outcome.get_result()
    records, _WATCH.during = _WATCH.during, []
    _WATCH.test, _WATCH.after = None, item.nodeid
    if records and not _expects_traceback(item) and report.outcome != "failed":
        report.outcome = "failed"
        report.longrepr = (f"{len(records)} unhandled traceback(s) logged during {item.nodeid} "
                           "(mark the test expect_traceback if it injects the fault on purpose):\n\n"
                           + "\n".join(_shown(r) for r in records[:5]))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    try:
        from refusals import RUNS
    except ImportError:  # a pytester run of this hook alone
        RUNS = {}
    if RUNS:
        terminalreporter.section("generated inputs per property test (issue 19)")
        for name, count in sorted(RUNS.items()):
            terminalreporter.write_line(f"{count:6d}  {name}")
    if _WATCH.between:
        terminalreporter.section("tracebacks logged between tests")
        for after, record in _WATCH.between[:10]:
            terminalreporter.write_line(f"after {after}:\n{_shown(record)}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _WATCH.between and exitstatus == 0:
        session.exitstatus = 1
