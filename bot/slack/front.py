"""The ack path of HTTP mode: verify the signature, answer Slack's handshakes, enqueue, 200 — nothing else."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qs
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from bot.slack.answer_pool import AnswerQueue, Job
from bot.slack.bodies import UNSIGNED, Refusal, response, screen
from bot.slack.notices import notice

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
# The headers the worker's Bolt app reads (content type, retries); the signature was checked here.
FORWARDED = ("content-type", "x-slack-retry-num", "x-slack-retry-reason", "x-slack-request-timestamp")
Wsgi = WSGIApplication
Reply = tuple[str, str, bytes]  # status line, content type, body

OK: Reply = ("200 OK", "text/plain", b"")
UNAUTHORIZED: Reply = ("401 Unauthorized", "text/plain", b"invalid request")
NOT_FOUND: Reply = ("404 Not Found", "text/plain", b"Not Found")


def not_found(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
    return _send(start_response, NOT_FOUND)


class Front:
    """WSGI app: `/slack/events` handled here without Bolt; other paths (OAuth) go to `fallback`."""

    def __init__(
        self, *, signing_secret: str, queue: AnswerQueue, fallback: Wsgi = not_found,
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
        self.queue.close()

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
        if self.queue.submit(Job(checked.text, {k: v for k, v in headers.items() if v})):
            return OK
        is_command = "command" in body
        if body.get("type") == "event_callback":
            # No X-Slack-No-Retry: Slack delivers the event again later (retries are deduplicated).
            log.warning("answer queue full (%d pending): Slack will retry an event", self.queue.pending)
        else:
            log.warning("answer queue full (%d pending): refused a %s", self.queue.pending,
                        "command" if is_command else "button press")
        if is_command:  # the ack itself carries the answer: Slack shows it to the user at once
            text = notice(self._busy_language, "busy")
            return ("200 OK", "application/json",
                    json.dumps({"response_type": "ephemeral", "text": text}).encode())
        return ("503 Service Unavailable", "text/plain", b"busy")


def answer_lost(job: Job, reason: str, *, language: str = "en") -> None:
    """A request no worker could answer: tell the user through its response URL when it has one."""
    from bot.slack.retries import webhook_client

    body = _parse(job)
    url = body.get("response_url")
    rid = str(body.get("event_id") or body.get("trigger_id") or "?")
    log.error("request %s not answered (%s)", rid, reason)
    if not url:  # events carry no response URL: the log line above is all we can do
        return
    text = notice(language, "error", request_id=rid)
    webhook_client(str(url)).send(text=text, response_type="ephemeral", replace_original=False)


def _parse(job: Job) -> Mapping[str, object]:
    """The request body as a dict: JSON events, form commands, or a form-wrapped JSON `payload`."""
    if job.headers.get("content-type", "").startswith("application/json"):
        return dict(json.loads(job.body))
    form = {key: values[0] for key, values in parse_qs(job.body).items()}
    return dict(json.loads(form["payload"])) if "payload" in form else form


def _send(start_response: StartResponse, reply: Reply) -> Iterable[bytes]:
    status, content_type, body = reply
    start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return [body]
