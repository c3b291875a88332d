"""`/gpu digest …` and `/gpu alert …`: parsing, storing per workspace and channel, listing, turning off."""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine

from bot.digest.commands import handle_alert_command, handle_digest_command, list_for_user, parse_time
from knowledge import digest_store as store
from knowledge import tables
from knowledge.snapshot import build_snapshot, gpu_spec
from test_digest_data import seed_catalog

NOW = datetime(2025, 6, 2, 8, tzinfo=UTC)
GPUS_CSV = Path(__file__).resolve().parents[1] / "knowledge" / "data" / "gpus.csv"


@pytest.fixture(scope="module")
def snap():  # type: ignore[no-untyped-def]
    rows = [tables.GpuBase.model_validate({k: (None if v == "" else v) for k, v in r.items()})
            for r in csv.DictReader(GPUS_CSV.open(encoding="utf-8"))]
    return build_snapshot(gpus=[gpu_spec(r) for r in rows])


def digest(engine: Engine, snap, text: str, channel: str = "C1", team: str = "T1", tz: str = "UTC"):  # type: ignore[no-untyped-def]
    return handle_digest_command(text, engine=engine, snapshot=snap, team_id=team, channel_id=channel,
                                 user_id="U1", lang="en", tz=tz, now=NOW)


@pytest.mark.parametrize("token,expected", [("09:00", (9, 0)), ("9", (9, 0)), ("9am", (9, 0)), ("9pm", (21, 0)),
                                            ("12am", (0, 0)), ("17:30", (17, 30)), ("25:00", None), ("9:61", None)])
def test_parse_time(token: str, expected: tuple[int, int] | None) -> None:
    assert parse_time(token) == expected


def test_daily_subscription_from_the_issue_example(engine: Engine, snap) -> None:  # type: ignore[no-untyped-def]
    r = digest(engine, snap, "daily 09:00 threshold 5% gpus h100,a100,4090", tz="Europe/Berlin")
    assert r.ok and r.code == "digest.subscribed"
    sub = store.find_subscription(engine, "T1", "C1")
    assert sub is not None
    assert (sub.cadence, sub.local_hour, sub.local_minute, sub.timezone) == ("daily", 9, 0, "Europe/Berlin")
    assert (Decimal(sub.threshold_pct), Decimal(sub.threshold_usd)) == (Decimal(5), Decimal("0.05"))
    # A bare "a100" is ambiguous (40 or 80 GB): the filter keeps every candidate rather than guess.
    ids = set(sub.gpu_filter.split(","))
    assert {"a100-sxm-80gb", "a100-sxm-40gb", "a100-pcie-80gb", "a100-pcie-40gb", "rtx-4090", "h100-sxm-80gb"} <= ids
    assert ids <= {"a100-sxm-80gb", "a100-sxm-40gb", "a100-pcie-80gb", "a100-pcie-40gb", "rtx-4090",
                   "h100-sxm-80gb", "h100-pcie-80gb", "h100-nvl-94gb"}


def test_weekly_threshold_dollars_tz_and_language(engine: Engine, snap) -> None:  # type: ignore[no-untyped-def]
    r = digest(engine, snap, "weekly fri 7:30am threshold 3% $0.10 tz America/New_York lang de")
    assert r.ok, r.text
    sub = store.find_subscription(engine, "T1", "C1")
    assert sub is not None
    assert (sub.cadence, sub.weekday, sub.local_hour, sub.local_minute) == ("weekly", 4, 7, 30)
    assert (Decimal(sub.threshold_pct), Decimal(sub.threshold_usd), sub.language) == (Decimal(3), Decimal("0.10"), "de")
    assert sub.timezone == "America/New_York" and sub.gpu_filter == ""


