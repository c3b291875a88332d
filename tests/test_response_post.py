"""The answer worker's post to a response URL (bot.slack.retries.post_after_mark): the "delivering" mark is
written when only the message's body is left to send, so a worker killed before the body leaves shows the user
nothing, and one killed after it has nothing left to do but wait for Slack's reply."""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field

import pytest

from bot.slack.guard import Delivery, GuardedWebClient, Reschedule, delivering
from bot.slack.retries import post_after_mark

MESSAGE = {"response_type": "ephemeral", "text": "3× RTX 4090", "blocks": [{"type": "section",
                                                                          "text": {"type": "mrkdwn", "text": "ok"}}],
           "thread_ts": None}


@dataclass
class Seen:
    head: bytes = b""
    body: bytes = b""
    headers_in: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)


class RawServer:
    """One connection at a time: reads the request's head, then its body byte by byte as it comes, then answers
    with the next status of `statuses`."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = statuses
        self.reply_body = b"ok"
        self.reply_headers = b""
        self.seen: list[Seen] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        for status in self.statuses:
            conn, _ = self.sock.accept()
            seen = Seen()
            self.seen.append(seen)
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                seen.head, _, seen.body = data.partition(b"\r\n\r\n")
                seen.headers_in.set()
                length = int(next((line.split(b":", 1)[1] for line in seen.head.split(b"\r\n")
                                   if line.lower().startswith(b"content-length:")), b"0"))
                while len(seen.body) < length:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break  # the client went away before its body was complete
                    seen.body += chunk
                if len(seen.body) == length:
                    conn.sendall(f"HTTP/1.1 {status} X\r\nContent-Type: application/json; charset=utf-8\r\n"
                                 f"Content-Length: {len(self.reply_body)}\r\nConnection: close\r\n".encode()
                                 + self.reply_headers + b"\r\n" + self.reply_body)
                seen.done.set()

    def connection(self, n: int) -> Seen:
        """The n-th connection, once the server has taken it (the client may be done before it was accepted)."""
        for _ in range(500):
            if len(self.seen) > n:
                return self.seen[n]
            threading.Event().wait(0.01)
        raise AssertionError(f"no connection #{n} within 5 s")

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/commands/T1/123/abc?x=1"


def test_the_mark_is_written_when_only_the_body_is_left() -> None:
    server = RawServer([200])
    at_mark: list[tuple[bool, bytes]] = []

    def mark() -> None:
        first = server.connection(0)
        at_mark.append((first.headers_in.wait(5), first.body))

    response = post_after_mark(server.url(), MESSAGE, ssl=None, mark=mark)
    assert response.status_code == 200 and response.body == "ok"
    assert at_mark == [(True, b"")]  # the head had arrived, none of the body
    seen = server.seen[0]
    assert seen.head.startswith(b"POST /commands/T1/123/abc?x=1 HTTP/1.1\r\n")
    assert b"content-type: application/json;charset=utf-8" in seen.head.lower()
    assert json.loads(seen.body) == {k: v for k, v in MESSAGE.items() if v is not None}  # as WebhookClient sends it


def test_a_lost_claim_at_the_mark_sends_no_message() -> None:
    """The mark refuses (another worker took the request over): the request stays incomplete, Slack shows nothing."""
    server = RawServer([200])

    def mark() -> None:
        raise Reschedule(0, "claim lost to another worker")

    with pytest.raises(Reschedule):
        post_after_mark(server.url(), MESSAGE, ssl=None, mark=mark)
    assert server.connection(0).done.wait(5)
    assert server.connection(0).body == b""


def test_one_server_error_is_retried_once_and_marked_once() -> None:
    server = RawServer([503, 200])
    marks: list[int] = []
    response = post_after_mark(server.url(), MESSAGE, ssl=None, mark=lambda: marks.append(1))
    assert response.status_code == 200
    assert len(server.seen) == 2 and all(json.loads(s.body)["text"] == "3× RTX 4090" for s in server.seen)
    assert len(marks) == 2  # called before each body; Delivery.mark_for writes the mark once (tests/test_queue_*)


def test_two_server_errors_are_returned() -> None:
    server = RawServer([502, 503])
    response = post_after_mark(server.url(), MESSAGE, ssl=None, mark=lambda: None)
    assert response.status_code == 503 and len(server.seen) == 2


class _Delivery(Delivery):
    """A job's delivery whose mark records what the server had received at that moment (no database)."""

    def _mark(self) -> None:
        if not self.marked:
            first = self.server.connection(0)  # type: ignore[attr-defined]
            self.seen_at_mark.append((first.headers_in.wait(5), first.body))  # type: ignore[attr-defined]
            self.marked = True


