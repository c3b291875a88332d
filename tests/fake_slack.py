"""A local fake of the Slack Web API and response URLs that records every call, plus signed-request helpers."""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode

from slack_sdk.models.blocks import Block
from slack_sdk.signature import SignatureVerifier

from bot.settings import load_settings
from bot.slack.app import build_app
from bot.slack.wsgi import wsgi_app

TEAM_ID = "T0TEAM"
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"
APP_ID = "A0APP"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"  # the example secret of Slack's signing docs
_TRIGGERS = itertools.count(738474920)


@dataclass
class Call:
    """One request the app made: a Web API method or a response URL post."""

    path: str
    params: dict[str, Any]
    token: str | None
    status: int
    response: dict[str, Any]
    at: float = field(default_factory=time.perf_counter)

    @property
    def method(self) -> str:
        return self.path.removeprefix("/api/")


@dataclass
class Failure:
    kind: str  # ratelimit, server, or a Slack error code (not_in_channel, invalid_auth, ...)
    times: int
    retry_after_s: int = 1


@dataclass
class FakeSlack:
    """Threaded HTTP server: `/api/<method>` and `/response/<id>`; set `locales`, `fail()`, `expire()`."""

    locales: dict[str, str] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    failures: dict[str, list[Failure]] = field(default_factory=dict)
    expired_responses: set[str] = field(default_factory=set)
    # Slack's chat.postMessage rule, enforced: "one message per second per channel, short bursts allowed":
    # a post that would make a third in the same channel within this window gets a 429.
    channel_interval_s: float = 0.0
    rate_limited: list[str] = field(default_factory=list)  # channels that got a 429 from that rule
    # Response URLs handed out with a button click (Harness.action): True when the clicked message was the
    # clicker's own ephemeral answer, the only message the app may replace or delete (issue 21).
    clicks: dict[str, bool] = field(default_factory=dict)
    _posts: dict[str, list[float]] = field(default_factory=dict)
    _ts: itertools.count = field(default_factory=lambda: itertools.count(1))  # type: ignore[type-arg]
    _lock: threading.Condition = field(default_factory=threading.Condition)

    def start(self) -> FakeSlack:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8")
                status, payload, headers = fake.handle(self.path, raw, self.headers)
                body = json.dumps(payload).encode() if payload is not None else b"expired_url"
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json" if payload is not None else "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop serving; fails the test if the app changed or removed a message others could see (issue 21)."""
        self.server.shutdown()
        self.server.server_close()
        changed = self.visible_changes()
        assert not changed, f"messages others can see were changed or removed: {changed}"

    def clicked(self, response_url: str, *, ephemeral: bool) -> None:
        """Record that this response URL came with a click on an ephemeral (own) or visible message."""
        with self._lock:
            self.clicks[response_url.removeprefix(self.url)] = ephemeral

    def visible_changes(self) -> list[str]:
        """Calls that changed or removed a message others can see: any chat.update or chat.delete (Slack has
        no other way to change a visible message, and neither can touch an ephemeral one), and a replace or
        delete at the response URL of a click on a message that was not the clicker's own ephemeral answer."""
        with self._lock:
            calls = list(self.calls)
        found = [f"{c.method} {c.params.get('channel')} {c.params.get('ts')}" for c in calls
                 if c.method in ("chat.update", "chat.delete")]
        for c in calls:
            changes = [k for k in ("replace_original", "delete_original") if c.params.get(k) in (True, "true")]
            if changes and self.clicks.get(c.path) is False:
                found.append(f"{'/'.join(changes)} at {c.path}, a click on a message others can see")
        return found

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def api_url(self) -> str:
        return self.url + "/api/"

    def response_url(self, name: str) -> str:
        return f"{self.url}/response/{name}"

    def fail(self, method: str, kind: str, times: int = 1, retry_after_s: int = 1) -> None:
        with self._lock:
            self.failures.setdefault(method, []).append(Failure(kind, times, retry_after_s))

    def expire(self, response_name: str) -> None:
        """The response URL answers 404, as Slack's do after 30 minutes."""
        self.expired_responses.add(f"/response/{response_name}")

    def handle(self, path: str, raw: str, headers: Any) -> tuple[int, dict[str, Any] | None, dict[str, str]]:
        params = _parse(raw, headers.get("Content-Type", ""))
        auth = headers.get("Authorization") or ""
        token = auth.removeprefix("Bearer ") or params.get("token")
        status, payload, extra = self._respond(path, params)
        with self._lock:
            self.calls.append(Call(path, params, token, status, payload or {}))
            self._lock.notify_all()
        return status, payload, extra

    def _respond(self, path: str, params: dict[str, Any]) -> tuple[int, dict[str, Any] | None, dict[str, str]]:
        if path.startswith("/response/"):
            return (404, None, {}) if path in self.expired_responses else (200, {"ok": True}, {})
        method = path.removeprefix("/api/")
        if method == "chat.postMessage" and self.channel_interval_s and self._too_soon(str(params.get("channel"))):
            return 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "1"}
        failure = self._take_failure(method)
        if failure is not None:
            if failure.kind == "ratelimit":
                return 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(failure.retry_after_s)}
            if failure.kind == "server":
                return 503, {"ok": False, "error": "service_unavailable"}, {}
            return 200, {"ok": False, "error": failure.kind}, {}
        return 200, self._success(method, params), {}

    def _too_soon(self, channel: str) -> bool:
        now = time.monotonic()
        with self._lock:
            recent = [t for t in self._posts.get(channel, []) if now - t < self.channel_interval_s]
            if len(recent) >= 2:
                self.rate_limited.append(channel)
                return True
            self._posts[channel] = [*recent, now]
            return False

    def _take_failure(self, method: str) -> Failure | None:
        with self._lock:
            queue = self.failures.get(method) or []
            if not queue:
                return None
            queue[0].times -= 1
            return queue.pop(0) if queue[0].times <= 0 else queue[0]

    def _success(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        ts = f"{int(time.time())}.{next(self._ts):06d}"
        channel = params.get("channel")
        if method == "auth.test":
            return {"ok": True, "url": "https://fake.slack.com/", "team": "Fake", "user": "gpu_advisor",
                    "team_id": TEAM_ID, "user_id": BOT_USER_ID, "bot_id": BOT_ID, "is_enterprise_install": False}
        if method == "users.info":
            user = params.get("user")
            return {"ok": True, "user": {"id": user, "team_id": TEAM_ID, "name": str(user).lower(),
                                         "is_bot": False, "locale": self.locales.get(str(user), "en-US")}}
        if method == "chat.postMessage":
            return {"ok": True, "channel": channel, "ts": ts,
                    "message": {"text": params.get("text"), "bot_id": BOT_ID, "ts": ts}}
        if method == "chat.update":
            return {"ok": True, "channel": channel, "ts": params.get("ts"), "text": params.get("text")}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": ts}
        if method == "views.publish":
            return {"ok": True, "view": {"id": "V0HOME", "type": "home", "blocks": params.get("view", {}).get("blocks", [])}}
        if method == "oauth.v2.access":  # the shape of https://api.slack.com/methods/oauth.v2.access
            return {"ok": True, "access_token": "xoxe.xoxb-1-rotating", "token_type": "bot",
                    "scope": "commands,chat:write", "bot_user_id": BOT_USER_ID, "app_id": APP_ID,
                    "team": {"name": "Fake", "id": TEAM_ID}, "enterprise": None, "is_enterprise_install": False,
                    "authed_user": {"id": "U0ALICE"}, "refresh_token": "xoxe-1-refresh", "expires_in": 43200}
        if method == "conversations.info":
            return {"ok": True, "channel": {"id": channel, "is_member": True, "is_archived": False}}
        return {"ok": False, "error": "unknown_method"}

    # --- what the tests read -------------------------------------------------------------

    def api_calls(self, method: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def responses(self) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.path.startswith("/response/")]

    def wait_for(self, predicate: Any, timeout_s: float = 10.0) -> list[Call]:
        """Block until `predicate(calls)` is true; returns the calls (raises on timeout)."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while not predicate(self.calls):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"timed out; calls so far: {[c.path for c in self.calls]}")
                self._lock.wait(remaining)
            return list(self.calls)

    def quiet(self, seconds: float = 0.5) -> list[Call]:
        """Wait a moment for anything still in flight, then return every call."""
        time.sleep(seconds)
        with self._lock:
            return list(self.calls)


def _parse(raw: str, content_type: str) -> dict[str, Any]:
    if not raw:
        return {}
    if "json" in content_type:
        return dict(json.loads(raw))
    params: dict[str, Any] = {k: v[0] for k, v in parse_qs(raw).items()}
    for name in ("blocks", "view", "attachments"):  # slack_sdk sends these JSON-encoded in forms
        if isinstance(params.get(name), str):
            params[name] = json.loads(params[name])
    return params


# --- requests shaped as Slack sends them -----------------------------------------------------


def signed_headers(body: str, *, secret: str = SIGNING_SECRET, timestamp: int | None = None,
                   content_type: str = "application/x-www-form-urlencoded") -> dict[str, str]:
    """The v0 HMAC-SHA256 signature Slack puts on every request."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body)
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature, "Content-Type": content_type}


