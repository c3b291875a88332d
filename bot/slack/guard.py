"""Every message an answer worker sends passes here: rate slots, the "delivering" mark, 429s re-scheduled.

The worker (bot.queue.worker) sets the request's `Delivery` for the duration of one job; the
Web API client and `respond()` of the worker's Bolt app consult it. Outside a job (CLI, the
clock, tests of the listeners alone) there is no Delivery and calls go straight through.
"""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.error import HTTPError
from urllib.request import Request

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse
from sqlalchemy import Engine

from bot.slack.ratelimit import Limiter, channel_rate, method_rate
from bot.tls import slack_tls_context

log = logging.getLogger(__name__)

INLINE_WAIT_S = 0.25  # a channel slot this close is waited for; a later one re-schedules the job
# Methods that show the user something new: the first one marks the request "delivering".
CREATE_METHODS = frozenset({"chat.postMessage", "chat.postEphemeral", "chat.scheduleMessage"})
CHANNEL_METHODS = frozenset({"chat.postMessage"})  # Slack's one-per-second-per-channel rule


class Reschedule(BaseException):
    """Run this job again after `delay_s` (429 Retry-After, a busy channel, a transient Slack error).

    A BaseException on purpose: it passes the listeners' error boundary (`except Exception`), which
    would otherwise answer the user with an error, and reaches the worker that re-schedules the job.
    """

    def __init__(self, delay_s: float, reason: str, *, slot_at: float | None = None, transient: bool = False) -> None:
        super().__init__(f"re-run in {delay_s:.1f} s: {reason}")
        self.delay_s, self.reason, self.slot_at, self.transient = delay_s, reason, slot_at, transient


@dataclass
class Delivery:
    """One job's delivery state: the request's key and its worker, the shared limiter, the store."""

    key: str
    team_id: str
    worker_id: str
    attempts: int
    engine: Engine
    limiter: Limiter
    slot_at: float | None = None  # a channel slot reserved by an earlier run of this request
    may_retry: bool = True  # False on the last attempt: a transient error is then answered, not re-run
    marked: bool = False  # the "delivering" mark is written
    sent: int = 0  # messages that reached Slack
    sleep: Callable[[float], None] = time.sleep
    events: list[str] = field(default_factory=list)  # what happened, for the job's log line

    def will_mark(self, method: str) -> bool:
        """Whether this call shows the user something new and the request is not marked "delivering" yet."""
        return not self.marked and (method in CREATE_METHODS or method == "response_url")

    def mark_for(self, method: str) -> None:
        """Mark the request "delivering" if this call shows the user something new (once per request). Callers
        reserve the call's slots first (`reserve`), then mark when only the body is left (bot.slack.marked_post)."""
        if self.will_mark(method):
            self._mark()

    def reserve(self, method: str, *, channel: str | None, public: bool = False) -> None:
        """Wait for (or reserve) the channel slot and the method's tier slot this call needs."""
        if (method in CHANNEL_METHODS or public) and channel:
            self._channel_slot(channel)
        rate = method_rate(method)
        if rate is not None:
            wait = self.limiter.reserve(f"{self.team_id}:{method}", rate)
            if wait > INLINE_WAIT_S:
                raise Reschedule(wait, f"{method} tier limit")
            if wait > 0:
                self.sleep(wait)

    def _channel_slot(self, channel: str) -> None:
        now = time.time()
        if self.slot_at is not None:  # reserved by the run that was re-scheduled for it
            wait, self.slot_at = self.slot_at - now, None
        else:
            wait = self.limiter.reserve(f"channel:{self.team_id}:{channel}", channel_rate())
        if wait > INLINE_WAIT_S:
            self.events.append(f"channel busy {wait:.1f}s")
            raise Reschedule(wait, "channel rate limit", slot_at=now + wait)
        if wait > 0:
            self.sleep(wait)

    def _mark(self) -> None:
        if self.marked:
            return
        from bot.slack.reconnect import once_more
        from knowledge.slack_requests import mark_delivering

        if not once_more(mark_delivering, self.engine, self.key, worker_id=self.worker_id, now=datetime.now(UTC)):
            # Our claim was taken over (this worker was thought dead): another run answers it.
            raise Reschedule(0, "claim lost to another worker")
        self.marked = True

    def refused(self, status: int, retry_after_s: float | None) -> None:
        """Slack did not take the message (429 or 5xx): nothing was shown, so the job may run again."""
        if self.marked and not self.sent:
            from knowledge.slack_requests import undo_delivering

            undo_delivering(self.engine, self.key, worker_id=self.worker_id, now=datetime.now(UTC))
            self.marked = False
        if status == 429:
            raise Reschedule(retry_after_s if retry_after_s is not None else 1.0, "429 from Slack")
        if self.may_retry and not self.sent:
            raise Reschedule(backoff_s(self.attempts), f"Slack answered {status}", transient=True)

    def delivered(self) -> None:
        self.sent += 1


