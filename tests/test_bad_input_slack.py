"""Issue 19 at the Slack edge: signed bodies Slack never sends get 400, oversized ones 413, and nothing happens.

Both HTTP paths are tested: Bolt's WSGI adapter (bot.slack.wsgi, the harness of the Slack tests) and the
production ack path (bot.slack.front.Front, which queues work for answer processes). "Nothing happens"
means: no listener ran (the core saw no call), Slack was not called, no job was queued, and the Slack
tables of the database are as they were.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import io
import json
import socket
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from fake_slack import (
    SIGNING_SECRET,
    Harness,
    block_actions_body,
    event_body,
    harness,
    slash_command_body,
)
from refusals import fingerprint

from bot.slack import bodies
from bot.slack.bodies import MAX_BODY_BYTES, check_body, is_signed
from bot.slack.front import Front

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"


def sign(raw: bytes, *, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict[str, str]:
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), b"v0:" + stamp.encode() + b":" + raw, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}"}


def post_raw(port: int, raw: bytes, headers: dict[str, str], path: str = "/slack/events") -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("POST", path, body=raw, headers=headers)
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8")
    finally:
        conn.close()


def slack_tables(engine: Any) -> dict[str, str]:
    return {k: v for k, v in fingerprint(engine).items() if k.startswith("slack_")}


@pytest.fixture
def h(engine: Any) -> Iterator[Harness]:
    yield from harness(engine)


def assert_nothing_happened(h: Harness, before: dict[str, str]) -> None:
    calls = h.slack.quiet(0.3)
    assert [c.method for c in calls] == ["auth.test"]  # only the start-up check of our token
    assert h.core.calls == []
    assert slack_tables(h.engine) == before


def send(h: Harness, raw: bytes, content_type: str) -> tuple[int, str]:
    return post_raw(h.server.port, raw, {**sign(raw), "Content-Type": content_type})


# --- the issue's examples, through the app's HTTP server ---------------------------------------------------

NOT_OBJECTS = [b"[1,2,3]", b'"x"', b"null", b"1", b"true", b"-0.5e3"]


@pytest.mark.parametrize("raw", NOT_OBJECTS, ids=["array", "string", "null", "number", "true", "float"])
def test_a_signed_json_body_that_is_not_an_object_is_400_and_nothing_happens(h: Harness, raw: bytes) -> None:
    before = slack_tables(h.engine)
    status, text = send(h, raw, JSON)
    assert status == 400 and "not an object" in text
    assert_nothing_happened(h, before)


MALFORMED = {
    "bad-payload-json": (urlencode({"payload": "{not json"}).encode(), FORM, "payload is not JSON"),
    "payload-array": (urlencode({"payload": "[1]"}).encode(), FORM, "payload is a JSON array, not an object"),
    "button-without-user": (urlencode({"payload": json.dumps({
        "type": "block_actions", "actions": [{"action_id": "share", "value": "{}"}]})}).encode(), FORM, "user: missing"),
    "button-without-actions": (urlencode({"payload": json.dumps({
        "type": "block_actions", "user": {"id": "U0ALICE"}, "actions": []})}).encode(), FORM, "actions: must not be empty"),
    "numeric-text": (json.dumps({"type": "event_callback", "event_id": "EvNum", "team_id": "T0TEAM", "event": {
        "type": "app_mention", "user": "U0ALICE", "text": 123, "ts": "1.0", "channel": "C0GENERAL"}}).encode(),
        JSON, "event.text: must be text"),
    "mention-without-channel": (json.dumps({"type": "event_callback", "event": {"type": "app_mention", "ts": "1.0"}}
                                           ).encode(), JSON, "event.channel: missing"),
    "event-not-object": (b'{"type": "event_callback", "event": [1]}', JSON, "event: must be an object"),
    "command-without-user": (urlencode({"command": "/gpu", "text": "h100", "team_id": "T0TEAM",
                                        "channel_id": "C0GENERAL", "response_url": "http://x"}).encode(),
                             FORM, "user_id: missing"),
    "team-a-list": (json.dumps({"type": "event_callback", "team": ["id"], "event": {"type": "x"}}).encode(), JSON,
                    "team: "),
    "authorizations-a-number": (json.dumps({"type": "event_callback", "authorizations": 5, "event": {"type": "x"}}
                                           ).encode(), JSON, "authorizations: must be a list"),
    "challenge-missing": (b'{"type": "url_verification"}', JSON, "challenge: missing"),
    "empty-form": (b"", FORM, "neither an event, a command nor an interaction"),
    "unknown-form": (b"a=b&c=d", FORM, "neither an event, a command nor an interaction"),
    "not-utf8": (b'{"type": "event_callback", "x": "\xff"}', JSON, "body is not UTF-8"),
    "nested-100000": (b"[" * 100_000, JSON, "nested more than 64 levels"),
    "nested-object-100000": (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, JSON, "nested more than 64 levels"),
    "nested-payload-100000": (b"payload=" + b"%5B" * 100_000, FORM, "payload is JSON nested more than 64 levels"),
    "number-of-100000-digits": (b'{"type": "event_callback", "event": {"type": "x", "n": ' + b"1" * 100_000 + b"}}",
                                JSON, "body is not JSON Slack sends (a number too long)"),
    "bom": (b'\xef\xbb\xbf{"type": "url_verification", "challenge": "c"}', JSON, "body is not JSON"),
    "team-id-10kb": (urlencode({"command": "/gpu", "text": "h100", "team_id": "T" * 10_000, "user_id": "U0ALICE",
                                "channel_id": "C0GENERAL", "response_url": "http://x/r"}).encode(), FORM,
                     "team_id: is not in Slack's format"),
    "event-in-a-command": (urlencode({"command": "/gpu", "text": "h100", "team_id": "T0TEAM", "user_id": "U0ALICE",
                                      "channel_id": "C0GENERAL", "response_url": "http://x/r", "event": "x"}).encode(),
                           FORM, "event: must be an object"),
    "response-urls-null": (json.dumps({"type": "event_callback", "response_urls": None, "event": {
        "type": "app_home_opened", "user": "U0ALICE", "tab": "home"}}).encode(), JSON, "response_urls: must not be null"),
    "event-null-in-a-button": (urlencode({"payload": json.dumps({
        "type": "block_actions", "user": {"id": "U0ALICE"}, "actions": [{"action_id": "share"}], "event": None})}
        ).encode(), FORM, "event: must not be null"),
    "response-url-not-a-url": (urlencode({"command": "/gpu", "text": "h100", "team_id": "T0TEAM", "user_id": "U0ALICE",
                                          "channel_id": "C0GENERAL", "response_url": "javascript:1"}).encode(), FORM,
                               "response_url: is not in Slack's format"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_but_signed_payloads_are_400_without_a_traceback(h: Harness, name: str, caplog: Any) -> None:
    raw, content_type, reason = MALFORMED[name]
    before = slack_tables(h.engine)
    status, text = send(h, raw, content_type)
    assert status == 400 and reason in text, text
    assert_nothing_happened(h, before)
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert [r.levelname for r in caplog.records if r.name == "bot.slack.bodies"] == ["WARNING"]


def test_a_body_over_slacks_size_is_413_before_any_signature_work(h: Harness, monkeypatch: Any) -> None:
    """The issue's example got 401: the signature was checked (over 2 MB) before the size."""
    checked: list[bytes] = []
    monkeypatch.setattr(bodies, "is_signed", lambda raw, **kw: checked.append(raw) or True)
    with socket.create_connection(("127.0.0.1", h.server.port), timeout=10) as conn:
        conn.sendall(b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"X-Slack-Request-Timestamp: 1\r\nX-Slack-Signature: v0=forged\r\n"
                     + f"Content-Length: {MAX_BODY_BYTES + 1}\r\n\r\n".encode())
        answer = conn.recv(200).decode("latin-1")  # answered before the body is sent at all
    assert answer.startswith("HTTP/1.0 413") or answer.startswith("HTTP/1.1 413"), answer
    assert checked == []
    monkeypatch.undo()
    status, _ = post_raw(h.server.port, b"{}", {"Content-Type": JSON})  # still answering, still checking
    assert status == 401


