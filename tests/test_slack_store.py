"""The Slack stores on SQLite and PostgreSQL: installations with token rotation, OAuth state, dedupe, threads, prefs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from slack_sdk.oauth.installation_store import Installation

from knowledge.slack_store import (
    DbInstallationStore,
    DbOAuthStateStore,
    ThreadState,
    claim_delivery,
    find_thread_state,
    find_user_pref,
    forget_workspace,
    prune_deliveries,
    save_thread_state,
    save_user_pref,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _install(team: str, token: str, *, user: str = "U1", refresh: str | None = None) -> Installation:
    return Installation(
        app_id="A1", team_id=team, team_name=f"team {team}", user_id=user,
        bot_token=token, bot_id="B1", bot_user_id="UBOT", bot_scopes="commands,chat:write",
        bot_refresh_token=refresh, bot_token_expires_in=43200 if refresh else None,
        installed_at=NOW.timestamp(),
    )


def test_installation_round_trip_keeps_workspaces_apart(engine) -> None:
    store = DbInstallationStore(engine=engine, client_id="111.222")
    store.save(_install("T1", "xoxb-one"))
    store.save(_install("T2", "xoxb-two"))
    found = store.find_installation(enterprise_id=None, team_id="T1")
    assert found is not None and found.bot_token == "xoxb-one" and found.team_id == "T1"
    assert found.bot_scopes == ["commands", "chat:write"]
    bot = store.find_bot(enterprise_id=None, team_id="T2")
    assert bot is not None and bot.bot_token == "xoxb-two"
    assert store.find_bot(enterprise_id=None, team_id="T3") is None
    other_app = DbInstallationStore(engine=engine, client_id="999.999")
    assert other_app.find_bot(enterprise_id=None, team_id="T1") is None


def test_rotated_token_replaces_the_old_one(engine) -> None:
    store = DbInstallationStore(engine=engine, client_id="111.222")
    store.save(_install("T1", "xoxe.xoxb-old", refresh="xoxe-1-old"))
    store.save(_install("T1", "xoxe.xoxb-new", refresh="xoxe-1-new"))
    found = store.find_installation(enterprise_id=None, team_id="T1")
    assert found is not None and found.bot_token == "xoxe.xoxb-new"
    assert found.bot_refresh_token == "xoxe-1-new"
    assert found.bot_token_expires_at is not None and found.bot_token_expires_at > NOW.timestamp()


def test_delete_all_forgets_the_workspace(engine) -> None:
    store = DbInstallationStore(engine=engine, client_id="111.222")
    store.save(_install("T1", "xoxb-one"))
    store.save(_install("T2", "xoxb-two"))
    store.delete_all(enterprise_id=None, team_id="T1")
    assert store.find_installation(enterprise_id=None, team_id="T1") is None
    assert store.find_bot(enterprise_id=None, team_id="T1") is None
    assert store.find_bot(enterprise_id=None, team_id="T2") is not None


def test_oauth_state_is_consumed_once_and_expires(engine) -> None:
    states = DbOAuthStateStore(engine=engine)
    state = states.issue()
    assert states.consume(state) is True
    assert states.consume(state) is False
    assert states.consume("never-issued") is False
    expired = DbOAuthStateStore(engine=engine, expiration_seconds=-1).issue()
    assert states.consume(expired) is False


def test_delivery_is_claimed_once(engine) -> None:
    assert claim_delivery(engine, "event:Ev1", now=NOW) is True
    assert claim_delivery(engine, "event:Ev1", now=NOW) is False
    assert claim_delivery(engine, "event:Ev2", now=NOW) is True
    assert prune_deliveries(engine, now=NOW + timedelta(days=3)) == 2
    assert claim_delivery(engine, "event:Ev1", now=NOW) is True


def test_thread_state_is_kept_per_thread(engine) -> None:
    first = ThreadState(user_id="U1", language="ko", state={"text": "llama 70b 파인튜닝"}, updated_at=NOW)
    save_thread_state(engine, team_id="T1", channel_id="C1", thread_ts="1.1", thread=first)
    second = ThreadState(user_id="U2", language="en", state={"text": "and 32k context"}, updated_at=NOW)
    save_thread_state(engine, team_id="T1", channel_id="C1", thread_ts="1.1", thread=second)
    assert find_thread_state(engine, team_id="T1", channel_id="C1", thread_ts="1.1") == second
    assert find_thread_state(engine, team_id="T1", channel_id="C1", thread_ts="2.2") is None
    assert find_thread_state(engine, team_id="T2", channel_id="C1", thread_ts="1.1") is None


def test_user_prefs_and_forgetting_a_workspace(engine) -> None:
    assert find_user_pref(engine, team_id="T1", user_id="U1") is None
    save_user_pref(engine, team_id="T1", user_id="U1", slack_locale="ja-JP", locale_checked_at=NOW)
    save_user_pref(engine, team_id="T1", user_id="U1", language_override="ko")
    pref = find_user_pref(engine, team_id="T1", user_id="U1")
    assert pref is not None
    assert (pref.language_override, pref.slack_locale, pref.locale_checked_at) == ("ko", "ja-JP", NOW)
    forget_workspace(engine, team_id="T1")
    assert find_user_pref(engine, team_id="T1", user_id="U1") is None
