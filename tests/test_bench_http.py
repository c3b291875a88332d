"""The HTTP bench's load generator: requests built and signed ahead, one thread driving many connections in a
closed loop, each request on a connection of its own, and the fake Slack in a process of its own.

No timing is asserted here (the figures are the bench's to report); these tests hold what the figures mean.
"""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from slack_sdk.signature import SignatureVerifier

from bot.bench.fake_slack import FakeSlack, FakeSlackProcess
from bot.bench.http_load import (
    SIGNING_SECRET,
    command_body,
    cpu_ns,
    drive,
    free_port,
    post,
    request_bytes,
    response_status,
    signed,
)


def _capture_one_request(send: Callable[[int], object]) -> bytes:
    """The raw bytes a client sends for one request, answered with an empty 200."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    raw = bytearray()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            while b"\r\n\r\n" not in raw:
                raw.extend(conn.recv(65536))
            head, _, body = bytes(raw).partition(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
            while len(body) < length:
                body += conn.recv(65536)
                raw[:] = head + b"\r\n\r\n" + body
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    send(port)
    thread.join(10)
    listener.close()
    return bytes(raw)


def test_prebuilt_request_is_byte_for_byte_what_http_client_sends() -> None:
    """The generator sends what the old http.client path sent: same request line, headers, order and body."""
    body = command_body("H100 vs H200 for a 70B model, 日本語も", user="U0B1", response_url="http://127.0.0.1:9/response/x")
    headers = signed(body, timestamp=1_700_000_000)
    by_client = _capture_one_request(lambda port: post(port, body, headers))
    port_of_first = by_client.split(b"Host: 127.0.0.1:")[1].split(b"\r\n")[0]
    assert by_client == request_bytes(int(port_of_first), body, headers)


def test_prebuilt_request_is_a_signed_slash_command_slack_would_accept() -> None:
    body = command_body("fine-tune 13B", user="U0B3", response_url="http://127.0.0.1:9/response/c50-7")
    raw = request_bytes(4242, body, signed(body))
    head, _, sent_body = raw.partition(b"\r\n\r\n")
    fields = dict(line.split(": ", 1) for line in head.decode().split("\r\n")[1:])
    assert head.startswith(b"POST /slack/events HTTP/1.1\r\n") and int(fields["Content-Length"]) == len(sent_body)
    verifier = SignatureVerifier(SIGNING_SECRET)
    assert verifier.is_valid(body=sent_body.decode(), timestamp=fields["X-Slack-Request-Timestamp"],
                             signature=fields["X-Slack-Signature"])
    form = parse_qs(sent_body.decode())
    assert form["command"] == ["/gpu"] and form["response_url"] == ["http://127.0.0.1:9/response/c50-7"]


@pytest.mark.parametrize(("data", "closed", "expected"), [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", False, 200),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\no", False, None),  # a byte still due
    (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\no", True, 0),  # cut short
    (b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n", False, 401),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n", False, None),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", False, 200),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n0\r\n\r\n\r\n", False, None),  # "0\r\n\r\n" as data
    (b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the close", False, None),
    (b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the close", True, 200),
    (b"HTTP/1.1 200 OK\r\nContent-", False, None),
    (b"", True, 0),
    (b"garbage\r\n\r\n", False, 0),
])
def test_response_status_waits_for_the_whole_response(data: bytes, closed: bool, expected: int | None) -> None:
    assert response_status(data, closed=closed) == expected


class _Counting(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, gate: threading.Barrier) -> None:
        self.connections = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self.bodies: list[bytes] = []
        self.gate = gate
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def get_request(self) -> tuple[socket.socket, object]:
        accepted = super().get_request()
        with self.lock:
            self.connections += 1
        return accepted


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Counting

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with self.server.lock:
            self.server.in_flight += 1
            self.server.most_in_flight = max(self.server.most_in_flight, self.server.in_flight)
            self.server.bodies.append(body)
            first_batch = len(self.server.bodies) <= self.server.gate.parties
        if first_batch:  # the first `clients` requests wait for each other: only a concurrent client gets past
            self.server.gate.wait()
        with self.server.lock:
            self.server.in_flight -= 1
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _counting_server(clients: int) -> Iterator[_Counting]:
    server = _Counting(threading.Barrier(clients, timeout=20))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_drive_keeps_the_clients_busy_from_one_thread_with_a_connection_per_request() -> None:
    clients, requests = 5, 40
    with _counting_server(clients) as server:
        port = server.server_address[1]
        payloads = [request_bytes(port, f"n={i}", {"Content-Type": "text/plain"}) for i in range(requests)]
        sent = drive(port, payloads, clients, limit_s=60)
    assert sorted(s.index for s in sent) == list(range(requests))
    assert all(s.status == 200 for s in sent)
    assert server.connections == requests  # a new connection for every request, as Slack sends them
    assert sorted(server.bodies) == sorted(f"n={i}".encode() for i in range(requests))
    assert server.most_in_flight == clients  # the first five were in flight together, never more than five
    assert all(s.ms > 0 for s in sent)


def test_drive_counts_refused_connections_as_errors_without_recursing() -> None:
    port = free_port()  # nothing listens there
    sent = drive(port, [b"GET / HTTP/1.1\r\n\r\n"] * 2500, 50, limit_s=60)
    assert len(sent) == 2500 and {s.status for s in sent} == {0}


def test_drive_starts_nothing_after_the_limit() -> None:
    with _counting_server(1) as server:
        port = server.server_address[1]
        sent = drive(port, [request_bytes(port, "x", {})] * 50, 1, limit_s=-1.0)
    assert sent == [] and server.connections == 0


def test_drive_spreads_requests_over_ports_and_keeps_their_pace() -> None:
    """The queue bench's burst: round robin over two web processes, request i not sent before its slot."""
    with _counting_server(1) as one, _counting_server(1) as two:
        ports = [one.server_address[1], two.server_address[1]]
        payloads = [request_bytes(ports[i % 2], f"n={i}", {}) for i in range(10)]
        slots = [time.perf_counter() + 0.02 * i for i in range(10)]
        sent = drive(ports, payloads, 3, not_before=slots)
    assert sorted(s.index for s in sent) == list(range(10)) and all(s.status == 200 for s in sent)
    assert one.connections == two.connections == 5
    assert sorted(one.bodies) == sorted(f"n={i}".encode() for i in range(0, 10, 2))
    assert all(s.began >= slots[s.index] for s in sent)  # never early (late is allowed: closed loop)


