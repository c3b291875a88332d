"""Events over HTTP: DMs, mentions in threads, follow-ups, dedupe of retries and message/app_mention pairs, App Home."""

from __future__ import annotations

import time

import pytest
from fake_slack import (
    BOT_ID,
    BOT_USER_ID,
    FakeCore,
    FakeSlack,
    Harness,
    assert_valid_message,
    eventually,
    harness,
    posted,
    start_harness,
)

from knowledge.slack_store import find_thread_state, find_user_pref


@pytest.fixture
def h(engine):
    yield from harness(engine)

def _ts(offset: int = 0) -> str:
    return f"{int(time.time()) + offset}.{offset:06d}"


def dm(text: str, ts: str, user: str = "U0ALICE", **extra) -> dict:
    return {"type": "message", "channel": "D0ALICE", "channel_type": "im", "user": user,
            "text": text, "ts": ts, "event_ts": ts, **extra}


def mention(text: str, ts: str, thread_ts: str | None = None, user: str = "U0ALICE") -> dict:
    event = {"type": "app_mention", "channel": "C0GENERAL", "user": user,
             "text": f"<@{BOT_USER_ID}> {text}", "ts": ts, "event_ts": ts}
    return event | ({"thread_ts": thread_ts} if thread_ts else {})


def channel_message(text: str, ts: str, thread_ts: str | None, user: str = "U0ALICE", **extra) -> dict:
    event = {"type": "message", "channel": "C0GENERAL", "channel_type": "channel", "user": user,
             "text": text, "ts": ts, "event_ts": ts, **extra}
    return event | ({"thread_ts": thread_ts} if thread_ts else {})


def thread_saved(h: Harness, thread_ts: str, channel: str = "C0GENERAL") -> None:
    """The answer is posted before its thread state is stored; a follow-up needs the state."""
    eventually(lambda: find_thread_state(h.engine, team_id="T0TEAM", channel_id=channel, thread_ts=thread_ts))


def test_direct_message_is_answered_inline_and_a_follow_up_refines_it(h: Harness) -> None:
    assert h.event(dm("llama 3.1 70b full fine-tune on 8x A100 40GB?", _ts(1)), event_id="Ev1")[0] == 200
    [first] = posted(h, "chat.postMessage")
    assert first.params["channel"] == "D0ALICE" and "thread_ts" not in first.params
    assert_valid_message(first.params)
    thread_saved(h, "dm", channel="D0ALICE")
    h.event(dm("and with 32k context?", _ts(2)), event_id="Ev2")
    second = posted(h, "chat.postMessage", 2)[1]
    assert "llama 3.1 70b full fine-tune on 8x A100 40GB? + and with 32k context?" in second.params["text"]
    assert h.core.calls[1]["previous"] == {"texts": ["llama 3.1 70b full fine-tune on 8x A100 40GB?"]}


def test_mention_is_answered_in_a_thread_and_followed_up_there(h: Harness) -> None:
    root = _ts(1)
    h.event(mention("will llama 3.1 70b full fine-tune fit on 8x A100 40GB?", root), event_id="Ev1")
    [answer] = posted(h, "chat.postMessage")
    assert (answer.params["channel"], answer.params["thread_ts"]) == ("C0GENERAL", root)
    assert answer.params["text"].endswith("will llama 3.1 70b full fine-tune fit on 8x A100 40GB?")
    thread_saved(h, root)
    # A reply in that thread without a mention arrives as a plain message event.
    h.event(channel_message("what about 2 GPUs?", _ts(2), thread_ts=root), event_id="Ev2")
    follow = posted(h, "chat.postMessage", 2)[1]
    assert follow.params["thread_ts"] == root
    assert "fit on 8x A100 40GB? + what about 2 GPUs?" in follow.params["text"]
    def latest() -> str | None:
        state = find_thread_state(h.engine, team_id="T0TEAM", channel_id="C0GENERAL", thread_ts=root)
        return state.state["texts"][-1] if state else None

    assert eventually(lambda: latest() == "what about 2 GPUs?")


