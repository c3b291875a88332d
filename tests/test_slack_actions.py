"""Buttons over HTTP (issue 21): only the clicker's own ephemeral answer is replaced; on a message others can see
a button answers in its thread (or privately when it cannot), and sharing removes only the sharer's ephemeral.

Each test asserts the exact calls the app made to Slack; reads (users.info for the language) are left out.
Every test of the Slack suite also fails if a message others can see was changed (FakeSlack.stop).
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from fake_slack import FakeSlack, Harness, assert_valid_message, harness, posted
from slack_sdk import WebClient
from slack_sdk.webhook import WebhookClient

from bot.answer.actions import ACTION_ID
from knowledge.slack_store import ThreadState, save_thread_state

READS = frozenset({"users.info", "auth.test", "conversations.info"})
CHANNEL_CARD = {"type": "message", "ts": "1700000000.000300", "bot_id": "B0BOT", "text": "Fine-tune Llama 3.1 8B with QLoRA: one L4 fits, the cheapest offer is on-demand"}
# Every button id a card can carry (bot/answer/actions.py's docstring: stable ids), with Share.
EVERY_BUTTON = ("whatif.method.qlora", "whatif.method.lora", "whatif.method.full", "whatif.quant.int4",
                "whatif.quant.fp8", "whatif.gpus.more", "whatif.gpus.fewer", "whatif.spot", "whatif.ondemand",
                "compare.top2", "share", "gpu.pick.1", "model.pick.0", "model.size.2", "kb.open.0", "price.show",
                "price.show.1", "specs.show")


@pytest.fixture
def h(engine):
    yield from harness(engine)


def writes(h: Harness, settle_s: float = 0.3) -> list[tuple[str, int]]:
    """Every call that showed, changed or removed something, in order, with its HTTP status."""
    return [(c.path.removeprefix("/api/"), c.status) for c in h.slack.quiet(settle_s) if c.method not in READS]


def call(h: Harness, path: str) -> Any:
    return next(c for c in h.slack.calls if c.path.removeprefix("/api/") == path)


def test_a_button_on_the_clickers_own_ephemeral_answer_replaces_it_through_the_response_url(h: Harness) -> None:
    status, _ = h.action("whatif.method.qlora", '{"w":{"params_b":13}}', message_ts="1700000000.000100",
                         response_url=h.slack.response_url("act"), ephemeral=True)
    assert status == 200
    h.slack.wait_for(lambda calls: any(c.path == "/response/act" for c in calls))
    assert writes(h) == [("/response/act", 200)]
    replaced = call(h, "/response/act").params
    assert replaced["replace_original"] is True
    assert_valid_message(replaced)
    assert h.core.calls == [{"action": "whatif.method.qlora", "value": '{"w":{"params_b":13}}', "lang": "en"}]


def test_a_button_on_a_card_in_a_thread_answers_in_that_thread_saying_who_asked_what(h: Harness) -> None:
    save_thread_state(h.engine, team_id="T0TEAM", channel_id="C0GENERAL", thread_ts="1700000000.000001",
                      thread=ThreadState("U0MIN", "de", {}, datetime.now(UTC)))
    message = {"type": "message", "ts": "1700000000.000200", "thread_ts": "1700000000.000001",
               "bot_id": "B0BOT", "text": "card"}
    h.action("compare.top2", "{}", message_ts="1700000000.000200", response_url=h.slack.response_url("t"),
             ephemeral=False, message=message, label="Top 2 vergleichen")
    posted(h, "chat.postMessage")
    assert writes(h) == [("chat.postMessage", 200)]  # no chat.update, nothing at the response URL
    reply = call(h, "chat.postMessage").params
    assert (reply["channel"], reply["thread_ts"]) == ("C0GENERAL", "1700000000.000001")
    # The first line: the clicker (not the thread's owner) and the button, in the thread's language (German).
    assert reply["text"].startswith("<@U0ALICE> fragte: *Top 2 vergleichen*\n[de] compare.top2 on {}")
    assert reply["blocks"][0]["type"] == "context"
    assert reply["blocks"][0]["elements"][0]["text"] == "<@U0ALICE> fragte: *Top 2 vergleichen*"
    assert reply["blocks"][1:] == [{"type": "section", "text": {"type": "mrkdwn", "text": "[de] compare.top2 on {}"}}]
    assert_valid_message(reply)


def test_a_button_on_a_shared_channel_card_starts_a_thread_under_it(h: Harness) -> None:
    h.action("whatif.spot", '{"w":{"spot":true}}', message_ts=CHANNEL_CARD["ts"],
             response_url=h.slack.response_url("s"), ephemeral=False, message=CHANNEL_CARD, label="Use spot")
    posted(h, "chat.postMessage")
    assert writes(h) == [("chat.postMessage", 200)]
    reply = call(h, "chat.postMessage").params
    assert (reply["channel"], reply["thread_ts"]) == ("C0GENERAL", CHANNEL_CARD["ts"])
    assert reply["text"].startswith("<@U0ALICE> asked: *Use spot*\n")


def test_a_label_cannot_ping_or_link(h: Harness) -> None:
    h.action("gpu.pick.0", '{"g":["h100"]}', message_ts=CHANNEL_CARD["ts"], response_url=h.slack.response_url("p"),
             ephemeral=False, message=CHANNEL_CARD, label="<!channel> *H100*")
    [reply] = posted(h, "chat.postMessage")
    line = reply.params["blocks"][0]["elements"][0]["text"]
    assert line == "<@U0ALICE> asked: *&lt;!channel&gt; H100*"


def test_where_the_app_may_not_post_the_clicker_alone_gets_the_answer_at_the_response_url(h: Harness) -> None:
    """A card shared through a response URL into a channel the app is not a member of."""
    h.slack.fail("chat.postMessage", "not_in_channel")
    h.action("whatif.gpus.more", "{}", message_ts=CHANNEL_CARD["ts"], response_url=h.slack.response_url("n"),
             ephemeral=False, message=CHANNEL_CARD, label="More GPUs")
    h.slack.wait_for(lambda calls: any(c.path == "/response/n" for c in calls))
    assert writes(h) == [("chat.postMessage", 200), ("/response/n", 200)]  # the fake's errors answer 200 ok:false
    private = call(h, "/response/n").params
    assert private["response_type"] == "ephemeral" and private["replace_original"] is False
    assert private["text"].startswith("<@U0ALICE> asked: *More GPUs*\n")


def test_a_gone_thread_and_an_expired_response_url_leave_an_ephemeral_message(h: Harness) -> None:
    h.slack.fail("chat.postMessage", "thread_not_found")
    h.slack.expire("gone")
    h.action("whatif.ondemand", "{}", message_ts=CHANNEL_CARD["ts"], response_url=h.slack.response_url("gone"),
             ephemeral=False, message=CHANNEL_CARD)
    posted(h, "chat.postEphemeral")
    assert writes(h) == [("chat.postMessage", 200), ("/response/gone", 404), ("chat.postEphemeral", 200)]
    note = call(h, "chat.postEphemeral").params
    assert (note["channel"], note["user"]) == ("C0GENERAL", "U0ALICE")
    assert note["text"].startswith("<@U0ALICE> asked: *whatif.ondemand*\n")  # the fake's default label


def test_days_old_ephemeral_card_gets_a_fresh_answer_saying_why(h: Harness) -> None:
    h.slack.expire("old")
    h.action("whatif.spot", "{}", message_ts=f"{time.time() - 3 * 86400:.6f}",
             response_url=h.slack.response_url("old"), ephemeral=True)
    posted(h, "chat.postEphemeral")
    assert writes(h) == [("/response/old", 404), ("chat.postEphemeral", 200)]
    fresh = call(h, "chat.postEphemeral").params
    assert (fresh["channel"], fresh["user"]) == ("C0GENERAL", "U0ALICE")
    assert_valid_message(fresh)
    assert "too old to change" in json.dumps(fresh["blocks"])


def test_share_posts_a_copy_and_removes_only_the_sharers_ephemeral_original(h: Harness) -> None:
    value = json.dumps({"q": "fine-tune 13B with QLoRA", "l": "fr"})
    h.action("share", value, message_ts="1700000000.000300", response_url=h.slack.response_url("sh"),
             ephemeral=True)
    h.slack.wait_for(lambda calls: len([c for c in calls if c.path == "/response/sh"]) == 2)
    assert writes(h) == [("/response/sh", 200), ("/response/sh", 200)]
    public, delete = h.slack.responses()
    assert public.params["response_type"] == "in_channel" and public.params["replace_original"] is False
    assert_valid_message(public.params)
    assert "<@U0ALICE>" in json.dumps(public.params["blocks"])
    assert "share" not in [e.get("action_id") for b in public.params["blocks"] for e in b.get("elements", [])]
    assert public.params["text"].startswith("[fr] fine-tune 13B with QLoRA")
    assert delete.params["delete_original"] is True and not delete.params.get("blocks")


def test_share_from_a_message_others_see_posts_a_copy_and_removes_nothing(h: Harness) -> None:
    """A card's own Share button on a thread answer: the thread keeps its card."""
    message = {"type": "message", "ts": "1700000000.000400", "thread_ts": "1700000000.000001", "text": "card"}
    h.action("share", json.dumps({"q": "price h100", "l": "en"}), message_ts=message["ts"],
             response_url=h.slack.response_url("vis"), ephemeral=False, message=message)
    posted(h, "chat.postMessage")
    assert writes(h) == [("chat.postMessage", 200)]
    copy = call(h, "chat.postMessage").params
    assert copy["channel"] == "C0GENERAL" and "thread_ts" not in copy
    assert "<@U0ALICE>" in json.dumps(copy["blocks"])


