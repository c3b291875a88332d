"""Signed `/gpu` commands through `gpu-advisor serve --http` (gunicorn gthread) on loopback."""

from __future__ import annotations

import http.client
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import urlencode

from slack_sdk.signature import SignatureVerifier

from bot.bench.answers import percentile
from bot.bench.fake_slack import TEAM_ID, FakeSlack
from bot.bench.machine import peak_rss_mb
from bot.bench.result import HttpRun, LevelResult

log = logging.getLogger(__name__)
SIGNING_SECRET = "bench-signing-secret-not-a-real-one"
START_LIMIT_S = 60.0


@dataclass(frozen=True, slots=True)
class Level:
    clients: int
    requests: int
    limit_s: float


LEVELS = (Level(1, 60, 30.0), Level(10, 200, 30.0), Level(50, 400, 40.0))


def gpu_advisor_command() -> list[str]:
    """The installed console script next to this interpreter, else `python -m`-style entry."""
    script = Path(sys.executable).with_name("gpu-advisor")
    if script.exists():
        return [str(script)]
    found = shutil.which("gpu-advisor")
    return [found] if found else [sys.executable, "-c", "import sys; from bot.cli import main; sys.exit(main())"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def signed(body: str, *, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict[str, str]:
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body)
    if signature is None:  # only when timestamp or body is None
        raise ValueError("cannot sign a request without a timestamp and a body")
    return {"X-Slack-Request-Timestamp": stamp, "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Signature": signature}


def command_body(text: str, *, user: str, response_url: str) -> str:
    """A `/gpu` command as Slack sends it, with a trigger id of its own (Slack's id of the invocation)."""
    return urlencode({
        "team_id": TEAM_ID, "team_domain": "bench", "channel_id": "C0BENCH", "channel_name": "bench",
        "user_id": user, "user_name": user.lower(), "command": "/gpu", "text": text, "api_app_id": "A0BENCH",
        "is_enterprise_install": "false", "response_url": response_url,
        "trigger_id": f"{int(time.time())}.{response_url.rsplit('/', 1)[-1]}.bench",
    })


def post(port: int, body: str, headers: dict[str, str], timeout_s: float = 10.0) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    try:
        conn.request("POST", "/slack/events", body=body.encode("utf-8"), headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def healthy(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
        conn.request("GET", "/healthz")
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except OSError:
        return False


@dataclass
class Served:
    port: int
    process: subprocess.Popen[bytes]
    start_s: float
    errors: IO[bytes] | None = None  # the server's stderr (a temporary file)

    def log_tail(self, chars: int = 3000) -> str:
        if self.errors is None:
            return ""
        self.errors.flush()
        self.errors.seek(0)
        return str(self.errors.read().decode("utf-8", "replace")[-chars:])

    def worker_pids(self) -> list[int]:
        """Every live descendant: gunicorn workers and their answer worker processes (grandchildren)."""
        return descendant_pids(self.process.pid)

    def peak_rss_mb(self) -> float:
        """The largest peak RSS among the master, its workers and their answer workers."""
        return max([peak_rss_mb(self.process.pid)] + [peak_rss_mb(p) for p in self.worker_pids()])


def child_pids(pid: int) -> list[int]:
    """Children of every thread of `pid` (/proc/PID/task/TID/children is per thread; gthread workers
    start their answer workers from a request thread, so the main task's list alone misses them)."""
    found: list[int] = []
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found.extend(int(p) for p in children.read_text().split())
        except OSError:  # the thread or process ended meanwhile
            continue
    return found


def descendant_pids(pid: int) -> list[int]:
    """Children, grandchildren, ... of `pid` that are still running (breadth first, each once)."""
    seen: list[int] = []
    todo = child_pids(pid)
    while todo:
        child = todo.pop(0)
        if child not in seen and Path(f"/proc/{child}").exists():
            seen.append(child)
            todo.extend(child_pids(child))
    return seen


@contextmanager
def serving(database_url: str, slack_url: str, *, workers: int = 2, threads: int = 16) -> Iterator[Served]:
    """`gpu-advisor serve --http` as in production; yields once /healthz answers (time to accept measured)."""
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "SLACK_BOT_TOKEN": "xoxb-bench",
           "SLACK_SIGNING_SECRET": SIGNING_SECRET, "SLACK_API_URL": slack_url + "/api/", "LOG_LEVEL": "WARNING"}
    for name in ("SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET"):
        env.pop(name, None)
    command = [*gpu_advisor_command(), "serve", "--http", "--host", "127.0.0.1", "--port", str(port),
               "--workers", str(workers), "--threads", str(threads)]
    errors = tempfile.TemporaryFile()
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=errors)
    served = Served(port, process, 0.0, errors)
    try:
        while not healthy(port):
            if process.poll() is not None or time.perf_counter() - started > START_LIMIT_S:
                raise RuntimeError(f"server did not start: {served.log_tail()}")
            time.sleep(0.02)
        served.start_s = round(time.perf_counter() - started, 3)
        yield served
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
        errors.close()


def run_level(served: Served, slack: FakeSlack, level: Level, texts: Sequence[str], tag: str) -> LevelResult:
    """`level.requests` signed commands from `level.clients` threads, stopped at `level.limit_s`."""
    deadline = time.perf_counter() + level.limit_s
    acks: list[float] = []
    errors = [0]
    lock = threading.Lock()
    sent: list[tuple[str, float]] = []

    def one(i: int) -> None:
        if time.perf_counter() > deadline:
            return
        name = f"{tag}-{i}"
        body = command_body(texts[i % len(texts)], user=f"U0B{i % 7}", response_url=slack.response_url(name))
        began = time.perf_counter()
        try:
            status = post(served.port, body, signed(body))
        except OSError:
            status = 0
        elapsed = (time.perf_counter() - began) * 1000
        with lock:
            if status == 200:
                acks.append(elapsed)
                sent.append((name, began))
            else:
                errors[0] += 1

    wall = time.perf_counter()
    with ThreadPoolExecutor(level.clients) as pool:
        list(pool.map(one, range(level.requests)))
    wall = time.perf_counter() - wall
    missing = slack.wait_for({n for n, _ in sent}, timeout_s=30)
    cards = [(slack.arrived[n][0] - t) * 1000 for n, t in sent if n in slack.arrived]
    return {"rps": round(len(acks) / wall, 1), "p50_ms": round(percentile(acks, 50), 1),
            "p99_ms": round(percentile(acks, 99), 1), "requests": len(acks), "errors": errors[0],
            "delivered": len(cards), "undelivered": len(missing),
            "doubled": sum(1 for n, _ in sent if len(slack.arrived.get(n, ())) > 1),
            "card_p50_ms": round(percentile(cards, 50), 1), "card_p99_ms": round(percentile(cards, 99), 1)}


def measure_http(database_url: str, texts: Sequence[str], levels: Sequence[Level] = LEVELS) -> HttpRun:
    """Start the server, warm both workers, then each concurrency level; start time and worker RSS too."""
    with FakeSlack() as slack, serving(database_url, slack.url) as served:
        run_level(served, slack, Level(4, 40, 30.0), texts, "warm")
        levels_run = {f"c{lv.clients}": run_level(served, slack, lv, texts, f"c{lv.clients}") for lv in levels}
        return HttpRun(levels=levels_run, server_start_s=served.start_s, server_rss_mb=served.peak_rss_mb())
