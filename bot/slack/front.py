"""The ack path of HTTP mode: verify the signature, answer Slack's handshakes, record + enqueue, 200 — nothing else."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Protocol
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from bot.queue.jobs import Job
from bot.slack.bodies import UNSIGNED, Refusal, response, screen

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
MAX_BODY_BYTES = 1 << 20  # Slack's payloads are a few KB; refuse anything absurd before reading it
# The headers the worker's Bolt app reads (content type, retries); the signature was checked here.
FORWARDED = ("content-type", "x-slack-retry-num", "x-slack-retry-reason", "x-slack-request-timestamp")
Wsgi = WSGIApplication
Reply = tuple[str, str, bytes]  # status line, content type, body

OK: Reply = ("200 OK", "text/plain", b"")
UNAUTHORIZED: Reply = ("401 Unauthorized", "text/plain", b"invalid request")
NOT_FOUND: Reply = ("404 Not Found", "text/plain", b"Not Found")


class Queue(Protocol):
    """Where accepted requests go (bot.queue.intake.DurableQueue): True once stored, False when it cannot take it."""

    def submit(self, job: Job) -> bool: ...


def not_found(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
    return _send(start_response, NOT_FOUND)


class Front:
    """WSGI app: `/slack/events` handled here without Bolt; other paths (OAuth) go to `fallback`."""

    def __init__(
        self, *, signing_secret: str, queue: Queue, fallback: Wsgi = not_found,
        busy_language: str = "en",
    ) -> None:
        self._signing_secret = signing_secret
        self.queue, self._fallback, self._busy_language = queue, fallback, busy_language

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        path, method = environ.get("PATH_INFO"), environ.get("REQUEST_METHOD")
        if path == EVENTS_PATH and method == "POST":
            return _send(start_response, self.handle(environ))
        if path == HEALTH_PATH and method == "GET":
            return _send(start_response, ("200 OK", "text/plain", b"ok"))
        return self._fallback(environ, start_response)

    def close(self) -> None:
        """Nothing to drain: an accepted request is stored before its 200 goes back."""

    def handle(self, environ: WSGIEnvironment) -> Reply:
        checked = screen(environ, signing_secret=self._signing_secret)  # 413, 401, 400: nothing done
        if isinstance(checked, Refusal):
            return UNAUTHORIZED if checked is UNSIGNED else response(checked)
        body = checked.body
        headers = {name: str(environ.get("HTTP_" + name.upper().replace("-", "_"), "")) for name in FORWARDED}
        headers["content-type"] = checked.content_type
        if body.get("type") == "url_verification":
            return ("200 OK", "application/json", json.dumps({"challenge": body["challenge"]}).encode())
        if "ssl_check" in body and "command" not in body:
            return OK
        if self.queue.submit(Job(checked.text, {k: v for k, v in headers.items() if v}, fields=body)):
            return OK
        is_command = "command" in body
        if body.get("type") == "event_callback":
            # No X-Slack-No-Retry: Slack delivers the event again later (retries are deduplicated).
            log.warning("answer queue unavailable: Slack will retry an event")
            return ("503 Service Unavailable", "text/plain", b"busy")
        log.warning("answer queue unavailable: refused a %s", "command" if is_command else "button press")
        if is_command:  # the ack itself carries the answer: Slack shows it to the user at once
            from bot.slack.notices import notice  # only when busy: it loads the message catalog and Babel (start)

            text = notice(self._busy_language, "busy")
            return ("200 OK", "application/json",
                    json.dumps({"response_type": "ephemeral", "text": text}).encode())
        return ("503 Service Unavailable", "text/plain", b"busy")


def _send(start_response: StartResponse, reply: Reply) -> Iterable[bytes]:
    status, content_type, body = reply
    start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return [body]