def test_share_of_an_old_card_posts_with_the_bot_token_and_deletes_nothing(h: Harness) -> None:
    h.slack.expire("gone")
    h.action("share", json.dumps({"q": "price h100", "l": "en"}), message_ts="1.2",
             response_url=h.slack.response_url("gone"), ephemeral=True)
    posted(h, "chat.postMessage")
    assert writes(h) == [("/response/gone", 404), ("chat.postMessage", 200)]
    assert call(h, "chat.postMessage").params["channel"] == "C0GENERAL"


def test_share_where_we_are_not_a_member_tells_the_user_how_to_invite_us(h: Harness) -> None:
    h.slack.expire("gone")
    h.slack.fail("chat.postMessage", "not_in_channel")
    h.action("share", json.dumps({"q": "price h100", "l": "es"}), message_ts="1.2",
             response_url=h.slack.response_url("gone"), ephemeral=True)
    [note] = posted(h, "chat.postEphemeral")
    assert "/invite @GPU Advisor" in note.params["text"] and "Invítame" in note.params["text"]


@pytest.mark.parametrize("action_id", EVERY_BUTTON)
def test_no_button_changes_or_removes_a_channel_message(h: Harness, action_id: str) -> None:
    assert ACTION_ID.match(action_id), "a button id the listeners no longer take"
    h.action(action_id, "{}", message_ts=CHANNEL_CARD["ts"], response_url=h.slack.response_url("any"),
             ephemeral=False, message=CHANNEL_CARD)
    posted(h, "chat.postMessage")
    assert writes(h) == [("chat.postMessage", 200)]
    assert h.slack.visible_changes() == []


def test_unknown_and_link_buttons_are_acknowledged(h: Harness) -> None:
    status, _ = h.action("docs.link", "", message_ts="1.2", response_url=h.slack.response_url("u"), ephemeral=False)
    assert status == 200
    assert h.slack.quiet(0.3)[1:] == []


def test_the_suite_wide_check_catches_a_changed_visible_message() -> None:
    """FakeSlack.stop() fails a test whose app edited a channel message or replaced one through a click's URL."""
    for change in ("chat.update", "replace", "delete"):
        slack = FakeSlack().start()
        slack.clicked(slack.response_url("c"), ephemeral=False)
        slack.clicked(slack.response_url("own"), ephemeral=True)
        WebhookClient(slack.response_url("own")).send_dict({"replace_original": True, "text": "mine"})
        if change == "chat.update":
            WebClient(token="xoxb-1", base_url=slack.api_url).chat_update(channel="C1", ts="1.2", text="x")
        else:
            WebhookClient(slack.response_url("c")).send_dict({f"{change}_original": True, "text": "x"})
        with pytest.raises(AssertionError, match="messages others can see"):
            slack.stop()
