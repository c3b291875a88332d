"""The digest clock against a local fake Slack: exactly once per period, errors recorded, 429 waited out, alerts."""

from __future__ import annotations

import csv
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from bot.digest_commands import handle_alert_command, handle_digest_command, list_for_user
from bot.scheduler import EVENT_TYPE, Scheduler, SchedulerConfig, StaticTokens, due_period
from fake_slack_digest import FakeSlack
from knowledge import digest_store as store
from knowledge import tables
from knowledge.snapshot import build_snapshot, gpu_spec
from rules.types import Provider
from test_digest_data import MONTH_START, lambda_day, play_month, real_rows, write_import

TOKEN = "xoxb-test"
GPUS_CSV = Path(__file__).resolve().parents[1] / "knowledge" / "data" / "gpus.csv"


@pytest.fixture(scope="module")
def snap():  # type: ignore[no-untyped-def]
    rows = [tables.GpuBase.model_validate({k: (None if v == "" else v) for k, v in r.items()})
            for r in csv.DictReader(GPUS_CSV.open(encoding="utf-8"))]
    providers = [Provider(p, p.title(), "marketplace" if p == "vast" else "cloud", 1, "NVLink", "test")
                 for p in ("lambda", "vast", "aws")]
    return build_snapshot(gpus=[gpu_spec(r) for r in rows], providers=providers)


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def scheduler(engine: Engine, snap: Any, slack: FakeSlack, worker: str = "w1", **cfg: Any) -> Scheduler:
    config = SchedulerConfig(api_url=slack.url, worker=worker, **cfg)
    return Scheduler(engine=engine, tokens=StaticTokens(TOKEN), cfg=config, catalog=lambda: snap)


def subscribe(engine: Engine, snap: Any, text: str = "daily 09:00", channel: str = "C1", day: int = 0) -> None:
    r = handle_digest_command(text, engine=engine, snapshot=snap, team_id="T1", channel_id=channel, user_id="U1",
                              lang="en", now=MONTH_START + timedelta(days=day, hours=1))  # 07:00 UTC, after the import
    assert r.ok, r.text


def at(day: int, hour: int = 9, minute: int = 5) -> datetime:
    return MONTH_START.replace(hour=hour, minute=minute) + timedelta(days=day)


def test_due_period_daily_weekly_and_time_zone() -> None:
    class Sub:
        cadence, local_hour, local_minute, weekday, timezone = "daily", 9, 0, 0, "Asia/Tokyo"

    # 2025-05-01 23:30 UTC is 08:30 on 2 May in Tokyo: not yet; 00:05 UTC is 09:05 there: due, keyed 2 May.
    assert due_period(Sub, datetime(2025, 5, 1, 23, 30, tzinfo=UTC)) is None
    key, scheduled = due_period(Sub, datetime(2025, 5, 2, 0, 5, tzinfo=UTC))  # type: ignore[misc]
    assert key == "2025-05-02" and scheduled == datetime(2025, 5, 2, 0, 0, tzinfo=UTC)
    Sub.cadence, Sub.weekday, Sub.timezone = "weekly", 2, "UTC"  # Wednesday
    assert due_period(Sub, datetime(2025, 5, 6, 10, tzinfo=UTC)) is None  # Tuesday
    assert due_period(Sub, datetime(2025, 5, 8, 10, tzinfo=UTC))[0] == "2025-W19"  # type: ignore[index]


def test_one_post_per_period_with_metadata(engine: Engine, snap: Any, slack: FakeSlack) -> None:
    play_month(engine, days=7)
    subscribe(engine, snap, "daily 09:00 threshold 5%")
    s = scheduler(engine, snap, slack)
    assert set(s.run_once(at(4, 8)).outcomes) == {"not_due"}
    # Day 4: only A100×8's +4.1 % (1.01⁴) since subscribing: under 5 %, so no message.
    assert set(s.run_once(at(4)).outcomes) == {"empty"}
    # Day 5: H100 −10 % and A100×8 +5.1 % (1.01⁵) against what the channel was told.
    assert set(s.run_once(at(5)).outcomes) == {"posted"}
    assert set(s.run_once(at(5, 10)).outcomes) == {"done"}
    assert set(s.run_once(at(6)).outcomes) == {"empty"}  # +1 % more is not news
    periods = [(p.period_key, p.status) for p in store.period_rows(engine)]
    assert periods == [("2025-05-05", "empty"), ("2025-05-06", "posted"), ("2025-05-07", "empty")]
    (post,) = slack.state.posts("C1")
    assert post["metadata"] == {"event_type": EVENT_TYPE,
                                "event_payload": {"subscription_id": 1, "period": "2025-05-06", "changes": 2}}
    assert "H100" in post["text"] or "H100" in str(post["blocks"])
