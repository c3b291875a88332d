"""The real app over HTTP: signed requests shaped as Slack sends them, a fake Web API that records calls."""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass

import pytest
from fake_slack import (
    Harness,
    assert_valid_message,
    harness,
    post,
    signed_headers,
    slash_command_body,
)

from knowledge.slack_store import find_user_pref

# --- verification ------------------------------------------------------------------------------



@pytest.fixture
def h(engine):
    yield from harness(engine)

def test_url_verification_echoes_the_challenge(h: Harness) -> None:
    body = json.dumps({"token": "Jhj5dZrVaK7ZwHHjRyZWjbDl", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", "type": "url_verification"})
    status, text = post(h.server.port, body, signed_headers(body, content_type="application/json"))
    assert status == 200 and "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" in text


@pytest.mark.parametrize("how", ["forged", "stale", "unsigned"])
def test_bad_signature_is_refused_and_nothing_happens(h: Harness, how: str) -> None:
    body = slash_command_body("h100 price", response_url=h.slack.response_url("x"))
    if how == "forged":
        headers = signed_headers(body, secret="not-the-secret")
    elif how == "stale":  # Bolt refuses timestamps more than 5 minutes old (replay protection)
        headers = signed_headers(body, timestamp=int(time.time()) - 6 * 60)
    else:
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
    status, _ = post(h.server.port, body, headers)
    assert status == 401
    calls = h.slack.quiet(0.3)
    assert [c.method for c in calls] == ["auth.test"]  # only the start-up check of our token
    assert h.core.calls == []


# --- /gpu ------------------------------------------------------------------------------------------


def test_slash_command_answers_ephemerally_with_a_share_button(h: Harness) -> None:
    status, _ = h.command("fine-tune 13B with QLoRA on a budget")
    assert status == 200
    [call] = h.slack.wait_for(lambda calls: any(c.path == "/response/cmd1" for c in calls)) and h.slack.responses()
    assert call.params["response_type"] == "ephemeral"
    assert_valid_message(call.params)
    assert "fine-tune 13B with QLoRA on a budget" in call.params["text"]
    share = [e for b in call.params["blocks"] if b["type"] == "actions" for e in b["elements"] if e["action_id"] == "share"]
    assert len(share) == 1
    assert json.loads(share[0]["value"]) == {"q": "fine-tune 13B with QLoRA on a budget", "l": "en"}


def test_empty_command_is_help_without_share(h: Harness) -> None:
    h.command("")
    h.slack.wait_for(lambda calls: any(c.path.startswith("/response/") for c in calls))
    [call] = h.slack.responses()
    assert h.core.calls[0]["text"] == "help"
    assert not any(b["type"] == "actions" and any(e["action_id"] == "share" for e in b["elements"]) for b in call.params["blocks"])


def test_subcommands_go_to_the_core_as_text(h: Harness) -> None:
    for i, text in enumerate(["compare H100 vs H200", "price 4090", "specs L40S", "help"]):
        h.command(text, name=f"c{i}")
    h.slack.wait_for(lambda calls: len([c for c in calls if c.path.startswith("/response/")]) == 4)
    assert sorted(c["text"] for c in h.core.calls) == sorted(["compare H100 vs H200", "price 4090", "specs L40S", "help"])


def test_language_from_slack_locale_is_cached(h: Harness) -> None:
    h.command("price h100", user="U0JUN", name="a")
    h.slack.wait_for(lambda calls: any(c.path == "/response/a" for c in calls))
    h.command("specs a100", user="U0JUN", name="b")
    h.slack.wait_for(lambda calls: any(c.path == "/response/b" for c in calls))
    assert [c["lang"] for c in h.core.calls] == ["ja", "ja"]
    assert len(h.slack.api_calls("users.info")) == 1
    assert h.slack.api_calls("users.info")[0].params["include_locale"] in ("true", "1", True)


def test_lang_override_is_stored_and_the_question_language_still_wins(h: Harness) -> None:
    h.command("lang ko", name="set")
    h.slack.wait_for(lambda calls: any(c.path == "/response/set" for c in calls))
    confirmation = h.slack.responses()[0].params
    assert "한국어" in confirmation["text"]
    pref = find_user_pref(h.engine, team_id="T0TEAM", user_id="U0ALICE")
    assert pref is not None and pref.language_override == "ko"
    h.command("price h100", name="q1")
    h.command("用QLoRA微调Qwen2.5-14B，预算有限", name="q2")
    h.slack.wait_for(lambda calls: len([c for c in calls if c.path.startswith("/response/q")]) == 2)
    langs = {c["text"]: c["lang"] for c in h.core.calls}
    assert langs == {"price h100": "ko", "用QLoRA微调Qwen2.5-14B，预算有限": "zh-Hans"}


def test_lang_with_an_unknown_language_lists_the_choices(h: Harness) -> None:
    h.command("lang klingon", name="bad")
    h.slack.wait_for(lambda calls: any(c.path == "/response/bad" for c in calls))
    text = h.slack.responses()[0].params["text"]
    assert "klingon" in text and "`ko`" in text and "`vi`" in text
    assert find_user_pref(h.engine, team_id="T0TEAM", user_id="U0ALICE").language_override is None


def _lang_reply(h: Harness, text: str, *, user: str = "U0ALICE", name: str) -> dict:
    h.command(text, user=user, name=name)
    h.slack.wait_for(lambda calls: any(c.path == f"/response/{name}" for c in calls))
    [reply] = [c.params for c in h.slack.responses() if c.path == f"/response/{name}"]
    assert_valid_message(reply)
    return reply


def test_lang_alone_shows_the_automatic_setting_and_every_choice(h: Harness) -> None:
    text = _lang_reply(h, "lang", user="U0MIN", name="show")["text"]
    assert "`?`" not in text
    assert "한국어" in text  # U0MIN's Slack locale is ko-KR: the setting named, in Korean
    assert all(f"`{tag}`" in text for tag in ("en", "zh-Hans", "ko", "ja", "es", "de", "fr", "vi", "auto"))
    assert find_user_pref(h.engine, team_id="T0TEAM", user_id="U0MIN").language_override is None


def test_lang_alone_shows_an_override_and_the_slack_language_it_hides(h: Harness) -> None:
    _lang_reply(h, "lang de", name="set")
    text = _lang_reply(h, "lang", name="show")["text"]
    assert "Deutsch" in text and "English" in text  # the choice, and U0ALICE's Slack language (en-US) behind it
    assert "`/gpu lang auto`" in text and "`fr`" in text
    assert find_user_pref(h.engine, team_id="T0TEAM", user_id="U0ALICE").language_override == "de"


def test_lang_auto_clears_the_override_and_says_what_it_detects_from(h: Harness) -> None:
    _lang_reply(h, "lang de", name="set")
    text = _lang_reply(h, "lang auto", name="auto")["text"]
    assert find_user_pref(h.engine, team_id="T0TEAM", user_id="U0ALICE").language_override is None
    # in the Slack language now in force (en-US), naming it, not the cleared German
    assert "English" in text and "Deutsch" not in text
    assert "script" in text and "words" in text and "names" in text  # what it detects from, and what not


def test_digest_without_the_digest_feature_says_not_available(h: Harness, monkeypatch) -> None:
    from bot.slack import digest_bridge

    monkeypatch.setattr(digest_bridge, "_find", lambda module, name: None)
    h.command("digest daily 9:00", user="U0MIN", name="d")
    h.slack.wait_for(lambda calls: any(c.path == "/response/d" for c in calls))
    params = h.slack.responses()[0].params
    assert_valid_message(params)
    assert "요약" in params["text"]  # Korean, from the user's Slack locale
    assert h.core.calls == []


def test_digest_and_alert_go_to_the_digest_helper(h: Harness, monkeypatch) -> None:

    from bot.slack import digest_bridge

    seen = []

    @dataclass
    class Result:
        text: str

    def handler(name):
        def handle(text, **kw):
            seen.append((name, text, kw["team_id"], kw["channel_id"], kw["user_id"], kw["lang"]))
            return Result("done <!channel> in <#C0GENERAL>")
        return handle

    monkeypatch.setattr(digest_bridge, "_find", lambda module, name: handler(name))
    h.command("alert H100 < $2/hr", name="al")
    h.command("digest weekly mon 9:00", user="U0MIN", name="dg")
    h.slack.wait_for(lambda calls: len([c for c in calls if c.path.startswith("/response/")]) == 2)
    assert sorted(seen) == [
        ("handle_alert_command", "H100 < $2/hr", "T0TEAM", "C0GENERAL", "U0ALICE", "en"),
        ("handle_digest_command", "weekly mon 9:00", "T0TEAM", "C0GENERAL", "U0MIN", "ko"),
    ]
    text = h.slack.responses()[0].params["text"]
    assert "&lt;!channel>" in text and "<#C0GENERAL>" in text  # no @channel ping, channel link kept


def test_a_failure_is_answered_in_the_users_language_with_a_reference(h: Harness, caplog) -> None:
    h.core.fail_with = RuntimeError("boom")
    caplog.set_level(logging.ERROR)
    h.command("price h100", user="U0JUN", name="err")
    h.slack.wait_for(lambda calls: any(c.path == "/response/err" for c in calls))
    params = h.slack.responses()[0].params
    assert "申し訳ありません" in params["text"] and params["response_type"] == "ephemeral"
    reference = re.search(r"13345224609\.\d+\.[0-9a-f]{31}", params["text"])  # the trigger id (one per command)
    assert reference
    assert "boom" not in params["text"]
    assert any(reference.group(0) in r.getMessage() for r in caplog.records)


def test_slack_escapes_are_undone_exactly_once() -> None:
    """Slack sends a typed `&lt;b&gt;` as `&amp;lt;b&amp;gt;`: the parser must see what was typed."""
    from bot.parse.text import clean_text as parser_text
    from bot.slack.conversation import clean_text

    seen, _ = parser_text(clean_text("<@U123> compare h100 &amp;lt;b&amp;gt; &lt;3"))
    assert seen.split() == ["compare", "h100", "&lt;b&gt;", "<3"]