@pytest.mark.parametrize("kind", [FakeSlack, FakeSlackProcess])
def test_fake_slack_records_arrivals_and_waits_in_this_process_or_its_own(
    kind: type[FakeSlack] | type[FakeSlackProcess],
) -> None:
    with kind() as slack:
        before = time.perf_counter()
        for name in ("a", "a", "b"):
            host, port = slack.url.removeprefix("http://").split(":")
            conn = http.client.HTTPConnection(host, int(port), timeout=10)
            conn.request("POST", slack.response_url(name).removeprefix(slack.url), body=b"{}",
                         headers={"Content-Type": "application/json"})
            assert conn.getresponse().status == 200
            conn.close()
        assert slack.wait_for({"a", "b"}, timeout_s=10) == set()
        assert slack.wait_for({"a", "never"}, timeout_s=0.2) == {"never"}
        arrived = slack.arrivals()
        assert sorted(arrived) == ["a", "b"] and len(arrived["a"]) == 2
        assert all(before <= t <= time.perf_counter() for times in arrived.values() for t in times)  # one clock
        process = getattr(slack, "process", None)
        if kind is FakeSlackProcess:
            assert process is not None and process.pid != os.getpid()
    if process is not None:
        assert process.poll() is not None  # gone with the context


def test_fake_slack_process_is_this_checkout_even_from_another_directory(tmp_path: Path) -> None:
    """`python -m` would import whatever `bot` the working directory holds; the child imports this one."""
    (tmp_path / "bot" / "bench").mkdir(parents=True)
    for init in ("bot/__init__.py", "bot/bench/__init__.py"):
        (tmp_path / init).write_text("")
    (tmp_path / "bot" / "bench" / "fake_slack.py").write_text("raise SystemExit('the wrong checkout')\n")
    code = ("from bot.bench.fake_slack import FakeSlackProcess\n"
            "with FakeSlackProcess() as s:\n    print(s.wait_for(set(), 1) == set())\n")
    root = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {root!r})\n{code}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "True", done.stderr