def test_our_own_reply_and_other_bots_get_nothing(h: Harness) -> None:
    root = _ts(1)
    h.event(mention("h100 price", root), event_id="Ev1")
    posted(h, "chat.postMessage")
    thread_saved(h, root)
    ours = channel_message("[en] h100 price", _ts(2), thread_ts=root, user=BOT_USER_ID, bot_id=BOT_ID)
    h.event(ours, event_id="Ev2")
    other_bot = channel_message("beep", _ts(3), thread_ts=root, user="U0OTHERBOT", bot_id="B0OTHER", subtype="bot_message")
    h.event(other_bot, event_id="Ev3")
    edited = channel_message("edited", _ts(4), thread_ts=root, subtype="message_changed")
    h.event(edited, event_id="Ev4")
    unrelated = channel_message("lunch?", _ts(5), thread_ts=None)
    h.event(unrelated, event_id="Ev5")
    calls = h.slack.quiet(0.5)
    assert len([c for c in calls if c.method == "chat.postMessage"]) == 1
    assert len(h.core.calls) == 1


def test_message_and_app_mention_for_one_message_answer_once(h: Harness) -> None:
    root, reply_ts = _ts(1), _ts(2)
    h.event(mention("h100 vs h200", root), event_id="Ev1")
    posted(h, "chat.postMessage")
    thread_saved(h, root)
    text = f"<@{BOT_USER_ID}> and for inference?"
    h.event(channel_message(text, reply_ts, thread_ts=root), event_id="Ev2")
    h.event(mention("and for inference?", reply_ts, thread_ts=root), event_id="Ev3")
    posted(h, "chat.postMessage", 2)
    calls = h.slack.quiet(0.8)
    assert len([c for c in calls if c.method == "chat.postMessage"]) == 2
    assert [c["text"] for c in h.core.calls] == ["h100 vs h200", "and for inference?"]


def test_a_retried_event_is_answered_once(h: Harness) -> None:
    event = mention("specs L40S", _ts(1))
    assert h.event(event, event_id="Ev9")[0] == 200
    assert h.event(event, event_id="Ev9", retry=1)[0] == 200
    assert h.event(event, event_id="Ev9", retry=2)[0] == 200
    posted(h, "chat.postMessage")
    calls = h.slack.quiet(0.8)
    assert len([c for c in calls if c.method == "chat.postMessage"]) == 1


def test_dedupe_holds_across_processes(engine) -> None:
    """Two app instances on one database (two workers, two hosts) get the same retried event."""
    slack, cores = FakeSlack().start(), (FakeCore(), FakeCore())
    servers = [start_harness(engine, slack, core) for core in cores]
    try:
        first = Harness(slack, cores[0], servers[0], engine)
        second = Harness(slack, cores[1], servers[1], engine)
        event = mention("price 4090", _ts(1))
        first.event(event, event_id="EvX")
        second.event(event, event_id="EvX", retry=1)
        slack.wait_for(lambda calls: any(c.method == "chat.postMessage" for c in calls))  # answered …
        calls = slack.quiet(0.8)  # … and nothing more after a pause
        assert len([c for c in calls if c.method == "chat.postMessage"]) == 1
        assert len(cores[0].calls) + len(cores[1].calls) == 1
    finally:
        for server in servers:
            server.stop()
        slack.stop()


def test_rate_limit_is_waited_out_not_dropped(h: Harness) -> None:
    h.slack.fail("chat.postMessage", "ratelimit", retry_after_s=1)
    started = time.monotonic()
    h.event(dm("h100 price", _ts(1)), event_id="Ev1")
    h.slack.wait_for(lambda calls: any(c.method == "chat.postMessage" and c.status == 200 for c in calls))
    statuses = [c.status for c in h.slack.api_calls("chat.postMessage")]
    assert statuses == [429, 200]
    assert time.monotonic() - started >= 1.0  # Retry-After honoured


