"""`pause_workspace` (app uninstalled / bot token revoked): digests and alerts paused with the reason, resumed after
a reinstall; on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, ClassVar

from fake_slack_digest import FakeSlack
from sqlalchemy import Engine
from test_digest_data import MONTH_START, play_month, seed_catalog
from test_scheduler import at, slack, snap, subscribe  # noqa: F401  (slack, snap: fixtures)

from bot.digest.commands import handle_alert_command, list_for_user
from bot.digest.scheduler import InstallationTokens, Scheduler, SchedulerConfig
from knowledge import digest_store as store
from knowledge.digest_store import Paused, SubscriptionSettings

NOW = datetime(2025, 6, 2, 8, tzinfo=UTC)
SETTINGS = SubscriptionSettings("daily", 9, 0, "UTC", 0, Decimal(5), Decimal("0.05"), (), "en")


def _sub(engine: Engine, team: str, channel: str) -> None:
    store.upsert_subscription(engine, team_id=team, channel_id=channel, settings=SETTINGS, user_id="U1", now=NOW)


def _alert(engine: Engine, team: str, user: str) -> int:
    alert = store.add_alert(engine, team_id=team, user_id=user, gpu_id="h100-sxm-80gb", op="<",
                            usd_per_gpu_hour=Decimal(2), language="en", now=NOW)
    assert alert.id is not None
    return alert.id


def test_pause_marks_only_this_workspaces_live_digests_and_alerts(engine: Engine) -> None:
    seed_catalog(engine)
    _sub(engine, "T1", "C1")
    _sub(engine, "T1", "C2")
    store.turn_off(engine, team_id="T1", channel_id="C2", now=NOW)
    _sub(engine, "T2", "C9")
    a1, a2, a9 = _alert(engine, "T1", "U1"), _alert(engine, "T1", "U2"), _alert(engine, "T2", "U9")
    store.turn_alert_off(engine, team_id="T1", user_id="U2", short_id=2)  # T1's second alert

    assert store.pause_workspace(engine, team_id="T1", reason="token_revoked", now=NOW) == Paused(1, 1)

    c1 = store.find_subscription(engine, "T1", "C1")
    assert c1 is not None and (c1.status, c1.last_error) == ("paused", "token_revoked")
    assert store.find_subscription(engine, "T1", "C2").status == "off"  # type: ignore[union-attr]
    assert store.find_subscription(engine, "T2", "C9").status == "active"  # type: ignore[union-attr]
    # The scheduler no longer sees C1; lists (App Home, `digest list`) still do, with the reason.
    assert [s.channel_id for s in store.list_subscriptions(engine)] == ["C9"]
    assert [s.channel_id for s in store.list_subscriptions(engine, team_id="T1", include_paused=True)] == ["C1"]
    alerts = {a.id: a for a in store.list_alerts(engine, active_only=False)}
    assert (alerts[a1].armed, alerts[a1].last_error) == (False, "token_revoked")
    assert (alerts[a2].active, alerts[a2].last_error) == (False, None)  # switched off by its owner: untouched
    assert (alerts[a9].armed, alerts[a9].last_error) == (True, None)
    home = list_for_user(engine, snapshot=_NoGpus(), team_id="T1", user_id="U1", lang="en")
    assert home.errors == ("⚠ <#C1>: the app's access to this workspace was revoked: reinstall it.",
                           "⚠ alert #1: the app's access to this workspace was revoked: reinstall it.")

    assert store.resume_workspace(engine, team_id="T1", now=NOW) == Paused(1, 1)
    c1 = store.find_subscription(engine, "T1", "C1")
    assert c1 is not None and (c1.status, c1.last_error) == ("active", None)
    alerts = {a.id: a for a in store.list_alerts(engine, active_only=False)}
    assert (alerts[a1].armed, alerts[a1].last_error) == (True, None)
    assert alerts[a2].active is False and store.find_subscription(engine, "T1", "C2").status == "off"  # type: ignore[union-attr]


def test_turning_off_or_resubscribing_a_paused_digest(engine: Engine) -> None:
    _sub(engine, "T1", "C1")
    _sub(engine, "T1", "C2")
    store.pause_workspace(engine, team_id="T1", reason="app_uninstalled", now=NOW)
    assert store.turn_off(engine, team_id="T1", channel_id="C1", now=NOW)
    _sub(engine, "T1", "C2")  # `/gpu digest daily` again after reinstalling
    c2 = store.find_subscription(engine, "T1", "C2")
    assert c2 is not None and (c2.status, c2.last_error) == ("active", None)


class _NoGpus:
    gpus: ClassVar[dict[str, Any]] = {}


class _Bot:
    def __init__(self, installed: datetime) -> None:
        self.bot_token, self.installed_at = "xoxb-reinstalled", installed.timestamp()


class _Installations:
    """An InstallationStore with one bot, installed at a settable time."""

    def __init__(self, installed: datetime) -> None:
        self.installed = installed

    def find_bot(self, *, enterprise_id: str | None, team_id: str) -> _Bot:
        return _Bot(self.installed)


def test_paused_workspace_posts_nothing_until_reinstalled(engine: Engine, snap: Any, slack: FakeSlack) -> None:  # noqa: F811
    play_month(engine, days=1)
    subscribe(engine, snap, "daily 09:00")
    r = handle_alert_command("h100 sxm < 900", engine=engine, snapshot=snap, team_id="T1", user_id="U7", lang="en")
    assert r.ok, r.text  # every H100 price is under $900/GPU-hour: it fires as soon as it may
    paused_at = MONTH_START + timedelta(hours=2)
    store.pause_workspace(engine, team_id="T1", reason="token_revoked", now=paused_at)
    installs = _Installations(installed=paused_at - timedelta(days=30))  # the old install: still paused
    s = Scheduler(engine=engine, tokens=InstallationTokens(installs), catalog=lambda: snap,
                  cfg=SchedulerConfig(api_url=slack.url, worker="w1"))
    report = s.run_once(at(0))
    assert report.outcomes == {} and report.alerts_fired == []
    assert store.period_rows(engine) == [] and slack.state.posts("C1") == [] and slack.state.posts("U7") == []

    installs.installed = paused_at + timedelta(hours=1)  # reinstalled after the pause
    report = s.run_once(at(0, 10))
    assert list(report.outcomes) == ["resumed", "empty"]  # nothing over 5 % changed since subscribing on day 0
    assert report.alerts_fired == [r.data["alert"]["id"]]
    assert len(slack.state.posts("U7")) == 1
    assert [p.period_key for p in store.period_rows(engine)] == ["2025-05-01"]