def test_a_signed_body_at_the_limit_is_read(h: Harness) -> None:
    text = "price h100 " + "x" * 3000
    raw = slash_command_body(text, response_url=h.slack.response_url("big")).encode()
    raw += b"&pad=" + b"p" * (MAX_BODY_BYTES - len(raw) - 5)
    assert len(raw) == MAX_BODY_BYTES
    assert send(h, raw, FORM)[0] == 200
    h.slack.wait_for(lambda calls: any(c.path == "/response/big" for c in calls))


@pytest.mark.parametrize("headers", [
    {"X-Slack-Request-Timestamp": "²", "X-Slack-Signature": "v0=00"},  # "²".isdigit() is True
    {"X-Slack-Request-Timestamp": "1", "X-Slack-Signature": "v0=é"},  # slack_sdk compares str: TypeError
    {"X-Slack-Request-Timestamp": "99999999999999999999999", "X-Slack-Signature": "v0=00"},
    {"X-Slack-Request-Timestamp": "", "X-Slack-Signature": ""},
], ids=["superscript-digit", "non-ascii-signature", "huge-timestamp", "empty"])
def test_odd_signature_headers_are_401(h: Harness, headers: dict[str, str]) -> None:
    before = slack_tables(h.engine)
    raw = slash_command_body("h100", response_url=h.slack.response_url("odd")).encode()
    conn = http.client.HTTPConnection("127.0.0.1", h.server.port, timeout=10)
    conn.putrequest("POST", "/slack/events")
    for name, value in {**headers, "Content-Type": FORM, "Content-Length": str(len(raw))}.items():
        conn.putheader(name, value.encode("utf-8"))
    conn.endheaders(raw)
    assert conn.getresponse().status == 401
    conn.close()
    assert_nothing_happened(h, before)


