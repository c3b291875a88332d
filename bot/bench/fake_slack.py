"""A loopback stand-in for Slack's Web API and response URLs that counts what arrives, and when."""

from __future__ import annotations

import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.answer.actions import JsonValue

TEAM_ID = "T0BENCH"
BOT_USER_ID = "U0BENCHBOT"


class FakeSlack:
    """`/api/<method>` answers as Slack does (ok + ts); `/response/<name>` records a card's arrival time."""

    def __init__(self) -> None:
        self.arrived: dict[str, list[float]] = {}
        self.api_calls: dict[str, int] = {}
        self._lock = threading.Condition()
        self._ts = itertools.count(1)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
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

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.dumps(fake.record(self.path)).encode()
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

