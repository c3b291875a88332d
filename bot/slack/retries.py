"""Retrying Slack's HTTP: 429s waited out (Retry-After, bounded), 5xx and dropped connections retried, also at response URLs."""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from ssl import SSLContext
from typing import Any

from slack_bolt import BoltContext, Respond
from slack_bolt.context.respond.internals import _build_message
from slack_sdk.models.attachments import Attachment
from slack_sdk.models.blocks import Block
from slack_sdk.http_retry import RetryHandler
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.webhook import WebhookClient, WebhookResponse
from slack_sdk.web.internal_utils import get_user_agent
from slack_sdk.webhook.internal_utils import _build_body  # the body as WebhookClient sends it (no None, blocks as dicts)

from bot.slack.guard import Delivery, GuardedWebClient, current_delivery, guard_client, retry_after_of
from bot.slack.marked_post import exchange
from bot.tls import slack_tls_context

log = logging.getLogger(__name__)

RATE_LIMIT_RETRIES = 5  # Slack's Retry-After is usually 1-30 s; five waits cover a burst
RATE_LIMIT_WAIT_S = 60.0  # total wait for one call; beyond it the answer is reported lost, not hung on
DEFAULT_RETRY_AFTER_S = 1.0  # a 429 without Retry-After (Slack always sends one)
_WAITED = "rate_limit_waited_s"


def retry_after_s(response: HttpResponse | None) -> float:
    """Slack's Retry-After header (seconds), or a one-second default."""
    for name, values in (response.headers if response is not None else {}).items():
        if name.lower() == "retry-after" and values:
            try:
                return max(0.0, float(values[0]))
            except ValueError:
                break
    return DEFAULT_RETRY_AFTER_S


