"""Signed `/gpu` commands through `gpu-advisor serve --http` (Granian, WSGI) on loopback.

The load generator is built to cost far less CPU than the server it measures (on a small machine the two
share the cores, and in a closed loop the generator's CPU shows up as the server's latency): every request
is signed and encoded before the timed window, one thread drives all the connections with non-blocking
sockets, and the fake Slack that receives the answer cards runs in a process of its own. Each level reports
the CPU time the generator and the web processes spent per request, so a reader can see the shares.
"""

from __future__ import annotations

import errno
import gc
import http.client
import logging
import math
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import urlencode

from slack_sdk.signature import SignatureVerifier

from bot.bench.answers import percentile
from bot.bench.fake_slack import TEAM_ID, FakeSlackProcess, Slack
from bot.bench.machine import peak_rss_mb
from bot.bench.result import HttpRun, LevelResult
from bot.cli.serve import WEB_THREADS

log = logging.getLogger(__name__)
SIGNING_SECRET = "bench-signing-secret-not-a-real-one"
START_LIMIT_S = 60.0
EVENTS_PATH = "/slack/events"


@dataclass(frozen=True, slots=True)
class Level:
    clients: int
    requests: int  # timed
    limit_s: float
    warm: int = 0  # sent first at the same concurrency, not timed (reported as `warmup_p99_ms`)


# Each level is measured in steady state: its first wave (every client connecting at once to a server whose
# threads were sized for the level before) is sent first as a warm-up and reported on its own. At 50 clients
# the timed part is 2,000 requests, so that its p99 rests on 20 requests rather than 4.
LEVELS = (Level(1, 60, 30.0, warm=10), Level(10, 200, 30.0, warm=50), Level(50, 2000, 40.0, warm=200))


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
        conn.request("POST", EVENTS_PATH, body=body.encode("utf-8"), headers=headers)
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
        """Every live descendant: web worker processes and the answer worker processes beside them."""
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
def serving(database_url: str, slack_url: str, *, workers: int = 2, threads: int = WEB_THREADS) -> Iterator[Served]:
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