def test_server_error_is_retried(h: Harness) -> None:
    h.slack.fail("chat.postMessage", "server")
    h.event(dm("h100 price", _ts(1)), event_id="Ev1")
    h.slack.wait_for(lambda calls: any(c.method == "chat.postMessage" and c.status == 200 for c in calls))
    assert [c.status for c in h.slack.api_calls("chat.postMessage")] == [503, 200]


def test_not_in_channel_is_logged_and_leaves_no_thread_state(h: Harness) -> None:
    h.slack.fail("chat.postMessage", "not_in_channel")
    root = _ts(1)
    h.event(mention("h100 price", root), event_id="Ev1")
    h.slack.wait_for(lambda calls: any(c.method == "chat.postMessage" for c in calls))
    h.slack.quiet(0.3)
    assert find_thread_state(h.engine, team_id="T0TEAM", channel_id="C0GENERAL", thread_ts=root) is None


def test_revoked_token_while_answering_does_not_crash_the_app(h: Harness, caplog) -> None:
    h.slack.fail("chat.postMessage", "invalid_auth")
    h.event(dm("h100 price", _ts(1)), event_id="Ev1")
    h.slack.wait_for(lambda calls: any(c.method == "chat.postMessage" for c in calls))
    h.slack.quiet(0.3)
    assert any("token refused" in r.getMessage() for r in caplog.records)
    h.event(dm("h100 price again", _ts(2)), event_id="Ev2")  # the app still serves
    posted(h, "chat.postMessage", 2)


def test_app_home_shows_language_lists_and_guide(h: Harness) -> None:
    h.event({"type": "app_home_opened", "user": "U0MIN", "channel": "D0MIN", "tab": "home",
             "event_ts": _ts(1)}, event_id="Ev1")
    [publish] = posted(h, "views.publish")
    view = publish.params["view"]
    assert publish.params["user_id"] == "U0MIN" and view["type"] == "home"
    assert_valid_message({"text": "home", "blocks": view["blocks"]})
    shown = str(view["blocks"])
    assert "답변 언어" in shown and "/gpu compare H100 vs H200" in shown  # Korean locale, guide with examples


def test_app_home_language_picker_stores_the_override(h: Harness) -> None:
    import json
    from urllib.parse import urlencode

    from fake_slack import post, signed_headers

    payload = {"type": "block_actions", "user": {"id": "U0MIN", "team_id": "T0TEAM"}, "api_app_id": "A0APP",
               "team": {"id": "T0TEAM"}, "trigger_id": "1.2.3", "view": {"id": "V0HOME", "type": "home"},
               "container": {"type": "view", "view_id": "V0HOME"},
               "actions": [{"action_id": "home.lang", "block_id": "b", "type": "static_select",
                            "selected_option": {"value": "de", "text": {"type": "plain_text", "text": "Deutsch"}},
                            "action_ts": "1"}]}
    body = urlencode({"payload": json.dumps(payload)})
    assert post(h.server.port, body, signed_headers(body))[0] == 200
    [publish] = posted(h, "views.publish")
    assert "Antwortsprache" in str(publish.params["view"]["blocks"])
    assert find_user_pref(h.engine, team_id="T0TEAM", user_id="U0MIN").language_override == "de"


def test_app_uninstalled_forgets_the_workspace(h: Harness) -> None:
    h.command("lang fr", name="fr")
    h.slack.wait_for(lambda calls: any(c.path == "/response/fr" for c in calls))
    assert h.event({"type": "app_uninstalled", "event_ts": _ts(1)}, event_id="Ev1")[0] == 200
    assert eventually(lambda: find_user_pref(h.engine, team_id="T0TEAM", user_id="U0ALICE") is None)
