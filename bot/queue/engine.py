"""The queue engine: huey on SQLite (default, no server), Redis, or PostgreSQL, chosen by QUEUE_URL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

if TYPE_CHECKING:
    from huey import Huey

    from bot.settings import Settings

ANSWER_TASK = "answer_request"
SQLITE_POLL_S = (0.01, 0.1)  # an idle SQLite worker polls from 10 ms backing off to 100 ms (Redis/PG block)


def backend(queue_url: str) -> str:
    """"sqlite", "redis" or "postgres" for a QUEUE_URL."""
    scheme = urlparse(queue_url).scheme
    if scheme == "sqlite":
        return "sqlite"
    if scheme in ("redis", "rediss"):
        return "redis"
    return "postgres"


def import_huey_for(queue_url: str) -> None:
    """Import huey for a process that serves this one queue for its whole life (`serve --http`'s main process,
    whose web workers fork from it): on SQLite, without the Redis and PostgreSQL clients.

    huey.storage imports `redis` and `psycopg` whenever they are installed (~0.12 s of the server's start on
    the bench host, docs/BENCHMARKS.md); it sets them to None when the import fails, and a SQLite queue reads
    neither. Nothing here changes a process that already imported huey.storage or that uses Redis/PostgreSQL.
    The guard is lifted at once: a later `import redis` elsewhere (the per-channel rate limit) still works.
    """
    import sys

    if "huey.storage" in sys.modules or backend(queue_url) != "sqlite":
        return
    hidden = [name for name in ("redis", "psycopg") if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # `import name` raises ImportError (the import system's own switch)
    try:
        import huey.storage  # noqa: F401
    finally:
        for name in hidden:
            del sys.modules[name]


def libpq_dsn(url: str) -> str:
    """`postgresql+psycopg://…` (SQLAlchemy's spelling) as psycopg's own `postgresql://…`."""
    for prefix in ("postgresql+psycopg://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix) :]
    return url


def make_huey(settings: Settings) -> Huey:
    """A huey instance for the settings' queue; results are not kept (the request records are the truth)."""
    from huey import Huey, PostgresHuey, RedisHuey
    from huey.storage import SqliteStorage

    class SqliteNormalSync(SqliteStorage):  # type: ignore[misc]  # huey is untyped
        """WAL with synchronous=NORMAL: a commit survives the process being killed, without an fsync each."""

        def _create_connection(self) -> Any:
            conn = super()._create_connection()
            conn.execute("pragma synchronous=1")
            return conn

    url, name = settings.queue_url, settings.queue_name
    kind = backend(url)
    if kind == "sqlite":
        path = Path(url[len("sqlite:///") :])
        path.parent.mkdir(parents=True, exist_ok=True)
        return Huey(name, storage_class=SqliteNormalSync, filename=str(path), results=False, timeout=30)
    if kind == "redis":
        return RedisHuey(name, url=url, results=False, blocking=True, read_timeout=1)
    import psycopg

    options = {"dsn": libpq_dsn(url), "results": False, "table_prefix": name.replace("-", "_")}
    try:
        return PostgresHuey(name, **options)
    except (psycopg.errors.UniqueViolation, psycopg.errors.DuplicateTable):
        # Web and worker processes starting together race on CREATE TABLE IF NOT EXISTS (PostgreSQL
        # checks its catalog before it locks it): the other one made the tables.
        return PostgresHuey(name, create_tables=False, **options)


def answer_task(huey: Huey, run: Callable[[str], float | None]) -> Callable[[str], Any]:
    """The one task: answer the request stored under `key`; `run` returns a delay to run it again."""
    from huey.exceptions import RetryTask

    @huey.task(name=ANSWER_TASK)  # type: ignore[untyped-decorator]  # huey is untyped
    def answer_request(key: str) -> None:
        delay = run(key)
        if delay is not None:
            raise RetryTask(delay=max(0.0, delay))

    return answer_request  # type: ignore[no-any-return]  # a huey TaskWrapper


def enqueue_many(huey: Huey, task: Any, keys: list[str]) -> None:
    """Put many keys on the queue in one round trip (one transaction on SQLite/PostgreSQL, one LPUSH on Redis)."""
    from huey.storage import PostgresStorage, RedisStorage, SqliteStorage

    datas = [huey.serialize_task(task.s(key)) for key in keys]
    storage = huey.storage
    if isinstance(storage, RedisStorage):
        storage.conn.lpush(storage.queue_key, *datas)
    elif isinstance(storage, PostgresStorage):
        with storage.db(commit=True) as curs:
            curs.executemany(f"insert into {storage.table_task} (queue, data, priority) values (%s, %s, 0)",
                             [(storage.name, data) for data in datas])
            curs.execute("select pg_notify(%s, %s)", (storage.channel, ""))
    elif isinstance(storage, SqliteStorage):
        with storage.db(commit=True) as curs:
            curs.executemany("insert into task (queue, data, priority) values (?, ?, 0)",
                             [(storage.name, storage.to_blob(data)) for data in datas])
    else:
        for data in datas:
            storage.enqueue(data)


def consumer_options(settings: Settings, *, threads: int) -> dict[str, object]:
    """Thread workers (answers wait on Slack and the database); SQLite is polled, Redis/PG block."""
    initial, most = SQLITE_POLL_S
    return {"workers": threads, "worker_type": "thread", "initial_delay": initial, "max_delay": most,
            "backoff": 1.5, "scheduler_interval": 1, "periodic": False, "check_worker_health": True,
            "health_check_interval": 5}
