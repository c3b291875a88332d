"""manifest.json agrees with the app: scopes, events with a listener, the command, interactivity, App Home."""

from __future__ import annotations

import json
from pathlib import Path

from bot.slack.app import BOT_SCOPES

MANIFEST = json.loads((Path(__file__).parent.parent / "manifest.json").read_text(encoding="utf-8"))

# Each event needs its scope (https://api.slack.com/events): message.channels needs channels:history,
# message.groups groups:history, message.im im:history, app_mention app_mentions:read.
EVENT_SCOPES = {"message.channels": "channels:history", "message.groups": "groups:history",
                "message.im": "im:history", "app_mention": "app_mentions:read"}


def test_scopes_are_the_ones_the_oauth_flow_requests() -> None:
    assert sorted(MANIFEST["oauth_config"]["scopes"]["bot"]) == sorted(BOT_SCOPES)


def test_every_event_has_its_scope_and_a_listener() -> None:
    events = MANIFEST["settings"]["event_subscriptions"]["bot_events"]
    for event in events:
        if event in EVENT_SCOPES:
            assert EVENT_SCOPES[event] in BOT_SCOPES, event
    listened = {"message", "app_mention", "app_home_opened", "app_uninstalled", "tokens_revoked"}
    assert {e.split(".")[0] for e in events} == listened


def test_command_interactivity_and_home() -> None:
    [command] = MANIFEST["features"]["slash_commands"]
    assert command["command"] == "/gpu" and command["usage_hint"]
    for word in ("compare", "price", "specs", "digest", "alert", "lang", "help"):
        assert word in command["usage_hint"]
    assert command["url"].endswith("/slack/events")
    assert MANIFEST["settings"]["interactivity"]["is_enabled"] is True
    assert MANIFEST["features"]["app_home"]["home_tab_enabled"] is True
    assert MANIFEST["features"]["app_home"]["messages_tab_enabled"] is True
    assert MANIFEST["oauth_config"]["redirect_urls"][0].endswith("/slack/oauth_redirect")
