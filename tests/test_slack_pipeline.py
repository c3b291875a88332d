"""The Slack app on the real answering pipeline (catalog, parser, engine, cards) over signed HTTP."""

from __future__ import annotations

import json

import pytest
from fake_slack import FakeSlack, Harness, assert_valid_message, posted, start_harness

from bot.render.limits import check_message
from bot.slack.core import PipelineCore, snapshot_holder


@pytest.fixture
def real(loaded_engine):
    slack = FakeSlack(locales={"U0MIN": "ko-KR", "U0JUN": "ja-JP"}).start()
    snapshots = snapshot_holder(loaded_engine)
    server = start_harness(loaded_engine, slack, PipelineCore(snapshots), snapshots)
    yield Harness(slack, None, server, loaded_engine)  # type: ignore[arg-type]
    server.stop()
    slack.stop()


def _valid(params: dict) -> None:
    assert_valid_message(params)
    assert check_message({"text": params["text"], "blocks": params["blocks"]}) == []


def test_slash_command_recommendation_is_a_valid_card_with_share(real: Harness) -> None:
    real.command("fine-tune llama 3.1 8b with qlora on a budget", name="r")
    real.slack.wait_for(lambda calls: any(c.path == "/response/r" for c in calls))
    [call] = real.slack.responses()
    _valid(call.params)
    ids = [e.get("action_id") for b in call.params["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert ids.count("share") == 1


def test_korean_question_in_a_dm_is_answered_in_korean_and_followed_up(real: Harness) -> None:
    event = {"type": "message", "channel": "D0MIN", "channel_type": "im", "user": "U0JUN",
             "text": "QLoRA로 라마 3.1 8B 파인튜닝하려면 어떤 GPU가 좋아요?", "ts": "1700000001.000100"}
    real.event(event, event_id="Ev1")
    [first] = posted(real, "chat.postMessage")
    _valid(first.params)
    assert any("\uac00" <= ch <= "\ud7af" for ch in first.params["text"])  # Hangul, not the ja locale


def test_price_subcommand_uses_the_slack_locale(real: Harness) -> None:
    real.command("price h100", user="U0JUN", name="p")
    real.slack.wait_for(lambda calls: any(c.path == "/response/p" for c in calls))
    [call] = real.slack.responses()
    _valid(call.params)
    text = json.dumps(call.params["blocks"], ensure_ascii=False)
    assert any("\u3040" <= ch <= "\u30ff" for ch in text)  # kana: a Japanese card


def test_what_if_button_updates_the_card_in_place(real: Harness) -> None:
    real.command("fine-tune llama 3.1 8b with lora", name="c")
    real.slack.wait_for(lambda calls: any(c.path == "/response/c" for c in calls))
    card = real.slack.responses()[0].params
    _valid(card)
    [button, *_] = [e for b in card["blocks"] if b["type"] == "actions" for e in b["elements"]
                    if e.get("action_id", "").startswith("whatif.")]
    real.action(button["action_id"], button["value"], message_ts="1700000002.000100",
                response_url=real.slack.response_url("c2"), ephemeral=True)
    real.slack.wait_for(lambda calls: any(c.path == "/response/c2" for c in calls))
    update = [c for c in real.slack.responses() if c.path == "/response/c2"][0]
    assert update.params["replace_original"] is True
    _valid(update.params)
    assert update.params["blocks"] != card["blocks"]


def test_what_if_on_a_shared_card_answers_in_its_thread_with_a_valid_card(real: Harness) -> None:
    """The real card shared in a channel: the what-if comes back as a thread reply; the shared card stays."""
    real.command("fine-tune llama 3.1 8b with lora", name="c")
    real.slack.wait_for(lambda calls: any(c.path == "/response/c" for c in calls))
    card = real.slack.responses()[0].params
    [button, *_] = [e for b in card["blocks"] if b["type"] == "actions" for e in b["elements"]
                    if e.get("action_id", "").startswith("whatif.")]
    shared = {"type": "message", "ts": "1700000003.000100", "text": card["text"], "blocks": card["blocks"]}
    real.action(button["action_id"], button["value"], message_ts=shared["ts"], message=shared, ephemeral=False,
                response_url=real.slack.response_url("c3"), label=button["text"]["text"])
    [reply] = posted(real, "chat.postMessage")
    _valid(reply.params)
    assert reply.params["thread_ts"] == shared["ts"]
    # Who asked and which button (the line's language is the card's as detected from its text: issue 21 item 2).
    line = reply.params["blocks"][0]["elements"][0]["text"]
    assert line.startswith("<@U0ALICE> ") and line.endswith(f"*{button['text']['text']}*")
    assert reply.params["blocks"][1:] != card["blocks"]
    assert [c.path for c in real.slack.quiet(0.3) if c.path == "/response/c3"] == []
