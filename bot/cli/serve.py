"""`gpu-advisor serve --http | --socket`, `gpu-advisor worker`, `gpu-advisor secrets`: run the Slack app."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from bot.cli.context import Subparsers
    from bot.settings import Settings
    from bot.slack.wsgi import Wsgi

log = logging.getLogger(__name__)
T = TypeVar("T")
RESTART_PAUSE_S = 1.0  # a worker that exits is started again after this pause
# Threads per web process: a request waits for a free thread before it can join the next group commit, so
# at least as many as the requests one process has in flight. At 50 clients on 2 processes, 4/8/16/32/64
# threads gave 2.2k/3.1k/3.8k/4.3k/4.0k acks/s (docs/BENCHMARKS.md).
WEB_THREADS = 32
WORKER_NICE = 10  # workers started beside a server: CFS weight ~1/10 of a web process, acks win the CPU


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "serve", help="run the Slack app over HTTP (production) or Socket Mode (development)"
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--http", action="store_true", help="serve /slack/events under Granian (default)")
    mode.add_argument("--socket", action="store_true", help="Socket Mode with SLACK_APP_TOKEN")
    parser.add_argument("--port", type=int, default=None, help="HTTP port (default: $PORT or 3000)")
    parser.add_argument("--host", default="0.0.0.0", help="HTTP address to bind (default: 0.0.0.0)")
    parser.add_argument(
        "--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", "2")),
        help="HTTP worker processes (default: $WEB_CONCURRENCY or 2)",
    )
    parser.add_argument("--threads", type=int, default=WEB_THREADS,
                        help=f"threads per HTTP worker (default: {WEB_THREADS})")
    parser.add_argument(
        "--answer-workers", type=int, default=1,
        help="answer worker processes started beside the server (`gpu-advisor worker`; default 1, "
             "0 when workers run elsewhere, as in the Procfile)",
    )
    parser.set_defaults(handler=run)

    worker = subparsers.add_parser("worker", help="answer queued Slack requests (the Procfile's worker)")
    worker.add_argument("--threads", type=int, default=1,
                        help="requests answered at once in this process (default 1; scale with processes)")
    worker.add_argument("--nice", type=int, default=0,
                        help="lower this process's CPU priority (serve starts its workers at 10: acks win the CPU)")
    worker.set_defaults(handler=run_worker_command)

    secrets = subparsers.add_parser("secrets", help="secret keys: make one, check the stored tokens, rotate")
    secrets.add_argument("action", choices=("new-key", "check", "rotate"),
                         help="new-key: print a fresh key for SECRET_KEYS; check: decrypt the stored tokens; "
                              "rotate: re-encrypt them with the first key of SECRET_KEYS")
    secrets.set_defaults(handler=run_secrets)


def _settings() -> Settings:
    from bot.settings import load_settings

    settings = load_settings()
    _configure_logging(settings)
    return settings


def _configure_logging(settings: Settings) -> None:
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s",
        force=True,
    )


def _web_worker_app(settings: Settings) -> Wsgi:
    """What each web worker process serves (built after the fork, so no connection crosses it)."""
    from bot.queue.runtime import build_front

    _configure_logging(settings)  # Granian configured logging for its own loggers in this process
    return build_front(settings)


def run(args: argparse.Namespace) -> int:
    settings = _settings()
    if args.socket:
        from bot.settings import require_slack_socket

        require_slack_socket(settings)
        with AnswerWorkerProcesses(args.answer_workers):
            return run_socket(settings)
    from bot.settings import require_slack_http

    require_slack_http(settings)
    return run_http(settings, host=args.host, port=args.port or settings.port, workers=args.workers,
                    threads=args.threads, answer_workers=args.answer_workers)


def run_http(settings: Settings, *, host: str, port: int, workers: int, threads: int, answer_workers: int) -> int:
    """Web processes only verify, record, enqueue and acknowledge; worker processes answer."""
    from functools import partial

    from bot.queue.runtime import secret_box
    from bot.slack.wsgi import serve_granian
    from knowledge.setup import prepare_database
    from knowledge.slack_secrets import check_secrets

    from bot.queue.engine import import_huey_for, make_huey

    import_huey_for(settings.queue_url)  # before anything imports huey: on SQLite without redis and psycopg
    # The ack path's modules (bot.slack.bodies builds its pydantic models of Slack's bodies on import) are
    # imported once here, before the server forks: each worker importing them itself took ~0.4 s of start.
    import bot.slack.front  # noqa: F401

    engine = prepare_database(settings.database_url)  # migrate once, before the workers fork
    _checked(lambda: check_secrets(engine, secret_box(settings)))
    engine.dispose()
    make_huey(settings).storage.close()  # the queue's tables too (SQLite file, PostgreSQL tables)
    with AnswerWorkerProcesses(answer_workers):
        serve_granian(partial(_web_worker_app, settings), host=host, port=port, workers=workers, threads=threads,
                      log_level=settings.log_level)
    return 0


def run_socket(settings: Settings) -> int:
    from bot.queue.runtime import run_socket as socket_mode

    socket_mode(settings)
    return 0


def run_worker_command(args: argparse.Namespace) -> int:
    from bot.queue.runtime import run_worker

    if args.nice:
        os.nice(args.nice)
    settings = _settings()
    return _checked(lambda: run_worker(settings, threads=args.threads))


def run_secrets(args: argparse.Namespace) -> int:
    from bot.queue.runtime import secret_box
    from knowledge.secret_box import new_key

    if args.action == "new-key":
        print(new_key())
        return 0
    from knowledge.setup import prepare_database
    from knowledge.slack_secrets import check_secrets, rotate_secrets

    settings = _settings()
    engine = prepare_database(settings.database_url)
    box = _checked(lambda: secret_box(settings))
    if args.action == "check":
        encrypted = _checked(lambda: check_secrets(engine, box))
        print(f"ok: the keys from {box.source} decrypt the stored tokens ({encrypted} encrypted now)")
    else:
        print(f"re-encrypted {_checked(lambda: rotate_secrets(engine, box))} stored secret(s) with the first key")
    return 0


def _checked(step: Callable[[], T]) -> T:
    """A key problem is a settings problem: one clear line, no traceback."""
    from bot.settings import SettingsError
    from knowledge.secret_box import SecretKeyError

    try:
        return step()
    except SecretKeyError as exc:
        raise SettingsError(str(exc)) from None


class AnswerWorkerProcesses:
    """`count` `gpu-advisor worker` processes beside a server, each started again if it exits."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.processes: list[subprocess.Popen[bytes]] = []
        self._stopping = threading.Event()
        self._watch = threading.Thread(target=self._keep_running, name="answer-workers", daemon=True)

    def __enter__(self) -> AnswerWorkerProcesses:
        self.processes = [self._start() for _ in range(self.count)]
        if self.count:
            self._watch.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)  # huey: finish the task in hand, then stop
        for process in self.processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()

    def _start(self) -> subprocess.Popen[bytes]:
        script = Path(sys.executable).with_name("gpu-advisor")
        command = [str(script)] if script.exists() else [sys.executable, "-m", "bot.cli"]
        return subprocess.Popen([*command, "worker", "--nice", str(WORKER_NICE)])

    def _keep_running(self) -> None:
        while not self._stopping.wait(RESTART_PAUSE_S):
            for n, process in enumerate(self.processes):
                if process.poll() is not None and not self._stopping.is_set():
                    log.warning("answer worker %d exited (%s); starting it again", process.pid, process.returncode)
                    self.processes[n] = self._start()