def test_the_server_still_answers_after_a_burst_of_refusals(h: Harness) -> None:
    for raw, content_type, _ in MALFORMED.values():
        send(h, raw, content_type)
    for raw in NOT_OBJECTS:
        send(h, raw, JSON)
    status, _ = send(h, slash_command_body("price h100", response_url=h.slack.response_url("after")).encode(), FORM)
    assert status == 200
    h.slack.wait_for(lambda calls: any(c.path == "/response/after" for c in calls))
    assert [c["text"] for c in h.core.calls] == ["price h100"]


# --- the production ack path (Front): refused before anything is queued -------------------------------------


class StubQueue:
    def __init__(self) -> None:
        self.jobs: list[Any] = []
        self.pending = 0

    def submit(self, job: Any) -> bool:
        self.jobs.append(job)
        return True


def call(front: Front, raw: bytes, headers: dict[str, str], *, length: int | None = None) -> str:
    environ: dict[str, Any] = {"REQUEST_METHOD": "POST", "PATH_INFO": "/slack/events",
                               "CONTENT_LENGTH": str(len(raw) if length is None else length),
                               "CONTENT_TYPE": headers.get("Content-Type", ""), "wsgi.input": io.BytesIO(raw)}
    for name, value in headers.items():
        if name != "Content-Type":
            environ["HTTP_" + name.upper().replace("-", "_")] = value
    status: list[str] = []
    b"".join(front(environ, lambda s, h: status.append(s)))
    return status[0]


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_front_refuses_malformed_bodies_before_queueing(name: str) -> None:
    raw, content_type, _ = MALFORMED[name]
    queue = StubQueue()
    front = Front(signing_secret=SIGNING_SECRET, queue=queue)  # type: ignore[arg-type]
    assert call(front, raw, {**sign(raw), "Content-Type": content_type}) == "400 Bad Request"
    assert queue.jobs == []


def test_front_answers_413_to_a_body_over_the_limit_without_reading_it() -> None:
    queue = StubQueue()
    front = Front(signing_secret=SIGNING_SECRET, queue=queue)  # type: ignore[arg-type]
    status = call(front, b"", {"Content-Type": JSON, "X-Slack-Signature": "v0=x", "X-Slack-Request-Timestamp": "1"},
                  length=MAX_BODY_BYTES + 1)
    assert status == "413 Content Too Large" and queue.jobs == []


