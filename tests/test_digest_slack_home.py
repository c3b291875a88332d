"""App Home shows digest/alert delivery problems in the user's language; `/gpu digest` uses the user's Slack time zone.

Run against the fake Slack Web API (tests/fake_slack.py) with the real app over HTTP, as tests/test_slack_http.py does.
"""

from __future__ import annotations

import csv
import time
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar

import pytest
from babel.numbers import format_currency
from fake_slack import FakeCore, FakeSlack, Harness, posted, start_harness
from slack_sdk import WebClient
from test_digest_data import seed_catalog

from bot.slack.digest_bridge import digest_command
from bot.slack.services import Services
from knowledge import digest_store as store
from knowledge import tables
from knowledge.digest_store import SubscriptionSettings
from knowledge.snapshot import build_snapshot, gpu_spec

NOW = datetime(2025, 6, 2, 8, tzinfo=UTC)
GPUS_CSV = Path(__file__).resolve().parents[1] / "knowledge" / "data" / "gpus.csv"
TEAM = "T0TEAM"  # the fake's workspace


class TzFakeSlack(FakeSlack):
    """The fake Web API, with `tz` in users.info as Slack sends it (https://api.slack.com/methods/users.info)."""

    zones: ClassVar[dict[str, str]] = {"U0MIN": "Asia/Seoul", "U0HANS": "Europe/Berlin"}

    def _success(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        out = FakeSlack._success(self, method, params)
        if method == "users.info" and str(params.get("user")) in self.zones:
            out["user"]["tz"] = self.zones[str(params.get("user"))]
        return out


class Holder:
    def __init__(self, snapshot: Any) -> None:
        self.snapshot = snapshot

    def current(self) -> Any:
        return self.snapshot


@pytest.fixture(scope="module")
def snap():  # type: ignore[no-untyped-def]
    rows = [tables.GpuBase.model_validate({k: (None if v == "" else v) for k, v in r.items()})
            for r in csv.DictReader(GPUS_CSV.open(encoding="utf-8"))]
    return build_snapshot(gpus=[gpu_spec(r) for r in rows])


@pytest.fixture
def h(engine, snap):  # type: ignore[no-untyped-def]
    slack = TzFakeSlack(locales={"U0MIN": "ko-KR", "U0HANS": "de-DE"}).start()
    core = FakeCore()
    server = start_harness(engine, slack, core, snapshots=Holder(snap))
    yield Harness(slack, core, server, engine)
    server.stop()
    slack.stop()


def _subscribe(engine: Any, channel: str, user: str, error: str | None = None) -> None:
    settings = SubscriptionSettings("daily", 9, 0, "UTC", 0, Decimal(5), Decimal("0.05"), (), "ko")
    sub = store.upsert_subscription(engine, team_id=TEAM, channel_id=channel, settings=settings, user_id=user, now=NOW)
    if error:
        assert sub.id is not None
        store.record_error(engine, sub.id, error, NOW)


def _home_text(h: Harness, user: str) -> str:
    h.event({"type": "app_home_opened", "user": user, "channel": "D0" + user, "tab": "home",
             "event_ts": f"{time.time():.6f}"}, event_id=f"Ev{user}")
    [publish] = posted(h, "views.publish")
    assert publish.params["user_id"] == user
    return "\n".join(b["text"]["text"] for b in publish.params["view"]["blocks"] if b.get("type") == "section")


def test_home_shows_each_problem_in_korean(h: Harness) -> None:
    seed_catalog(h.engine)
    _subscribe(h.engine, "C0MINE", "U0MIN", "not_in_channel")
    _subscribe(h.engine, "C0OTHER", "U0ELSE", "is_archived")  # someone else's digest: only in the problems
    _subscribe(h.engine, "C0FINE", "U0MIN")
    alert = store.add_alert(h.engine, team_id=TEAM, user_id="U0MIN", gpu_id="h100-sxm-80gb", op="<",
                            usd_per_gpu_hour=Decimal(2), language="ko", now=NOW)
    assert alert.id is not None
    store.rearm_alert(h.engine, alert.id, error="token_revoked", armed=False)
    text = _home_text(h, "U0MIN")
    assert "*전달 문제*" in text
    assert "⚠ <#C0MINE>: 이 채널의 멤버가 아닙니다." in text
    assert "⚠ <#C0OTHER>: 채널이 보관되었습니다." in text
    assert "⚠ 알림 #1: 이 워크스페이스에 대한 앱 권한이 취소되었습니다." in text
    # The user's own digests, in Korean, each with its problem; a healthy one without.
    usd = format_currency(Decimal("0.05"), "USD", locale="ko")  # CLDR's Korean form of $0.05 ("US$0.05")
    assert f"<#C0MINE>: 매일 09:00 UTC, ≥5% 및 {usd}, 모든 GPU — ⚠ 이 채널의 멤버가 아닙니다." in text
    assert f"<#C0FINE>: 매일 09:00 UTC, ≥5% 및 {usd}, 모든 GPU\n" in text + "\n"
    assert "C0OTHER>: 매일" not in text
    assert "not_in_channel" not in text and "is_archived" not in text  # codes are worded, not shown raw


def test_home_without_problems_has_no_problem_section(h: Harness) -> None:
    _subscribe(h.engine, "C0FINE", "U0HANS")
    text = _home_text(h, "U0HANS")
    assert "Zustellprobleme" not in text
    assert "<#C0FINE>: täglich 09:00 UTC" in text  # German lines for a German user


def _services(engine: Any) -> Services:
    return Services(engine=engine, core=FakeCore(), clock=lambda: NOW)


def test_digest_time_is_in_the_users_slack_time_zone(h: Harness, snap) -> None:  # type: ignore[no-untyped-def]
    client = WebClient(token="xoxb-1-test", base_url=h.slack.api_url)
    reply = digest_command(_services(h.engine), subcommand="digest", text="daily 09:00", snapshot=snap, team_id=TEAM,
                           channel_id="C0TZ", user_id="U0MIN", lang="ko", client=client)
    sub = store.find_subscription(h.engine, TEAM, "C0TZ")
    assert sub is not None and sub.timezone == "Asia/Seoul"
    assert "Asia/Seoul" in reply.text and "매일" in reply.text
    [info] = h.slack.api_calls("users.info")
    assert info.params["user"] == "U0MIN"


def test_list_and_off_do_not_ask_slack_and_failures_fall_back_to_utc(h: Harness, snap) -> None:  # type: ignore[no-untyped-def]
    client = WebClient(token="xoxb-1-test", base_url=h.slack.api_url)
    kw = {"snapshot": snap, "team_id": TEAM, "channel_id": "C0TZ", "lang": "de", "client": client}
    digest_command(_services(h.engine), subcommand="digest", text="liste", user_id="U0HANS", **kw)
    digest_command(_services(h.engine), subcommand="digest", text="aus", user_id="U0HANS", **kw)
    assert h.slack.api_calls("users.info") == []
    h.slack.fail("users.info", "user_not_found")
    digest_command(_services(h.engine), subcommand="digest", text="täglich 07:00", user_id="U0HANS", **kw)
    sub = store.find_subscription(h.engine, TEAM, "C0TZ")
    assert sub is not None and sub.timezone == "UTC"
    digest_command(_services(h.engine), subcommand="digest", text="täglich 07:00", user_id="U0HANS", **kw)
    sub = store.find_subscription(h.engine, TEAM, "C0TZ")
    assert sub is not None and sub.timezone == "Europe/Berlin"
    # An explicit `tz` wins over the Slack profile.
    digest_command(_services(h.engine), subcommand="digest", text="daily 07:00 tz America/New_York", user_id="U0HANS", **kw)
    assert store.find_subscription(h.engine, TEAM, "C0TZ").timezone == "America/New_York"  # type: ignore[union-attr]
