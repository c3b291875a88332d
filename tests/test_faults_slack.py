"""Faults at the Slack edge, in bulk: forged/stale floods, retry storms, 429 and 5xx storms from Slack.

Each test asserts nothing lost (every genuine request answered) and nothing doubled (answered once).
The single-request versions live in test_slack_http.py / test_slack_events.py; these are the storms.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fake_slack import (
    BOT_USER_ID,
    FakeCore,
    FakeSlack,
    Harness,
    post,
    signed_headers,
    slash_command_body,
    start_harness,
)


@pytest.fixture
def h(engine: Any) -> Iterator[Harness]:
    slack = FakeSlack().start()
    core = FakeCore()
    server = start_harness(engine, slack, core)
    yield Harness(slack, core, server, engine)
    server.stop()
    slack.stop()


def mention(text: str, ts: str) -> dict[str, Any]:
    return {"type": "app_mention", "user": "U0ALICE", "text": f"<@{BOT_USER_ID}> {text}", "ts": ts,
            "channel": "C0GENERAL", "event_ts": ts}


def response_paths(h: Harness) -> Counter[str]:
    return Counter(c.path for c in h.slack.responses())


def test_forged_and_stale_flood_among_genuine_commands(h: Harness) -> None:
    """30 forged/stale/tampered commands interleaved with 10 genuine ones, 10 at a time."""

    def send(i: int) -> tuple[str, int]:
        name = f"r{i}"
        body = slash_command_body(f"price h100 #{i}", response_url=h.slack.response_url(name))
        kind = ("genuine", "forged", "stale", "tampered")[i % 4]
        if kind == "forged":
            headers = signed_headers(body, secret="guessed-secret")
        elif kind == "stale":  # a replay of a request signed 10 minutes ago
            headers = signed_headers(body, timestamp=int(time.time()) - 600)
        elif kind == "tampered":  # a genuine signature over a different body
            headers = signed_headers(body.replace("price", "specs"))
        else:
            headers = signed_headers(body)
        return kind, post(h.server.port, body, headers)[0]

    with ThreadPoolExecutor(10) as pool:
        results = list(pool.map(send, range(40)))
    assert {status for kind, status in results if kind != "genuine"} == {401}
    assert {status for kind, status in results if kind == "genuine"} == {200}
    genuine = {f"/response/r{i}" for i in range(0, 40, 4)}
    h.slack.wait_for(lambda calls: genuine <= {c.path for c in calls})
    h.slack.quiet(0.5)
    assert response_paths(h) == Counter({path: 1 for path in genuine})  # nothing for the bad ones, no doubles
    assert sorted(c["text"] for c in h.core.calls) == sorted(f"price h100 #{i}" for i in range(0, 40, 4))


def test_retry_storm_of_one_event_is_answered_once(h: Harness) -> None:
    """The original delivery and 20 retries (X-Slack-Retry-Num 1..20), sent concurrently."""
    event = mention("specs L40S", "1700000000.000100")
    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda n: h.event(event, event_id="EvStorm", retry=n or None)[0], range(21)))
    assert set(statuses) == {200}
    h.slack.wait_for(lambda calls: any(c.method == "chat.postMessage" for c in calls))
    calls = h.slack.quiet(1.0)
    assert len([c for c in calls if c.method == "chat.postMessage"]) == 1
    assert [c["text"] for c in h.core.calls] == ["specs L40S"]


def test_429_storm_is_waited_out_and_every_answer_delivered_once(h: Harness) -> None:
    """Slack rate-limits the first two postMessage calls; 6 mentions arrive at once; all 6 post once."""
    h.slack.fail("chat.postMessage", "ratelimit", times=2, retry_after_s=1)
    with ThreadPoolExecutor(6) as pool:
        list(pool.map(lambda i: h.event(mention(f"price 4090 #{i}", f"1700000001.00010{i}"), event_id=f"Ev{i}"),
                      range(6)))
    h.slack.wait_for(lambda calls: len([c for c in calls if c.method == "chat.postMessage" and c.status == 200]) >= 6,
                     timeout_s=20)
    calls = h.slack.quiet(1.0)
    ok = [c for c in calls if c.method == "chat.postMessage" and c.status == 200]
    assert Counter(c.params["thread_ts"] for c in ok) == Counter({f"1700000001.00010{i}": 1 for i in range(6)})
    assert len([c for c in calls if c.status == 429]) == 2


def test_consecutive_429s_on_one_message_are_waited_out(h: Harness) -> None:
    """Three 429s in a row on one post (Slack's Retry-After each time): still delivered, once."""
    h.slack.fail("chat.postMessage", "ratelimit", times=3, retry_after_s=1)
    h.event(mention("price h100", "1700000002.000100"), event_id="EvRL")
    h.slack.wait_for(lambda calls: any(c.method == "chat.postMessage" and c.status == 200 for c in calls),
                     timeout_s=6)
    statuses = [c.status for c in h.slack.quiet(0.5) if c.method == "chat.postMessage"]
    assert statuses == [429, 429, 429, 200]


def test_429s_beyond_five_retries_are_reported_with_the_request_id(h: Harness, caplog: Any) -> None:
    """Slack keeps answering 429 (Retry-After 0): 1 try + 5 retries, then the user and the log are told."""
    h.slack.fail("chat.postMessage", "ratelimit", times=50, retry_after_s=0)
    h.event(mention("price h100", "1700000004.000100"), event_id="EvGiveUp")
    calls = h.slack.wait_for(lambda calls: any(c.method == "chat.postEphemeral" for c in calls), timeout_s=10)
    assert [c.status for c in calls if c.method == "chat.postMessage"] == [429] * 6
    notice = next(c for c in calls if c.method == "chat.postEphemeral").params
    assert notice["user"] == "U0ALICE" and "EvGiveUp" in notice["text"]
    assert any("EvGiveUp" in r.getMessage() and "rate-limiting" in r.getMessage() for r in caplog.records)


def test_a_retry_after_beyond_the_budget_is_not_waited_and_the_user_is_told_at_the_response_url(h: Harness) -> None:
    """Retry-After 120 s > the 60 s budget: no hanging for two minutes; the button's response_url gets the notice."""
    h.slack.fail("chat.postMessage", "ratelimit", times=1, retry_after_s=120)
    started = time.monotonic()
    assert h.action("compare.top2", "{}", message_ts="1700000005.000100",
                    response_url=h.slack.response_url("rl-button"), ephemeral=False,
                    message={"type": "message", "ts": "1700000005.000100", "text": "card"})[0] == 200
    calls = h.slack.wait_for(lambda calls: any(c.path == "/response/rl-button" for c in calls), timeout_s=10)
    assert time.monotonic() - started < 10
    # The thread reply was refused with 429 (not a refusal to fall back from: the user is told, nothing retried).
    assert [c.status for c in calls if c.method in ("chat.postMessage", "chat.postEphemeral")] == [429]
    told = [c for c in calls if c.path == "/response/rl-button"]
    assert len(told) == 1 and "12321423423.333649436676" in told[0].params["text"]  # the request id (trigger_id)


def test_5xx_from_slack_is_retried_and_delivered_once(h: Harness) -> None:
    h.slack.fail("chat.postMessage", "server", times=2)
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda i: h.event(mention(f"specs a100 #{i}", f"1700000003.00010{i}"), event_id=f"Ev5{i}"),
                      range(4)))
    h.slack.wait_for(lambda calls: len([c for c in calls if c.method == "chat.postMessage" and c.status == 200]) >= 4)
    calls = h.slack.quiet(0.8)
    ok = [c for c in calls if c.method == "chat.postMessage" and c.status == 200]
    assert len(ok) == 4 and len({c.params["thread_ts"] for c in ok}) == 4
    assert len([c for c in calls if c.status == 503]) == 2


class FlakyResponses(FakeSlack):
    """Response URLs answer 503 for the first `failures` posts (Slack's webhooks do under load)."""

    response_failures = 1

    def _respond(self, path: str, params: dict[str, Any]) -> tuple[int, dict[str, Any] | None, dict[str, str]]:
        if path.startswith("/response/"):
            with self._lock:
                if self.response_failures > 0:
                    self.response_failures -= 1
                    return 503, {"ok": False, "error": "service_unavailable"}, {}
        return super()._respond(path, params)


def test_5xx_at_the_response_url_is_retried(engine: Any) -> None:
    """A slash command's answer goes to its response_url; one 503 there must not lose it."""
    slack = FlakyResponses().start()
    server = start_harness(engine, slack, FakeCore())
    try:
        body = slash_command_body("price h100", response_url=slack.response_url("flaky"))
        assert post(server.port, body, signed_headers(body))[0] == 200
        slack.wait_for(lambda calls: any(c.path == "/response/flaky" and c.status == 200 for c in calls),
                       timeout_s=4)
        assert [c.status for c in slack.quiet(0.5) if c.path == "/response/flaky"] == [503, 200]
    finally:
        server.stop()
        slack.stop()