def new_trigger_id() -> str:
    """Slack gives every invocation its own trigger id (shape: 13345224609.738474920.8088930838d88f008e0)."""
    return f"13345224609.{next(_TRIGGERS)}.{uuid.uuid4().hex[:31]}"


def slash_command_body(text: str, *, user: str = "U0ALICE", channel: str = "C0GENERAL",
                       response_url: str, trigger_id: str | None = None) -> str:
    trigger_id = trigger_id or new_trigger_id()
    return urlencode({
        "token": "gIkuvaNzQIHg97ATvDxqgjtO", "team_id": TEAM_ID, "team_domain": "fake",
        "channel_id": channel, "channel_name": "general", "user_id": user, "user_name": user.lower(),
        "command": "/gpu", "text": text, "api_app_id": APP_ID, "is_enterprise_install": "false",
        "response_url": response_url, "trigger_id": trigger_id,
    })


def event_body(event: dict[str, Any], *, event_id: str) -> str:
    return json.dumps({
        "token": "XXYYZZ", "team_id": TEAM_ID, "api_app_id": APP_ID, "event": event,
        "type": "event_callback", "event_id": event_id, "event_time": int(time.time()),
        "authorizations": [{"enterprise_id": None, "team_id": TEAM_ID, "user_id": BOT_USER_ID,
                            "is_bot": True, "is_enterprise_install": False}],
        "is_ext_shared_channel": False, "event_context": "4-eyJldCI6ImFwcF9tZW50aW9uIn0",
    })