class _NoWait:
    def reserve(self, key: str, rate: object) -> float:
        return 0.0


def _delivery(server: RawServer) -> _Delivery:
    d = _Delivery(key="k", team_id="T1", worker_id="w", attempts=1, engine=None, limiter=_NoWait())  # type: ignore[arg-type]
    d.server, d.seen_at_mark = server, []  # type: ignore[attr-defined]
    return d


def _client(server: RawServer) -> GuardedWebClient:
    return GuardedWebClient(token="xoxb-test", base_url=f"http://127.0.0.1:{server.port}/api/", retry_handlers=[])


def test_a_web_api_post_in_a_job_is_marked_when_only_its_body_is_left() -> None:
    server = RawServer([200])
    server.reply_body = b'{"ok": true, "ts": "1.2", "channel": "C1"}'
    delivery = _delivery(server)
    with delivering(delivery):
        response = _client(server).chat_postMessage(channel="C1", text="3× RTX 4090")
    assert response["ok"] is True and response["ts"] == "1.2"
    assert delivery.seen_at_mark == [(True, b"")] and delivery.sent == 1  # type: ignore[attr-defined]
    seen = server.connection(0)
    assert seen.head.startswith(b"POST /api/chat.postMessage HTTP/1.1\r\n")
    assert b"authorization: bearer xoxb-test" in seen.head.lower()
    assert json.loads(seen.body) == {"channel": "C1", "text": "3× RTX 4090"}


def test_a_429_to_a_web_api_post_re_schedules_the_job(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slack refused it: nothing was shown, the mark is undone and the job runs again after Retry-After."""
    import knowledge.slack_requests

    undone: list[str] = []
    monkeypatch.setattr(knowledge.slack_requests, "undo_delivering", lambda engine, key, **_: undone.append(key))
    server = RawServer([429])
    server.reply_headers = b"Retry-After: 7\r\n"
    delivery = _delivery(server)
    with delivering(delivery), pytest.raises(Reschedule) as again:
        _client(server).chat_postMessage(channel="C1", text="x")
    assert again.value.delay_s == 7.0 and undone == ["k"] and delivery.sent == 0 and not delivery.marked


def test_a_web_api_call_that_shows_nothing_new_is_not_marked() -> None:
    server = RawServer([200])
    server.reply_body = b'{"ok": true}'
    delivery = _delivery(server)
    with delivering(delivery):
        _client(server).chat_update(channel="C1", ts="1.2", text="x")
    assert delivery.seen_at_mark == [] and not delivery.marked  # type: ignore[attr-defined]


def test_slack_clients_of_workers_and_the_clock_share_one_tls_context() -> None:
    """urllib and http.client make a new default context, reading the CA bundle, for every connection when none
    is given; the worker's clients and the scheduler's get the process's one (bot.tls)."""
    from slack_sdk import WebClient

    from bot.digest.scheduler import SchedulerConfig, make_client
    from bot.slack.guard import guard_client
    from bot.tls import slack_tls_context

    shared = slack_tls_context()
    first, second = guard_client(WebClient(token="xoxb-1")), guard_client(WebClient(token="xoxb-2"))
    assert first.ssl is shared and second.ssl is shared
    assert make_client("xoxb-3", SchedulerConfig(api_url="http://127.0.0.1:9/api/")).ssl is shared
    own = slack_tls_context.__wrapped__()  # a context someone configured on purpose is kept
    assert guard_client(WebClient(token="xoxb-4", ssl=own)).ssl is own


def test_the_tls_bench_posts_over_verified_https() -> None:
    """bot.bench.tls_load: its calls reach a local HTTPS Slack through certificate verification (a default
    context trusting the system's CAs plus the bench's own), both ways; figures only, no timing asserted."""
    from bot.bench.tls_load import time_calls

    timing = time_calls(4)
    assert timing["calls"] == 8 and timing["bundle_certificates"] >= 1
    assert timing["new_context_ms_p50"] > 0 and timing["shared_context_ms_p50"] > 0
