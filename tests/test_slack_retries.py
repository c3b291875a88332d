"""The bounded 429 handler: Retry-After honoured each time, at most five retries and 60 s in all for one call."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

from bot.slack import retries
from bot.slack.retries import BoundedRateLimitHandler


def attempts(handler: BoundedRateLimitHandler, retry_after: str, monkeypatch: Any) -> list[float]:
    """Feed the handler 429s until it gives up; the sleeps it asked for."""
    slept: list[float] = []
    monkeypatch.setattr(retries.time, "sleep", slept.append)
    state, request = RetryState(), HttpRequest(method="POST", url="https://slack.com/api/chat.postMessage", headers={})
    response = HttpResponse(status_code=429, headers={"Retry-After": [retry_after]})
    while handler.can_retry(state=state, request=request, response=response):
        handler.prepare_for_next_attempt(state=state, request=request, response=response)
        assert len(slept) <= 10, "never gives up"
    return slept


def test_short_retry_afters_are_waited_five_times(monkeypatch: Any) -> None:
    slept = attempts(BoundedRateLimitHandler(), "1", monkeypatch)
    assert len(slept) == 5 and all(1.0 <= s <= 1.3 for s in slept)  # Retry-After plus at most 0.2 s jitter


def test_the_total_wait_stops_at_sixty_seconds(monkeypatch: Any) -> None:
    slept = attempts(BoundedRateLimitHandler(), "25", monkeypatch)
    assert len(slept) == 2 and sum(slept) == pytest.approx(50, abs=6)  # a third 25 s wait would pass 60 s


def test_a_retry_after_longer_than_the_budget_is_not_waited(monkeypatch: Any) -> None:
    assert attempts(BoundedRateLimitHandler(), "120", monkeypatch) == []


def test_other_statuses_are_not_its_business() -> None:
    state, request = RetryState(), HttpRequest(method="POST", url="u", headers={})
    assert not BoundedRateLimitHandler().can_retry(state=state, request=request,
                                                    response=HttpResponse(status_code=503, headers={}))