def block_actions_body(action_id: str, value: str, *, user: str = "U0ALICE", channel: str = "C0GENERAL",
                       message_ts: str, response_url: str, ephemeral: bool,
                       message: dict[str, Any] | None = None, label: str | None = None) -> str:
    container = {"type": "message", "message_ts": message_ts, "channel_id": channel, "is_ephemeral": ephemeral}
    if message is not None and message.get("thread_ts"):  # Slack names the thread of a message in one
        container["thread_ts"] = message["thread_ts"]
    payload: dict[str, Any] = {
        "type": "block_actions", "user": {"id": user, "username": user.lower(), "team_id": TEAM_ID},
        "api_app_id": APP_ID, "token": "9s8d9as89d8as9d8as989",
        "container": container,
        "trigger_id": f"12321423423.333649436676.{uuid.uuid4().hex}",  # one per click, as Slack's
        "team": {"id": TEAM_ID, "domain": "fake"}, "channel": {"id": channel, "name": "general"},
        "response_url": response_url,
        "actions": [{"action_id": action_id, "block_id": "b1", "value": value, "type": "button",
                     "text": {"type": "plain_text", "text": label or action_id}, "action_ts": f"{time.time():.6f}"}],
    }
    if message is not None:
        payload["message"] = message
    return urlencode({"payload": json.dumps(payload)})


# --- a stand-in for bot.answer, so Slack behaviour is tested apart from the cards -------------


@dataclass
class FakeReply:
    text: str
    blocks: list[dict[str, Any]]
    language: str
    kind: str
    ask: Any = None


