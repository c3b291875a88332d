"""A local deployment for the queue benchmarks: web processes and answer workers on one database and queue.

`sqlite`: the embedded default (a database file, a queue file). `postgres+redis`: a fresh
PostgreSQL database on the local server and a Redis queue under a run-unique name, as the README's
scale-out recipe runs it. Everything listens on loopback and is stopped (and dropped) afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from bot.bench.http_load import SIGNING_SECRET, descendant_pids, free_port, gpu_advisor_command, healthy
from bot.cli.serve import WEB_THREADS

START_LIMIT_S = 90.0
DEFAULT_POSTGRES = os.environ.get("BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
DEFAULT_REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")


@dataclass
class Stack:
    """The running processes of one deployment and where they log."""

    env: dict[str, str]
    database_url: str
    logs: IO[bytes]
    webs: list[tuple[int, subprocess.Popen[bytes]]] = field(default_factory=list)  # (port, server master process)
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start_web(self, threads: int = WEB_THREADS) -> int:
        port = free_port()
        command = [*gpu_advisor_command(), "serve", "--http", "--host", "127.0.0.1", "--port", str(port),
                   "--workers", "1", "--threads", str(threads), "--answer-workers", "0"]
        process = subprocess.Popen(command, env=self.env, stdout=subprocess.DEVNULL, stderr=self.logs,
                                   start_new_session=True)
        self.webs.append((port, process))
        return port

    def start_worker(self) -> subprocess.Popen[bytes]:
        process = subprocess.Popen([*gpu_advisor_command(), "worker"], env=self.env, stdout=subprocess.DEVNULL,
                                   stderr=self.logs, start_new_session=True)
        self.workers.append(process)
        return process

    def wait_ready(self) -> float:
        """Seconds until every web process answers /healthz (workers warm up meanwhile)."""
        started = time.perf_counter()
        for port, process in self.webs:
            while not healthy(port):
                if process.poll() is not None or time.perf_counter() - started > START_LIMIT_S:
                    raise RuntimeError(f"web process did not start: {self.log_tail()}")
                time.sleep(0.05)
        return time.perf_counter() - started

    def web_pids(self, n: int) -> list[int]:
        """The worker process(es) of web process `n` (what answers requests)."""
        return descendant_pids(self.webs[n][1].pid)

    def kill_web(self, n: int) -> None:
        for pid in self.web_pids(n):
            os.kill(pid, signal.SIGKILL)  # the server master starts a new worker, as in production

    def kill_worker(self, n: int) -> None:
        self.workers[n].send_signal(signal.SIGKILL)
        self.workers[n].wait(10)

    def restart_worker(self, n: int) -> None:
        self.workers[n] = subprocess.Popen([*gpu_advisor_command(), "worker"], env=self.env,
                                           stdout=subprocess.DEVNULL, stderr=self.logs, start_new_session=True)

    def log_tail(self, chars: int = 3000) -> str:
        self.logs.flush()
        self.logs.seek(0)
        return str(self.logs.read().decode("utf-8", "replace")[-chars:])

    def stop(self) -> None:
        processes = [p for _, p in self.webs] + self.workers
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)


@contextmanager
def postgres_database(admin_url: str = DEFAULT_POSTGRES) -> Iterator[str]:
    """A fresh database on the local server, dropped afterwards."""
    import psycopg

    name = f"gpuadv_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def reachable(postgres_url: str = DEFAULT_POSTGRES, redis_url: str = DEFAULT_REDIS) -> str | None:
    """None when both servers answer, else why not (the PostgreSQL + Redis runs are then skipped)."""
    try:
        import psycopg
        from redis import Redis

        with psycopg.connect(postgres_url, connect_timeout=3):
            pass
        Redis.from_url(redis_url, socket_connect_timeout=3).ping()
    except Exception as exc:  # noqa: BLE001  # any failure means "not here"
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
    return None


@contextmanager
def deployment(kind: str, slack_url: str, workdir: Path, *, redis_url: str = DEFAULT_REDIS,
               postgres_url: str = DEFAULT_POSTGRES) -> Iterator[Stack]:
    """`sqlite` or `postgres+redis`: settings and a prepared database; processes are started by the caller."""
    from contextlib import ExitStack

    from knowledge.setup import prepare_database

    with ExitStack() as stack:
        if kind == "sqlite":
            database_url, queue_url = f"sqlite:///{workdir / 'queue-bench.db'}", ""
        else:
            database_url, queue_url = stack.enter_context(postgres_database(postgres_url)), redis_url
        env = {**os.environ, "DATABASE_URL": database_url, "SLACK_BOT_TOKEN": "xoxb-bench",
               "SLACK_SIGNING_SECRET": SIGNING_SECRET, "SLACK_API_URL": slack_url + "/api/", "LOG_LEVEL": "WARNING",
               "QUEUE_NAME": f"bench-{uuid.uuid4().hex[:8]}", "SECRET_KEY_FILE": str(workdir / "secret.key")}
        for name in ("SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "QUEUE_URL", "SECRET_KEYS"):
            env.pop(name, None)
        if queue_url:
            env["QUEUE_URL"] = queue_url
        prepare_database(database_url).dispose()
        logs = stack.enter_context(tempfile.TemporaryFile())
        running = Stack(env=env, database_url=database_url, logs=logs)
        try:
            yield running
        finally:
            running.stop()
            if queue_url:
                _forget_redis(queue_url, env["QUEUE_NAME"])


def _forget_redis(redis_url: str, name: str) -> None:
    """Drop this run's keys (queue, schedule, rate slots): runs never see each other's."""
    import re

    from redis import Redis

    client = Redis.from_url(redis_url)
    for pattern in (f"huey.*.{re.sub('[^A-Za-z0-9_]', '', name)}*", f"{name}:*"):
        keys = list(client.scan_iter(match=pattern, count=500))
        if keys:
            client.delete(*keys)
