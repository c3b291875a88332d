"""Buttons over HTTP: update in place (response URL or chat.update), fresh card when the old one can't change, share."""

from __future__ import annotations

import json
import time
from datetime import UTC

import pytest
from fake_slack import Harness, assert_valid_message, harness, posted


@pytest.fixture
def h(engine):
    yield from harness(engine)

def test_button_on_an_ephemeral_card_replaces_it_through_the_response_url(h: Harness) -> None:
    status, _ = h.action("whatif.method.qlora", '{"w":{"params_b":13}}', message_ts="1700000000.000100",
                         response_url=h.slack.response_url("act"), ephemeral=True)
    assert status == 200
    h.slack.wait_for(lambda calls: any(c.path == "/response/act" for c in calls))
    [call] = h.slack.responses()
    assert call.params["replace_original"] is True
    assert_valid_message(call.params)
    assert h.core.calls == [{"action": "whatif.method.qlora", "value": '{"w":{"params_b":13}}', "lang": "en"}]


def test_button_on_a_thread_card_is_updated_with_chat_update_in_the_threads_language(h: Harness) -> None:
    from datetime import datetime

    from knowledge.slack_store import ThreadState, save_thread_state

    save_thread_state(h.engine, team_id="T0TEAM", channel_id="C0GENERAL", thread_ts="1700000000.000001",
                      thread=ThreadState("U0ALICE", "de", {}, datetime.now(UTC)))
    message = {"type": "message", "ts": "1700000000.000200", "thread_ts": "1700000000.000001",
               "bot_id": "B0BOT", "text": "card"}
    h.action("compare.top2", "{}", message_ts="1700000000.000200", response_url=h.slack.response_url("t"),
             ephemeral=False, message=message)
    [update] = posted(h, "chat.update")
    assert (update.params["channel"], update.params["ts"]) == ("C0GENERAL", "1700000000.000200")
    assert update.params["text"].startswith("[de]")
    assert_valid_message(update.params)


def test_days_old_ephemeral_card_gets_a_fresh_answer_saying_why(h: Harness) -> None:
    h.slack.expire("old")
    h.action("whatif.spot", "{}", message_ts=f"{time.time() - 3 * 86400:.6f}",
             response_url=h.slack.response_url("old"), ephemeral=True)
    [fresh] = posted(h, "chat.postEphemeral")
    assert (fresh.params["channel"], fresh.params["user"]) == ("C0GENERAL", "U0ALICE")
    assert_valid_message(fresh.params)
    assert "too old to change" in json.dumps(fresh.params["blocks"])


def test_deleted_channel_card_gets_a_fresh_answer(h: Harness) -> None:
    h.slack.fail("chat.update", "message_not_found")
    h.action("whatif.spot", "{}", message_ts="1600000000.000100", response_url=h.slack.response_url("x"),
             ephemeral=False, message={"type": "message", "ts": "1600000000.000100", "text": "card"})
    [fresh] = posted(h, "chat.postEphemeral")
    assert fresh.params["user"] == "U0ALICE"


def test_share_reposts_in_channel_and_removes_the_ephemeral(h: Harness) -> None:
    value = json.dumps({"q": "fine-tune 13B with QLoRA", "l": "fr"})
    h.action("share", value, message_ts="1700000000.000300", response_url=h.slack.response_url("sh"),
             ephemeral=True)
    h.slack.wait_for(lambda calls: len([c for c in calls if c.path == "/response/sh"]) == 2)
    public, delete = h.slack.responses()
    assert public.params["response_type"] == "in_channel" and public.params["replace_original"] is False
    assert_valid_message(public.params)
    assert "<@U0ALICE>" in json.dumps(public.params["blocks"])
    assert "share" not in [e.get("action_id") for b in public.params["blocks"] for e in b.get("elements", [])]
    assert public.params["text"].startswith("[fr] fine-tune 13B with QLoRA")
    assert delete.params["delete_original"] is True


def test_share_of_an_old_card_posts_with_the_bot_token(h: Harness) -> None:
    h.slack.expire("gone")
    h.action("share", json.dumps({"q": "price h100", "l": "en"}), message_ts="1.2",
             response_url=h.slack.response_url("gone"), ephemeral=True)
    [message] = posted(h, "chat.postMessage")
    assert message.params["channel"] == "C0GENERAL"


def test_share_where_we_are_not_a_member_tells_the_user_how_to_invite_us(h: Harness) -> None:
    h.slack.expire("gone")
    h.slack.fail("chat.postMessage", "not_in_channel")
    h.action("share", json.dumps({"q": "price h100", "l": "es"}), message_ts="1.2",
             response_url=h.slack.response_url("gone"), ephemeral=True)
    [note] = posted(h, "chat.postEphemeral")
    assert "/invite @GPU Advisor" in note.params["text"] and "Invítame" in note.params["text"]


def test_unknown_and_link_buttons_are_acknowledged(h: Harness) -> None:
    status, _ = h.action("docs.link", "", message_ts="1.2", response_url=h.slack.response_url("u"), ephemeral=False)
    assert status == 200
    assert h.slack.quiet(0.3)[1:] == []
