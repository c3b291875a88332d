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
    """The team's digest for CHANNEL and one alert; the alert's number in the team."""
    store.upsert_subscription(engine, team_id=team, channel_id=CHANNEL, settings=SETTINGS, user_id=USER, now=NOW)
    alert = store.add_alert(engine, team_id=team, user_id=USER, gpu_id=gpu, op="<", usd_per_gpu_hour=Decimal(2),
                            language="en", now=NOW)
    return alert.short_id


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
    assert not store.turn_alert_off(engine, team_id=B, user_id=USER, short_id=alert_a + 1)  # B has only #1
    assert [s.team_id for s in store.list_subscriptions(engine)] == [A]
    assert [a.short_id for a in store.list_alerts(engine, team_id=A)] == [alert_a]
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
    assert [a.short_id for a in store.list_alerts(engine, team_id=A)] == [alert_a]
    assert [s.team_id for s in store.list_subscriptions(engine)] == [A]
    assert "H100" in run(A, "alert", "list")


def test_each_workspace_numbers_its_own_digests_and_alerts_from_one(loaded_engine: Any, snapshot: Any) -> None:
    """Ids shown to a workspace are its own numbers: after A made five alerts and two digests, B's first
    alert is still #1 and its first digest 1, and no answer to B carries A's numbers, counts or data."""
    engine = loaded_engine
    services = Services(engine=engine, core=FakeCore(), clock=lambda: NOW)

    def run(team: str, subcommand: str, text: str, channel: str = CHANNEL) -> Any:
        return digest_command(services, subcommand=subcommand, text=text, snapshot=snapshot, team_id=team,
                              channel_id=channel, user_id=USER, lang="en")

    for _ in range(5):
        run(A, "alert", "h100 < 2")
    run(A, "digest", "daily 09:00", channel="C0AONE")
    run(A, "digest", "daily 10:00", channel="C0ATWO")
    assert "Alert #1:" in run(B, "alert", "a100 80gb < 1.5").text
    listed = run(B, "alert", "list").text
    assert "#1 " in listed and "#2" not in listed and "#5" not in listed and "H100" not in listed
    assert [a.short_id for a in store.list_alerts(engine, team_id=A)] == [1, 2, 3, 4, 5]
    run(B, "digest", "daily 08:00")
    assert [(s.channel_id, s.short_id) for s in store.list_subscriptions(engine, team_id=B)] == [(CHANNEL, 1)]
    assert [(s.channel_id, s.short_id) for s in store.list_subscriptions(engine, team_id=A)] == [
        ("C0AONE", 1), ("C0ATWO", 2)]
    # B switches off "alert 3" (A has one, B does not): refused, and A's #3 stays on.
    # The same answer as for a number nobody has: B learns nothing about A's alerts.
    assert run(B, "alert", "off 3").text.replace("#3", "#N") == run(B, "alert", "off 4000").text.replace("#4000", "#N")
    assert [a.short_id for a in store.list_alerts(engine, team_id=A)] == [1, 2, 3, 4, 5]
    # A number beyond the column (PostgreSQL's integer) is simply no alert of B's, not a database error.
    assert run(B, "alert", "off 99999999999999999999").text == "You have no active alert #99999999999999999999."
    assert "A0" not in run(B, "digest", "list").text and "C0AONE" not in run(B, "digest", "list").text


def test_alert_numbers_stay_unique_when_two_processes_add_at_once(loaded_engine: Any) -> None:
    """Eight threads each add alerts in one team at the same time: every alert gets its own number, 1 to 24."""
    from concurrent.futures import ThreadPoolExecutor

    def add(_: int) -> list[int]:
        return [store.add_alert(loaded_engine, team_id=A, user_id=USER, gpu_id="h100-sxm-80gb", op="<",
                                usd_per_gpu_hour=Decimal(2), language="en", now=NOW).short_id for _ in range(3)]

    with ThreadPoolExecutor(8) as pool:
        numbers = [n for batch in pool.map(add, range(8)) for n in batch]
    assert sorted(numbers) == list(range(1, 25))


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


def test_a_digest_in_the_channel_is_ours_by_team_and_number_or_by_the_id_it_carried_before() -> None:
    """Restart recovery reads our digests' metadata: in a channel shared by two workspaces both number from 1."""
    from bot.digest.scheduler import is_our_digest
    from knowledge.digest_tables import DigestSubscription

    sub = DigestSubscription(id=41, team_id=A, short_id=2, channel_id=CHANNEL)
    period = "2026-06-01"
    assert is_our_digest({"team_id": A, "subscription_id": 2, "period": period}, sub, period)
    assert not is_our_digest({"team_id": B, "subscription_id": 2, "period": period}, sub, period)
    assert not is_our_digest({"team_id": A, "subscription_id": 2, "period": "2026-05-31"}, sub, period)
    assert is_our_digest({"subscription_id": 41, "period": period}, sub, period)  # posted before migration 0007
    assert not is_our_digest({"subscription_id": 2, "period": period}, sub, period)