def request_bytes(port: int, body: str, headers: dict[str, str]) -> bytes:
    """The bytes `post` sends (http.client's request line and headers, then the body), built ahead of time."""
    data = body.encode("utf-8")
    lines = [f"POST {EVENTS_PATH} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Accept-Encoding: identity",
             f"Content-Length: {len(data)}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data


def prepare_level(port: int, slack: Slack, level: Level, texts: Sequence[str], tag: str) -> list[Prepared]:
    """Every request of a level, signed and encoded before its timed window (Slack signs before it sends)."""
    prepared = []
    for i in range(level.requests):
        name = f"{tag}-{i}"
        body = command_body(texts[i % len(texts)], user=f"U0B{i % 7}", response_url=slack.response_url(name))
        prepared.append(Prepared(name, request_bytes(port, body, signed(body))))
    return prepared


@dataclass(frozen=True, slots=True)
class Prepared:
    name: str
    payload: bytes


@dataclass(frozen=True, slots=True)
class Sent:
    index: int
    began: float  # perf_counter when the connection was opened
    ms: float  # to the last byte of the response
    status: int  # the HTTP status; 0 when the connection failed, was cut or timed out


@dataclass(slots=True)
class _Exchange:
    index: int
    sock: socket.socket
    began: float
    payload: memoryview
    received: bytearray


def response_status(data: bytes | bytearray, *, closed: bool = False) -> int | None:
    """The status of a complete HTTP/1.1 response in `data`; None while more is due (Content-Length,
    chunked, or the body up to the close when `closed`); 0 when it is not a response or was cut short."""
    head_end = data.find(b"\r\n\r\n")
    if head_end < 0:
        return 0 if closed else None
    head = bytes(data[:head_end]).decode("latin-1").split("\r\n")
    parts = head[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        return 0
    status = int(parts[1])
    fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}
    body = memoryview(data)[head_end + 4:]
    if "content-length" in fields:
        complete = len(body) >= int(fields["content-length"])
    elif "chunked" in fields.get("transfer-encoding", "").lower():
        complete = _chunks_complete(bytes(body))
    else:
        complete = closed
    if complete:
        return status
    return 0 if closed else None


def _chunks_complete(body: bytes) -> bool:
    """Whether a chunked body has reached its last (zero-size) chunk and the blank line after its trailers."""
    at = 0
    while (line_end := body.find(b"\r\n", at)) >= 0:
        size = int(body[at:line_end].split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            return body.find(b"\r\n\r\n", line_end) >= 0
        at = line_end + 2 + size + 2
    return False


def drive(port: int | Sequence[int], payloads: Sequence[bytes], clients: int, *, limit_s: float = math.inf,
          timeout_s: float = 10.0, not_before: Sequence[float] | None = None) -> list[Sent]:
    """Closed loop: `clients` connections at a time from this one thread (non-blocking sockets, epoll), each
    request on a new connection closed after its response, the next request started as one finishes, none
    started after `limit_s`. Each exchange is timed from opening the connection to the response's last byte.

    Request i goes to `port` (or the i-th of several ports, round robin), not before `not_before[i]`
    (perf_counter) when given: a paced burst."""
    ports = [port] if isinstance(port, int) else list(port)
    selector = selectors.DefaultSelector()
    done: list[Sent] = []
    stop_at = time.perf_counter() + limit_s
    free = [clients]  # clients whose last request has finished: each starts the next one
    next_index = 0

    def finish(x: _Exchange, status: int, at: float) -> None:
        selector.unregister(x.sock)
        x.sock.close()
        done.append(Sent(x.index, x.began, (at - x.began) * 1000, status))
        free[0] += 1

    def send(x: _Exchange) -> None:
        try:
            x.payload = x.payload[x.sock.send(x.payload):]
        except BlockingIOError:
            return
        except OSError:
            finish(x, 0, time.perf_counter())
            return
        if not x.payload:
            selector.modify(x.sock, selectors.EVENT_READ, x)

    def launch(index: int) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as http.client does
        x = _Exchange(index, sock, time.perf_counter(), memoryview(payloads[index]), bytearray())
        code = sock.connect_ex(("127.0.0.1", ports[index % len(ports)]))
        selector.register(sock, selectors.EVENT_WRITE, x)
        if code == 0:
            send(x)
        elif code != errno.EINPROGRESS:
            finish(x, 0, time.perf_counter())

    def receive(x: _Exchange) -> None:
        try:
            data = x.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        at = time.perf_counter()
        x.received += data
        status = response_status(x.received, closed=not data)
        if status is not None:
            finish(x, status, at)

    next_sweep = time.perf_counter() + 0.25
    while True:
        now = time.perf_counter()
        while free[0] and next_index < len(payloads) and now <= stop_at:
            if not_before is not None and not_before[next_index] > now:
                break
            free[0] -= 1
            launch(next_index)
            next_index += 1
        more = next_index < len(payloads) and now <= stop_at
        if not selector.get_map() and not more:
            break
        wait = 0.25
        if more and free[0] and not_before is not None:
            wait = min(wait, max(0.0, not_before[next_index] - now))
        if not selector.get_map():
            time.sleep(wait)
            continue
        for key, events in selector.select(timeout=wait):
            x = key.data
            if events & selectors.EVENT_WRITE:
                if x.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    finish(x, 0, time.perf_counter())
                else:
                    send(x)
            elif events & selectors.EVENT_READ:
                receive(x)
        if (now := time.perf_counter()) > next_sweep:
            next_sweep = now + 0.25
            for key in list(selector.get_map().values()):
                if now - key.data.began > timeout_s:
                    finish(key.data, 0, now)
    selector.close()
    return done


def cpu_ns(pid: int) -> int:
    """CPU time of a process so far (sum over its live threads of /proc/PID/task/TID/schedstat, in ns; the
    clock-tick utime + stime of /proc/PID/stat where schedstat is absent); 0 once it is gone."""
    total = 0
    try:
        for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
            try:
                total += int(stat.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
        if total:
            return total
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0


def web_pids(served: Served) -> list[int]:
    """The server's master and its HTTP workers (forks running `serve`), not its answer worker processes."""
    pids = [served.process.pid]
    for pid in served.worker_pids():
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in args:
            pids.append(pid)
    return pids


def run_level(served: Served, slack: Slack, level: Level, texts: Sequence[str], tag: str) -> LevelResult:
    """`level.requests` signed commands from `level.clients` connections at a time, stopped at `level.limit_s`;
    the CPU time the generator (this process) and the web processes spent in the window, per request."""
    prepared = prepare_level(served.port, slack, level, texts, tag)
    warm = prepare_level(served.port, slack, Level(level.clients, level.warm, level.limit_s), texts, f"{tag}w")
    pids = web_pids(served)
    gc.collect()
    gc.disable()  # a collection in the bench process would be timed as the server's latency
    try:
        warmed = drive(served.port, [p.payload for p in warm], level.clients, limit_s=level.limit_s)
        server_before = sum(cpu_ns(p) for p in pids)
        client_before = time.process_time()
        wall = time.perf_counter()
        sent = drive(served.port, [p.payload for p in prepared], level.clients, limit_s=level.limit_s)
        wall = time.perf_counter() - wall
        client_cpu = time.process_time() - client_before
        server_cpu = (sum(cpu_ns(p) for p in pids) - server_before) / 1e9
    finally:
        gc.enable()
    accepted = [(prepared[s.index].name, s.began) for s in sent if s.status == 200]
    acks = [s.ms for s in sent if s.status == 200]
    missing = slack.wait_for({n for n, _ in accepted}, timeout_s=30)
    arrived = slack.arrivals()
    cards = [(arrived[n][0] - t) * 1000 for n, t in accepted if n in arrived]
    per_request = 1000 / max(1, len(sent))
    return {"rps": round(len(acks) / wall, 1), "p50_ms": round(percentile(acks, 50), 1),
            "p99_ms": round(percentile(acks, 99), 1), "requests": len(acks), "errors": len(sent) - len(acks),
            "delivered": len(cards), "undelivered": len(missing),
            "doubled": sum(1 for n, _ in accepted if len(arrived.get(n, ())) > 1),
            "card_p50_ms": round(percentile(cards, 50), 1), "card_p99_ms": round(percentile(cards, 99), 1),
            "client_cpu_ms_per_request": round(client_cpu * per_request, 3),
            "server_cpu_ms_per_request": round(server_cpu * per_request, 3),
            "warmup_requests": len(warmed),
            "warmup_p99_ms": round(percentile([s.ms for s in warmed if s.status == 200], 99), 1)}


def measure_http(database_url: str, texts: Sequence[str], levels: Sequence[Level] = LEVELS) -> HttpRun:
    """Start the server, warm both workers, then each concurrency level; start time and worker RSS too.
    The fake Slack that receives the cards runs in a process of its own."""
    with FakeSlackProcess() as slack, serving(database_url, slack.url) as served:
        run_level(served, slack, Level(4, 40, 30.0), texts, "warm")  # the first requests of each worker
        levels_run = {f"c{lv.clients}": run_level(served, slack, lv, texts, f"c{lv.clients}") for lv in levels}
        return HttpRun(levels=levels_run, server_start_s=served.start_s, server_rss_mb=served.peak_rss_mb())