def backoff_s(attempts: int, *, base_s: float = 1.0, cap_s: float = 60.0) -> float:
    """Exponential: 1, 2, 4, 8 … seconds after the 1st, 2nd, 3rd … attempt, at most a minute."""
    return float(min(cap_s, base_s * 2 ** max(0, attempts - 1)))


_CURRENT: ContextVar[Delivery | None] = ContextVar("slack_delivery", default=None)
# The mark a Web API call in a job still has to write (GuardedWebClient sets it around the call).
_PENDING_MARK: ContextVar[Callable[[], None] | None] = ContextVar("slack_pending_mark", default=None)


def current_delivery() -> Delivery | None:
    return _CURRENT.get()


def current_request_key() -> str | None:
    """The queued request being answered in this thread (None outside a worker's job)."""
    delivery = _CURRENT.get()
    return delivery.key if delivery else None


@contextmanager
def delivering(delivery: Delivery) -> Iterator[Delivery]:
    token = _CURRENT.set(delivery)
    try:
        yield delivery
    finally:
        _CURRENT.reset(token)


def retry_after_of(response: Any) -> float | None:
    headers = getattr(response, "headers", None) or {}
    for name, value in dict(headers).items():
        if str(name).lower() == "retry-after":
            text = value[0] if isinstance(value, list | tuple) and value else value
            try:
                return max(0.0, float(str(text)))
            except ValueError:
                return None
    return None


class GuardedWebClient(WebClient):
    """The worker's Web API client: limits kept, first message marked, 429/5xx turned into re-runs."""

    def api_call(
        self, api_method: str, *, http_verb: str = "POST", files: dict[str, Any] | None = None,
        data: dict[str, Any] | None = None, params: dict[str, Any] | None = None,
        json: dict[str, Any] | None = None, headers: dict[str, Any] | None = None,
        auth: dict[str, Any] | None = None,
    ) -> SlackResponse:
        delivery = current_delivery()

        def call() -> SlackResponse:
            return super(GuardedWebClient, self).api_call(
                api_method, http_verb=http_verb, files=files, data=data, params=params, json=json, headers=headers,
                auth=auth)

        if delivery is None:
            return call()
        channel = next((str(p["channel"]) for p in (json, data, params) if p and p.get("channel")), None)
        delivery.reserve(api_method, channel=channel)
        marks = delivery.will_mark(api_method)
        pending = _PENDING_MARK.set((lambda: delivery.mark_for(api_method)) if marks else None)  # see below
        try:
            response = call()
        except SlackApiError as exc:
            status = int(getattr(exc.response, "status_code", 200) or 200)
            if status == 429 or status >= 500:
                delivery.refused(status, retry_after_of(exc.response))
            raise
        finally:
            _PENDING_MARK.reset(pending)
        if api_method in CREATE_METHODS:
            delivery.delivered()
        return response

    def _perform_urllib_http_request_internal(self, url: str, req: Request) -> dict[str, Any]:
        """slack_sdk's one exchange with Slack (each try of its retry loop). In a job, the request's mark is written
        when only the body is left to send (bot.slack.marked_post); the reply is handed back as urllib's would be:
        a dict for a 2xx/3xx, an HTTPError for 4xx/5xx, which slack_sdk's loop turns into retries or a response."""
        mark = _PENDING_MARK.get()
        if mark is None:
            return super()._perform_urllib_http_request_internal(url, req)
        if self.proxy is not None or not url.lower().startswith(("http://", "https://")):
            mark()  # through a proxy, slack_sdk's own client: the mark just before it
            return super()._perform_urllib_http_request_internal(url, req)
        from bot.slack.marked_post import exchange

        data = req.data if isinstance(req.data, bytes) else b""
        reply = exchange(url, data, req.header_items(), mark=mark, ssl=self.ssl, timeout_s=self.timeout,
                         method=req.get_method())
        if reply.status >= 400:
            raise HTTPError(url, reply.status, reply.reason, reply.headers, io.BytesIO(reply.body))
        if reply.headers.get_content_type() == "application/gzip":
            return {"status": reply.status, "headers": reply.headers, "body": reply.body}
        charset = reply.headers.get_content_charset() or "utf-8"
        return {"status": reply.status, "headers": reply.headers, "body": reply.body.decode(charset)}


def guard_client(client: WebClient) -> GuardedWebClient:
    """A GuardedWebClient with `client`'s token, URL and settings (Bolt builds one per request)."""
    from slack_sdk.http_retry.builtin_handlers import ServerErrorRetryHandler

    return GuardedWebClient(
        token=client.token, base_url=client.base_url, timeout=client.timeout, ssl=client.ssl or slack_tls_context(),
        proxy=client.proxy, headers=client.headers, team_id=getattr(client, "team_id", None), logger=client.logger,
        # No 429 handler (a 429 re-schedules the job instead of sleeping in it) and no connection-error
        # retry (a post that reached Slack must not be sent again); one quick retry of a 5xx.
        retry_handlers=[ServerErrorRetryHandler(max_retry_count=1)],
    )