@dataclass
class FakeCore:
    """Answers with the texts it was given (previous + new) so tests can see what a thread carried."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    fail_with: Exception | None = None

    def answer(self, text: str, *, lang: str | None, previous: Any, now: Any) -> FakeReply:
        self.calls.append({"text": text, "lang": lang, "previous": previous})
        if self.fail_with is not None:
            raise self.fail_with
        texts = [*(previous or {}).get("texts", []), text]
        language = lang or "en"
        summary = " + ".join(texts)
        blocks = [
            {"type": "section", "text": {"type": "mrkdwn", "text": f"[{language}] {summary}"}},
            {"type": "actions", "block_id": "whatif", "elements": [
                {"type": "button", "action_id": "whatif.qlora", "value": json.dumps(texts),
                 "text": {"type": "plain_text", "text": "QLoRA"}}]},
        ]
        kind = "help" if text == "help" else "recommendation"
        return FakeReply(text=f"[{language}] {summary}", blocks=blocks, language=language, kind=kind)

    def apply_action(self, action_id: str, value: str, *, lang: str, now: Any) -> FakeReply:
        self.calls.append({"action": action_id, "value": value, "lang": lang})
        text = f"[{lang}] {action_id} on {value}"
        blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]
        return FakeReply(text=text, blocks=blocks, language=lang, kind="recommendation")

    def state_of(self, reply: FakeReply, text: str) -> dict[str, Any]:
        previous = next((c["previous"] for c in reversed(self.calls) if c.get("text") == text), None)
        return {"texts": [*(previous or {}).get("texts", []), text]}


# --- serving the real WSGI app on a loopback port, and posting to it --------------------------


class AppServer:
    """The app's WSGI callable (bot.slack.wsgi.wsgi_app) on a threaded loopback server."""

    def __init__(self, wsgi: Any, app: Any = None) -> None:
        from socketserver import ThreadingMixIn
        from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

        class Server(ThreadingMixIn, WSGIServer):
            daemon_threads = True

        class Quiet(WSGIRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

        self.server = make_server("127.0.0.1", 0, wsgi, server_class=Server, handler_class=Quiet)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.port = self.server.server_address[1]
        self.app = app

    def stop(self) -> None:
        """Stop serving, then let the Bolt app's lazy listeners finish.

        Without the drain, an answer still in flight when a test ends posts to a fake Slack that
        is gone (or to the next test's), and its failure lands in another test's log.
        """
        self.server.shutdown()
        self.server.server_close()
        if self.app is not None:
            self.app.listener_runner.listener_executor.shutdown(wait=True)


def post(port: int, body: str, headers: dict[str, str], path: str = "/slack/events") -> tuple[int, str]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("POST", path, body=body.encode("utf-8"), headers=headers)
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8")
    finally:
        conn.close()


def get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, str, dict[str, str]]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8"), dict(response.getheaders())
    finally:
        conn.close()


# --- the harness the Slack tests share -------------------------------------------------------

@dataclass
class Harness:
    slack: FakeSlack
    core: FakeCore
    server: AppServer
    engine: object

    def command(self, text: str, *, user: str = "U0ALICE", name: str = "cmd1") -> tuple[int, str]:
        body = slash_command_body(text, user=user, response_url=self.slack.response_url(name))
        return post(self.server.port, body, signed_headers(body))

    def event(self, event: dict, *, event_id: str, retry: int | None = None) -> tuple[int, str]:
        body = event_body(event, event_id=event_id)
        headers = signed_headers(body, content_type="application/json")
        if retry is not None:
            headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        return post(self.server.port, body, headers)

    def action(self, action_id: str, value: str, **kwargs) -> tuple[int, str]:
        self.slack.clicked(kwargs["response_url"], ephemeral=kwargs["ephemeral"])
        body = block_actions_body(action_id, value, **kwargs)
        return post(self.server.port, body, signed_headers(body))


def start_harness(engine, slack: FakeSlack, core: Any, snapshots: Any = None) -> AppServer:
    settings = load_settings({
        "DATABASE_URL": engine.url.render_as_string(hide_password=False),
        "SLACK_BOT_TOKEN": "xoxb-1-test", "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": slack.api_url,
    })
    app = build_app(settings, engine=engine, core=core, snapshots=snapshots)
    return AppServer(wsgi_app(app), app)


def harness(engine: Any) -> Any:
    """Fake Slack + the app on a loopback port; test modules wrap it in their `h` fixture."""
    slack = FakeSlack(locales={"U0JUN": "ja-JP", "U0MIN": "ko-KR"}).start()
    core = FakeCore()
    server = start_harness(engine, slack, core)
    yield Harness(slack, core, server, engine)
    server.stop()
    slack.stop()


def assert_valid_message(params: dict) -> None:
    """A non-empty text fallback and blocks that slack_sdk can parse back."""
    assert params.get("text"), "a message needs a text fallback"
    for block in params["blocks"]:
        parsed = Block.parse(block)
        assert parsed is not None and parsed.to_dict()["type"] == block["type"], block


def posted(h: Harness, method: str, count: int = 1) -> list:
    h.slack.wait_for(lambda calls: len([c for c in calls if c.method == method]) >= count)
    return h.slack.api_calls(method)




def eventually(check: Any, timeout_s: float = 5.0) -> Any:
    """Poll `check()` until it returns something truthy (work continues after Slack is answered)."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"still {result!r} after {timeout_s} s")
        time.sleep(0.02)
