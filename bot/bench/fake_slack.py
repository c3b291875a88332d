"""A loopback stand-in for Slack's Web API and response URLs that counts what arrives, and when.

`FakeSlack` runs in the caller's process; `FakeSlackProcess` runs the same server in a process of its own
(`main` below), so that receiving the answer cards does not take the GIL from a load
generator. Arrival times are `time.perf_counter()` readings, CLOCK_MONOTONIC on Linux: one clock for every
process on the machine, so a card's arrival there and a request's start here can be subtracted.
"""

from __future__ import annotations

import http.client
import itertools
import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from bot.answer.actions import JsonValue

TEAM_ID = "T0BENCH"
BOT_USER_ID = "U0BENCHBOT"


class Slack(Protocol):
    """What the benchmarks read from a fake Slack, in this process or in its own."""

    @property
    def url(self) -> str: ...

    def response_url(self, name: str) -> str: ...

    def wait_for(self, names: set[str], timeout_s: float) -> set[str]: ...

    def arrivals(self) -> dict[str, list[float]]: ...


class _QuietServer(ThreadingHTTPServer):
    """The stdlib server, minus the traceback it prints when a client drops its connection: the fault runs kill
    workers mid-request on purpose, and a reset connection there is the expected outcome, not news."""

    def handle_error(self, request: object, client_address: object) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class FakeSlack:
    """`/api/<method>` answers as Slack does (ok + ts); `/response/<name>` records a card's arrival time."""

    def __init__(self) -> None:
        self.arrived: dict[str, list[float]] = {}
        self.api_calls: dict[str, int] = {}
        self._lock = threading.Condition()
        self._ts = itertools.count(1)
        self.server = _QuietServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, name="fake-slack", daemon=True)

    def __enter__(self) -> FakeSlack:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def response_url(self, name: str) -> str:
        return f"{self.url}/response/{name}"

    def record(self, path: str) -> dict[str, JsonValue]:
        at = time.perf_counter()
        with self._lock:
            if path.startswith("/response/"):
                self.arrived.setdefault(path.removeprefix("/response/"), []).append(at)
                self._lock.notify_all()
                return {"ok": True}
            method = path.removeprefix("/api/")
            self.api_calls[method] = self.api_calls.get(method, 0) + 1
        return _success(method, next(self._ts))

    def wait_for(self, names: set[str], timeout_s: float) -> set[str]:
        """Wait (bounded) until every name has arrived; the ones that did not."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while names - self.arrived.keys() and (left := deadline - time.monotonic()) > 0:
                self._lock.wait(left)
            return names - self.arrived.keys()

    def arrivals(self) -> dict[str, list[float]]:
        """A copy of every arrival so far: response name -> perf_counter readings."""
        with self._lock:
            return {name: list(times) for name, times in self.arrived.items()}

    def control(self, path: str, body: bytes) -> dict[str, JsonValue] | None:
        """`/bench/...` requests from a `FakeSlackProcess` in another process; None for any other path."""
        if path == "/bench/arrivals":
            return {"arrived": cast("JsonValue", self.arrivals())}
        if path == "/bench/wait":
            asked = json.loads(body)
            missing = self.wait_for({str(n) for n in asked["names"]}, float(asked["timeout_s"]))
            return {"missing": cast("JsonValue", sorted(missing))}
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                sent = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                answer = fake.control(self.path, sent) if self.path.startswith("/bench/") else None
                body = json.dumps(fake.record(self.path) if answer is None else answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        return Handler


def _success(method: str, n: int) -> dict[str, JsonValue]:
    ts = f"{int(time.time())}.{n:06d}"
    if method == "auth.test":
        return {"ok": True, "team_id": TEAM_ID, "user_id": BOT_USER_ID, "bot_id": "B0BENCH"}
    if method == "users.info":
        return {"ok": True, "user": {"id": "U0", "team_id": TEAM_ID, "locale": "en-US", "is_bot": False}}
    if method in ("chat.postMessage", "chat.postEphemeral", "chat.update"):
        return {"ok": True, "ts": ts, "message_ts": ts, "channel": "C0BENCH"}
    return {"ok": True}



class FakeSlackProcess:
    """The fake Slack in a process of its own, with FakeSlack's reading side: `url`, `response_url`,
    `wait_for` and `arrivals` (over loopback, outside any timed window). The process ends with the context,
    or when this process goes (it serves until its stdin closes)."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0

    def __enter__(self) -> FakeSlackProcess:
        root = str(Path(__file__).resolve().parents[2])  # this copy of `bot`, not one on the child's cwd
        code = f"import sys; sys.path.insert(0, {root!r}); from bot.bench.fake_slack import main; main()"
        self.process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = cast("IO[bytes]", self.process.stdout).readline()
        if not line.strip().isdigit():
            self.__exit__()
            raise RuntimeError(f"the fake Slack process did not start: {line[:200]!r}")
        self.port = int(line)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is None:
            return
        cast("IO[bytes]", self.process.stdin).close()  # the child's signal to stop
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        cast("IO[bytes]", self.process.stdout).close()
        self.process = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def response_url(self, name: str) -> str:
        return f"{self.url}/response/{name}"

    def wait_for(self, names: set[str], timeout_s: float) -> set[str]:
        """Wait (bounded) until every name has arrived; the ones that did not."""
        answer = self._ask("/bench/wait", {"names": cast("JsonValue", sorted(names)), "timeout_s": timeout_s},
                           timeout_s + 10)
        return {str(n) for n in cast("list[str]", answer["missing"])}

    def arrivals(self) -> dict[str, list[float]]:
        """Every arrival so far: response name -> perf_counter readings (the machine's monotonic clock)."""
        arrived = cast("dict[str, list[float]]", self._ask("/bench/arrivals", {}, 30)["arrived"])
        return {str(name): [float(t) for t in times] for name, times in arrived.items()}

    def _ask(self, path: str, payload: dict[str, JsonValue], timeout_s: float) -> dict[str, JsonValue]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout_s)
        try:
            conn.request("POST", path, body=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            return cast("dict[str, JsonValue]", json.loads(response.read()))
        finally:
            conn.close()


def main() -> None:
    """Serve as FakeSlack until stdin closes; the port is the first line written to stdout."""
    with FakeSlack() as fake:
        sys.stdout.write(f"{fake.server.server_address[1]}\n")
        sys.stdout.flush()
        sys.stdin.buffer.read()


if __name__ == "__main__":
    main()