class BoundedRateLimitHandler(RateLimitErrorRetryHandler):
    """429: wait Retry-After (plus a little jitter) each time, at most `max_retry_count` times and `max_wait_s` in all."""

    def __init__(self, max_retry_count: int = RATE_LIMIT_RETRIES, max_wait_s: float = RATE_LIMIT_WAIT_S) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.max_wait_s = max_wait_s

    def _can_retry(
        self, *, state: RetryState, request: HttpRequest, response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or response.status_code != 429:
            return False
        waited = float((state.custom_values or {}).get(_WAITED, 0.0))
        if waited + retry_after_s(response) > self.max_wait_s:
            log.warning("429 from %s: Retry-After %.0f s would exceed the %.0f s budget (waited %.1f s); giving up",
                        where(request.url), retry_after_s(response), self.max_wait_s, waited)
            return False
        return True

    def prepare_for_next_attempt(
        self, *, state: RetryState, request: HttpRequest, response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        wait_s = retry_after_s(response)
        state.custom_values = {**(state.custom_values or {}), _WAITED: (state.custom_values or {}).get(_WAITED, 0.0) + wait_s}
        state.next_attempt_requested = True
        time.sleep(wait_s + random.uniform(0.0, 0.1 + wait_s / 10))  # jitter: rate-limited callers do not all return at once
        state.increment_current_attempt()


def where(url: str) -> str:
    """A URL as it may appear in a log: the Web API method, never a response URL (it is a credential)."""
    return url.split("/api/", 1)[1].split("?", 1)[0] if "/api/" in url else "a response URL"


def retry_handlers() -> list[RetryHandler]:
    """Wait out 429s (Retry-After, bounded), reconnect dropped connections, retry Slack's 5xx once or twice."""
    return [
        BoundedRateLimitHandler(),
        ConnectionErrorRetryHandler(max_retry_count=2),
        ServerErrorRetryHandler(max_retry_count=2),
    ]


def webhook_client(url: str, *, proxy: str | None = None, ssl: SSLContext | None = None) -> WebhookClient:
    """A response-URL client with the Web API's retry handlers (slack_sdk's default only reconnects)."""
    return WebhookClient(url=url, retry_handlers=retry_handlers(), proxy=proxy, ssl=ssl)


USER_AGENT = get_user_agent()  # as slack_sdk's clients say who they are
RESPONSE_TIMEOUT_S = 30.0  # slack_sdk's WebhookClient default
SERVER_ERROR_PAUSE_S = 0.5  # before the one quick retry of a 5xx (slack_sdk's ServerErrorRetryHandler waits ~0.5-1 s)


def post_after_mark(url: str, message: dict[str, Any], *, ssl: SSLContext | None, mark: Callable[[], None],
                    timeout_s: float = RESPONSE_TIMEOUT_S) -> WebhookResponse:
    """POST a message to a response URL, the "delivering" mark written when only its body is left to send
    (bot.slack.marked_post). One 5xx is retried once after a short pause, as slack_sdk's ServerErrorRetryHandler
    did here."""
    body = json.dumps(_build_body(message)).encode("utf-8")
    headers = (("Content-Type", "application/json;charset=utf-8"), ("User-Agent", USER_AGENT))
    for attempt in (1, 2):
        reply = exchange(url, body, headers, mark=mark, ssl=ssl, timeout_s=timeout_s)
        if reply.status < 500 or attempt == 2:
            break
        time.sleep(SERVER_ERROR_PAUSE_S)
    return WebhookResponse(url=url, status_code=reply.status, body=reply.body.decode("utf-8", "replace"),
                           headers={k.lower(): v for k, v in reply.headers.items()})


class RetryingRespond(Respond):
    """Bolt's `respond()`, posting through a WebhookClient with retry handlers: one 503 no longer loses the answer.

    In an answer worker (a Delivery is set) it keeps the channel's rate for in-channel posts, marks the
    request as delivering before the first message, and turns 429/5xx into a re-run of the job.
    """

    channel_id: str | None = None

    def __call__(
        self,
        text: str | dict[str, Any] = "",  # a whole message as a dict: Bolt's own type, handed to _build_message
        blocks: Sequence[dict[str, object] | Block] | None = None,
        attachments: Sequence[dict[str, object] | Attachment] | None = None,
        response_type: str | None = None,
        replace_original: bool | None = None,
        delete_original: bool | None = None,
        unfurl_links: bool | None = None,
        unfurl_media: bool | None = None,
        thread_ts: str | None = None,
        metadata: dict[str, object] | None = None,
    ) -> WebhookResponse:
        if self.response_url is None:
            raise ValueError("respond is unsupported here as there is no response_url")
        message = _build_message(**text) if isinstance(text, dict) else _build_message(
            text=text, blocks=blocks, attachments=attachments, response_type=response_type,
            replace_original=replace_original, delete_original=delete_original, unfurl_links=unfurl_links,
            unfurl_media=unfurl_media, thread_ts=thread_ts, metadata=metadata,
        )
        delivery = current_delivery()
        if delivery is None:
            response = webhook_client(self.response_url, proxy=self.proxy, ssl=self.ssl).send_dict(message)
        else:
            response = self._guarded(delivery, message)
        if response.status_code != 200:
            log.warning("response URL answered %d after retries: %s", response.status_code, response.body[:200])
        return response

    def _guarded(self, delivery: Delivery, message: dict[str, Any]) -> WebhookResponse:
        """In an answer worker: rate slot and delivery mark first; a 429 or 5xx re-schedules the job."""
        new = not (message.get("replace_original") or message.get("delete_original"))
        public = message.get("response_type") == "in_channel"
        kind = "response_url" if new else "response_url.update"
        delivery.reserve(kind, channel=self.channel_id, public=public)
        if self.proxy:  # slack_sdk's client goes through the proxy; the mark just before it
            delivery.mark_for(kind)
            client = WebhookClient(url=str(self.response_url), proxy=self.proxy, ssl=self.ssl,
                                   retry_handlers=[ServerErrorRetryHandler(max_retry_count=1)])
            response = client.send_dict(message)
        else:
            response = post_after_mark(str(self.response_url), message, ssl=self.ssl,
                                       mark=lambda: delivery.mark_for(kind))
        if response.status_code == 429 or response.status_code >= 500:
            delivery.refused(response.status_code, retry_after_of(response))
        elif response.status_code == 200 and new:
            delivery.delivered()
        return response


def use_retrying_respond(context: BoltContext, next: Callable[[], object]) -> object:
    """Global middleware: every listener's `respond` retries (set before lazy listeners copy the context);
    in an answer worker the Web API client is the guarded one (bot.slack.guard)."""
    if context.response_url:
        in_job = current_delivery() is not None  # a worker posts answers: one TLS context for all (bot.tls)
        respond = RetryingRespond(response_url=context.response_url, proxy=context.client.proxy,
                                  ssl=context.client.ssl or (slack_tls_context() if in_job else None))
        respond.channel_id = context.channel_id
        context["respond"] = respond
    if current_delivery() is not None and not isinstance(context.client, GuardedWebClient):
        context["client"] = guard_client(context.client)
    return next()
