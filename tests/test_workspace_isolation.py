"""One workspace never sees or changes another's: subscriptions, alerts, threads, preferences, installations,
queued requests. Two teams use the same channel, user and message ids (Enterprise Grid and shared channels
make that real), so any query missing its team filter shows up here. Both backends."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from fake_slack import FakeCore
from slack_sdk.oauth.installation_store import Bot

from bot.slack.digest_bridge import digest_command
from bot.slack.services import Services
from knowledge import digest_store as store
from knowledge.digest_store import SubscriptionSettings
from knowledge.secret_box import SecretBox, new_key
from knowledge.slack_requests import NewRequest, record_request, request_state
from knowledge.slack_store import (
    DbInstallationStore,
    ThreadState,
    find_thread_state,
    find_user_pref,
    forget_workspace,
    save_thread_state,
    save_user_pref,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
A, B = "T0AAAA", "T0BBBB"
CHANNEL, USER, TS = "C0SHARED", "U0SAME", "1700000000.000100"
SETTINGS = SubscriptionSettings("daily", 9, 0, "UTC", 0, Decimal(5), Decimal("0.05"), (), "en")


def _subscribe_and_alert(engine: Any, team: str, gpu: str) -> int:
    store.upsert_subscription(engine, team_id=team, channel_id=CHANNEL, settings=SETTINGS, user_id=USER, now=NOW)
    alert = store.add_alert(engine, team_id=team, user_id=USER, gpu_id=gpu, op="<", usd_per_gpu_hour=Decimal(2),
                            language="en", now=NOW)
    return store.stored_id(alert)


def test_subscriptions_and_alerts_are_read_and_changed_per_workspace(loaded_engine: Any) -> None:
    engine = loaded_engine
    alert_a = _subscribe_and_alert(engine, A, "h100-sxm-80gb")
    _subscribe_and_alert(engine, B, "a100-sxm-80gb")
    assert [s.team_id for s in store.list_subscriptions(engine, team_id=B)] == [B]
    assert [a.gpu_id for a in store.list_alerts(engine, team_id=B, user_id=USER)] == ["a100-sxm-80gb"]
    found = store.find_subscription(engine, B, CHANNEL)
    assert found is not None and found.team_id == B
    # B turns off "its" digest and tries A's alert id: only B's digest stops, A's alert stays armed.
    assert store.turn_off(engine, team_id=B, channel_id=CHANNEL, now=NOW)
    assert not store.turn_alert_off(engine, team_id=B, user_id=USER, alert_id=alert_a)
    assert [s.team_id for s in store.list_subscriptions(engine)] == [A]
    assert [a.id for a in store.list_alerts(engine, team_id=A)] == [alert_a]
    store.pause_workspace(engine, team_id=B, reason="token_revoked", now=NOW)
    assert [a.team_id for a in store.list_alerts(engine) if a.last_error is None] == [A]


def test_a_slash_command_from_one_workspace_cannot_list_or_switch_off_anothers(loaded_engine: Any, snapshot: Any) -> None:
    """Through the same code path `/gpu digest list` and `/gpu alert off ID` take in Slack."""
    engine = loaded_engine
    alert_a = _subscribe_and_alert(engine, A, "h100-sxm-80gb")
    services = Services(engine=engine, core=FakeCore(), clock=lambda: NOW)

    def run(team: str, subcommand: str, text: str) -> str:
        return digest_command(services, subcommand=subcommand, text=text, snapshot=snapshot, team_id=team,
                              channel_id=CHANNEL, user_id=USER, lang="en").text

    listed_by_b = run(B, "alert", "list") + run(B, "digest", "list")
    assert "H100" not in listed_by_b and "$2" not in listed_by_b
    run(B, "alert", f"off {alert_a}")
    run(B, "digest", "off")
    assert [a.id for a in store.list_alerts(engine, team_id=A)] == [alert_a]
    assert [s.team_id for s in store.list_subscriptions(engine)] == [A]
    assert "H100" in run(A, "alert", "list")


def test_threads_and_preferences_are_keyed_by_workspace(engine: Any) -> None:
    save_thread_state(engine, team_id=A, channel_id=CHANNEL, thread_ts=TS,
                      thread=ThreadState(user_id=USER, language="ko", state={"texts": ["a's question"]}, updated_at=NOW))
    save_user_pref(engine, team_id=A, user_id=USER, language_override="ja")
    assert find_thread_state(engine, team_id=B, channel_id=CHANNEL, thread_ts=TS) is None
    assert find_user_pref(engine, team_id=B, user_id=USER) is None
    save_user_pref(engine, team_id=B, user_id=USER, language_override="de")
    forget_workspace(engine, team_id=B)  # B uninstalls
    thread = find_thread_state(engine, team_id=A, channel_id=CHANNEL, thread_ts=TS)
    assert thread is not None and thread.state == {"texts": ["a's question"]}
    pref = find_user_pref(engine, team_id=A, user_id=USER)
    assert pref is not None and pref.language_override == "ja"


def test_installations_give_each_workspace_its_own_token_only(engine: Any) -> None:
    installs = DbInstallationStore(engine=engine, client_id="111.222", box=SecretBox([new_key()], source="test"))
    for team, token in ((A, "xoxb-team-a"), (B, "xoxb-team-b")):
        installs.save_bot(Bot(team_id=team, bot_token=token, bot_id="B0", bot_user_id="U0BOT", installed_at=time.time()))
    bot_b = installs.find_bot(enterprise_id=None, team_id=B)
    assert bot_b is not None and bot_b.bot_token == "xoxb-team-b"
    installs.delete_all(enterprise_id=None, team_id=B)
    assert installs.find_bot(enterprise_id=None, team_id=B) is None
    bot_a = installs.find_bot(enterprise_id=None, team_id=A)
    assert bot_a is not None and bot_a.bot_token == "xoxb-team-a"


def test_the_same_slack_id_in_two_workspaces_is_two_requests(engine: Any) -> None:
    box = SecretBox([new_key()], source="test")
    for team in (A, B):
        assert record_request(engine, NewRequest(f"{team}:ev:Ev1", team, "event", "http", "{}", {}), box=box, now=NOW)
    assert request_state(engine, f"{A}:ev:Ev1") == request_state(engine, f"{B}:ev:Ev1") == ("queued", None, 0)