def test_cpu_ns_counts_a_process_cpu_and_zero_once_it_is_gone() -> None:
    busy = subprocess.Popen([sys.executable, "-c", "import time\nend = time.process_time() + 0.3\n"
                                                   "while time.process_time() < end: pass\ntime.sleep(30)"])
    try:
        deadline = time.monotonic() + 30
        while cpu_ns(busy.pid) < 250_000_000 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert 250_000_000 <= cpu_ns(busy.pid) < 30_000_000_000
    finally:
        busy.kill()
        busy.wait(5)
    assert cpu_ns(busy.pid) == 0


def test_a_level_is_timed_after_a_warm_up_of_its_own_that_is_reported_apart(monkeypatch) -> None:
    """run_level sends `level.warm` requests at the level's concurrency first, untimed, then `level.requests`
    timed ones: the timed figures count only the latter, the warm-up has its own p99, and the two sets of
    requests have different response URLs (each card is counted once, for the request that asked for it)."""
    import bot.bench.http_load as http_load
    from bot.bench.http_load import Level, Sent, Served, run_level

    calls: list[tuple[int, int, list[bytes]]] = []

    def fake_drive(port, payloads, clients, **_):
        calls.append((len(payloads), clients, list(payloads)))
        slow = 40.0 if len(calls) == 1 else 2.0  # the warm-up wave is the slow one
        return [Sent(i, time.perf_counter(), slow, 200) for i in range(len(payloads))]

    class NoCards:
        url = "http://127.0.0.1:9"

        def response_url(self, name: str) -> str:
            return f"http://127.0.0.1:9/response/{name}"

        def wait_for(self, names: set[str], timeout_s: float) -> set[str]:
            return set()

        def arrivals(self) -> dict[str, list[float]]:
            return {}

    monkeypatch.setattr(http_load, "drive", fake_drive)
    monkeypatch.setattr(http_load, "web_pids", lambda served: [os.getpid()])
    result = run_level(Served(4242, None, 0.0), NoCards(), Level(5, 30, 10.0, warm=7), ["h100"], "c5")  # type: ignore[arg-type]
    assert [(n, c) for n, c, _ in calls] == [(7, 5), (30, 5)]
    assert result["requests"] == 30 and result["warmup_requests"] == 7
    assert result["p99_ms"] == 2.0 and result["warmup_p99_ms"] == 40.0
    urls = [{p.split(b"response_url=")[1].split(b"&")[0] for p in payloads} for _, _, payloads in calls]
    assert len(urls[0]) == 7 and len(urls[1]) == 30 and not urls[0] & urls[1]


STOP_SCRIPT = r"""
import sys, time
from bot.slack import wsgi

wsgi.STOP_LIMIT_S = 2

def build():
    time.sleep(4)  # still building its app when SIGTERM comes: Granian's handlers are not yet installed

    def app(environ, start_response):
        start_response("200 OK", [("Content-Length", "0")])
        return [b""]

    return app

wsgi.serve_granian(build, host="127.0.0.1", port=int(sys.argv[1]), workers=1, threads=2, log_level="WARNING")
"""


def test_a_web_worker_that_misses_sigterm_while_starting_is_killed_and_the_server_stops(tmp_path: Path) -> None:
    """A worker forked just before SIGTERM never sees it (it is building its app); Granian would wait for it
    for ever. serve_granian bounds the wait (STOP_LIMIT_S, 2 s here), so the server stops."""
    import signal

    script = tmp_path / "stop.py"
    script.write_text(STOP_SCRIPT)
    process = subprocess.Popen([sys.executable, str(script), str(free_port())], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(1.5)  # the worker is forked and sleeping in build()
        assert process.poll() is None
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) is not None
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)