def test_front_queues_real_requests_as_received() -> None:
    queue = StubQueue()
    front = Front(signing_secret=SIGNING_SECRET, queue=queue)  # type: ignore[arg-type]
    command = slash_command_body("price 4090", response_url="http://x/response/a").encode()
    event = event_body({"type": "app_mention", "user": "U0ALICE", "text": "<@U0BOT> h100", "ts": "1.0",
                        "channel": "C0GENERAL"}, event_id="EvOk").encode()
    button = block_actions_body("share", "{}", message_ts="1.0", response_url="http://x", ephemeral=True).encode()
    for raw, content_type in ((command, FORM), (event, JSON), (button, FORM)):
        assert call(front, raw, {**sign(raw), "Content-Type": content_type}) == "200 OK"
    assert [job.body.encode() for job in queue.jobs] == [command, event, button]


# --- the check itself ---------------------------------------------------------------------------------------


def test_real_slack_bodies_pass_the_check() -> None:
    """The shapes Slack documents (and the Slack tests send) are all accepted."""
    mention = {"type": "app_mention", "user": "U0ALICE", "text": "<@U0BOT> hi", "ts": "1.0", "channel": "C1",
               "event_ts": "1.0"}
    for raw, content_type in [
        (slash_command_body("", response_url="http://x"), FORM),
        (event_body(mention, event_id="Ev1"), JSON),
        (event_body({"type": "message", "subtype": "message_changed", "channel": "C1", "ts": "2.0",
                     "message": {"type": "message", "user": "U1", "text": "x", "ts": "1.0"}}, event_id="Ev2"), JSON),
        (event_body({"type": "app_home_opened", "user": "U1", "tab": "home"}, event_id="Ev3"), JSON),
        (event_body({"type": "tokens_revoked", "tokens": {"oauth": ["U1"], "bot": []}}, event_id="Ev4"), JSON),
        (event_body({"type": "app_uninstalled"}, event_id="Ev5"), JSON),
        (block_actions_body("whatif.qlora", "[]", message_ts="1.0", response_url="http://x", ephemeral=False,
                            message={"type": "message", "ts": "1.0", "text": "card", "blocks": []}), FORM),
        (json.dumps({"token": "t", "challenge": "c", "type": "url_verification"}), JSON),
        ("ssl_check=1&token=t", FORM),
    ]:
        assert isinstance(check_body(raw.encode(), content_type), dict), raw[:80]


def test_the_signature_is_over_the_raw_bytes() -> None:
    raw = b'{"x": "\xff"}'
    headers = sign(raw)
    assert is_signed(raw, secret=SIGNING_SECRET, timestamp=headers["X-Slack-Request-Timestamp"],
                     signature=headers["X-Slack-Signature"])
    assert not is_signed(raw + b" ", secret=SIGNING_SECRET, timestamp=headers["X-Slack-Request-Timestamp"],
                         signature=headers["X-Slack-Signature"])
    stale = sign(raw, timestamp=int(time.time()) - 301)
    assert not is_signed(raw, secret=SIGNING_SECRET, timestamp=stale["X-Slack-Request-Timestamp"],
                         signature=stale["X-Slack-Signature"])


# --- the production server (`serve --http`: Granian, the ack path, answer processes) ------------------------

from test_slack_serve import served  # noqa: E402, F401  (fixture: the real server on a loopback port)


def test_the_production_server_refuses_the_issues_bodies_and_keeps_answering(served: Any) -> None:  # noqa: F811
    port, slack = served
    for raw, content_type in [(b"[1,2,3]", JSON), (b'"x"', JSON), (b"null", JSON), (b"[" * 100_000, JSON),
                              (urlencode({"payload": "{bad"}).encode(), FORM), MALFORMED["numeric-text"][:2],
                              MALFORMED["button-without-user"][:2]]:
        assert post_raw(port, raw, {**sign(raw), "Content-Type": content_type})[0] == 400, raw[:40]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     + f"Content-Length: {2 * MAX_BODY_BYTES}\r\n\r\n".encode())
        assert conn.recv(200).decode("latin-1").split(" ")[1] == "413"
    body = slash_command_body("price h100", response_url=slack.response_url("after-refusals")).encode()
    assert post_raw(port, body, {**sign(body), "Content-Type": FORM})[0] == 200
    slack.wait_for(lambda calls: any(c.path == "/response/after-refusals" for c in calls), timeout_s=30)
    assert [c.path for c in slack.calls if c.path.startswith("/response/")] == ["/response/after-refusals"]