@pytest.mark.parametrize("text,needle", [
    ("hourly", "start with"), ("daily threshold", "threshold"), ("daily gpus", "gpus"),
    ("daily gpus zz-unknown-9", "zz-unknown-9"), ("daily tz Mars/Base", "Mars/Base"), ("daily mon", "weekly"),
    ("daily 09:00 banana", "banana"),
])
def test_bad_subscriptions_get_a_clear_answer(engine: Engine, snap, text: str, needle: str) -> None:  # type: ignore[no-untyped-def]
    r = digest(engine, snap, text)
    assert not r.ok and needle in r.text
    assert store.find_subscription(engine, "T1", "C1") is None


def test_list_and_off_are_per_workspace(engine: Engine, snap) -> None:  # type: ignore[no-untyped-def]
    digest(engine, snap, "daily", channel="C1")
    digest(engine, snap, "weekly", channel="C2")
    digest(engine, snap, "daily", channel="C9", team="T2")
    listed = digest(engine, snap, "list", channel="C2")
    assert [s["channel_id"] for s in listed.data["subscriptions"]] == ["C2", "C1"]  # this channel first, no T2
    assert digest(engine, snap, "off", channel="C1").code == "digest.off"
    assert digest(engine, snap, "off", channel="C1").code == "digest.not_subscribed"
    assert [s["channel_id"] for s in digest(engine, snap, "list").data["subscriptions"]] == ["C2"]
    again = digest(engine, snap, "daily 10:00", channel="C1")  # subscribing again reactivates the same row
    assert again.ok and len(store.list_subscriptions(engine, team_id="T1")) == 2


def test_alerts_add_list_off_only_own(engine: Engine, snap) -> None:  # type: ignore[no-untyped-def]
    seed_catalog(engine)
    r = handle_alert_command("a100 < 2", engine=engine, snapshot=snap, team_id="T1", user_id="U1", lang="en", now=NOW)
    assert r.ok and r.data["alert"]["gpu"].startswith("a100-") and r.data["alert"]["op"] == "<"
    assert "took it as" in r.text and "40GB" in r.text.replace(" ", "")  # the ambiguity is said, not hidden
    r2 = handle_alert_command("rtx 4090 below $0.35/hr", engine=engine, snapshot=snap, team_id="T1", user_id="U1", lang="en")
    assert r2.ok and r2.data["alert"]["usd_per_gpu_hour"] == "0.35"
    bad = handle_alert_command("h100 < cheap", engine=engine, snapshot=snap, team_id="T1", user_id="U1", lang="en")
    assert not bad.ok and "cheap" in bad.text
    mine = handle_alert_command("list", engine=engine, snapshot=snap, team_id="T1", user_id="U1", lang="en")
    assert [a["id"] for a in mine.data["alerts"]] == [r.data["alert"]["id"], r2.data["alert"]["id"]]
    aid = r.data["alert"]["id"]
    other = handle_alert_command(f"off {aid}", engine=engine, snapshot=snap, team_id="T1", user_id="U2", lang="en")
    assert not other.ok  # someone else's alert
    assert handle_alert_command(f"off {aid}", engine=engine, snapshot=snap, team_id="T1", user_id="U1", lang="en").ok
    home = list_for_user(engine, snapshot=snap, team_id="T1", user_id="U1")
    assert [a["id"] for a in home.alerts] == [r2.data["alert"]["id"]]


def test_hostile_text_never_raises(engine: Engine, snap) -> None:  # type: ignore[no-untyped-def]
    for text in ["", "   ", "daily " + "x" * 10_000, "daily <!channel>", "weekly \x00\x07", "daily gpus ,,,", "alert"]:
        r = digest(engine, snap, text)
        assert isinstance(r.text, str) and r.text
    for text in ["", "< 2", "h100 <", "h100 < -1", "h100 < 1e999", "off", "off abc", "list extra"]:
        r = handle_alert_command(text, engine=engine, snapshot=snap, team_id="T1", user_id="U1", lang="en")
        assert isinstance(r.text, str) and r.text
