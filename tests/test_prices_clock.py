"""The clock keeps prices fresh (gpuhunt, recorded responses) and posts a digest with its price chart
(files_upload_v2 against the local fake Slack); `prices status` and `prices chart` from the CLI."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fake_slack_digest import FakeSlack
from sqlalchemy import Engine
from test_digest_cli import run_cli  # the CLI run with this engine, its output captured
from test_prices_trust import _changed_lambda

from bot.digest.commands import handle_digest_command
from bot.digest.scheduler import Scheduler, SchedulerConfig, StaticTokens
from knowledge.prices import import_prices
from knowledge.snapshot import load_snapshot

CASES = Path(__file__).parent / "cases"
PNG = b"\x89PNG\r\n\x1a\n"
TOKEN = "xoxb-test"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def publish(base: Path, provider: str, version: str) -> None:
    """A recorded gpuhunt catalog served as gpuhunt publishes it ({base}/{provider}/version, .../catalog.zip)."""
    (base / provider / version).mkdir(parents=True, exist_ok=True)
    (base / provider / "version").write_text(version + "\n")
    with zipfile.ZipFile(base / provider / version / "catalog.zip", "w") as z:
        z.write(CASES / f"gpuhunt_{provider}.csv", f"{provider}.csv")


def test_digest_posts_its_price_chart_in_the_thread(loaded_engine: Engine, tmp_path: Path, slack: FakeSlack) -> None:
    snap = load_snapshot(loaded_engine)
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    subscribed = today - timedelta(days=2, hours=-7)  # 07:00 two days ago
    r = handle_digest_command("daily 09:00 lang ja", engine=loaded_engine, snapshot=snap, team_id="T1", channel_id="C1",
                              user_id="U1", lang="ja", now=subscribed)
    assert r.ok, r.text
    _, second, _ = _changed_lambda(tmp_path)
    import_prices(loaded_engine, second, observed_at=today - timedelta(days=1, hours=-6))  # yesterday 06:00
    cfg = SchedulerConfig(api_url=slack.url, worker="w1", charts=2)
    scheduler = Scheduler(engine=loaded_engine, tokens=StaticTokens(TOKEN), cfg=cfg, catalog=lambda: snap)
    report = scheduler.run_once(today - timedelta(days=1, hours=-9, minutes=-5))  # yesterday 09:05
    assert set(report.outcomes) == {"posted"}, report.outcomes
    (post,) = slack.state.posts("C1")
    files = slack.state.files
    assert 1 <= len(files) <= 2
    assert all(f["channel"] == "C1" and f["thread_ts"] == post["ts"] for f in files)
    assert all(f["bytes"].startswith(PNG) and len(f["bytes"]) > 10_000 for f in files)
    assert all("GPU 時間あたり最安値" in f["title"] for f in files)  # labelled in the channel's language
    methods = [m for m, _ in slack.state.calls]
    assert methods.index("chat.postMessage") < methods.index("files.getUploadURLExternal")


def test_a_chart_that_fails_does_not_lose_the_digest(loaded_engine: Engine, tmp_path: Path, slack: FakeSlack,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import bot.render.chart as chart

    def broken(*args: object, **kwargs: object) -> bytes:
        raise RuntimeError("no fonts (injected)")

    monkeypatch.setattr(chart, "render_price_chart", broken)
    snap = load_snapshot(loaded_engine)
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    handle_digest_command("daily 09:00", engine=loaded_engine, snapshot=snap, team_id="T1", channel_id="C1",
                          user_id="U1", lang="en", now=today - timedelta(days=2, hours=-7))
    _, second, _ = _changed_lambda(tmp_path)
    import_prices(loaded_engine, second, observed_at=today - timedelta(days=1, hours=-6))
    scheduler = Scheduler(engine=loaded_engine, tokens=StaticTokens(TOKEN),
                          cfg=SchedulerConfig(api_url=slack.url, worker="w1"), catalog=lambda: snap)
    assert set(scheduler.run_once(today - timedelta(days=1, hours=-9, minutes=-5)).outcomes) == {"posted"}
    assert len(slack.state.posts("C1")) == 1 and slack.state.files == []


def test_the_clock_refreshes_on_schedule_and_keeps_the_last_good_prices(loaded_engine: Engine, tmp_path: Path,
                                                                        slack: FakeSlack) -> None:
    publish(tmp_path, "lambdalabs", "20261101-7")
    snap = load_snapshot(loaded_engine)
    now = datetime.now(UTC)
    cfg = SchedulerConfig(api_url=slack.url, worker="w1", refresh_every=timedelta(hours=6),
                          catalog_url=tmp_path.as_uri())
    scheduler = Scheduler(engine=loaded_engine, tokens=StaticTokens(TOKEN), cfg=cfg, catalog=lambda: snap)
    report = scheduler.run_once(now)
    refreshed = " ".join(report.outcomes.get("refreshed", []))
    assert "lambda:" in refreshed and report.outcomes.get("refresh_failed")  # the providers not recorded here fail
    assert "refreshed" not in scheduler.run_once(now + timedelta(hours=1)).outcomes  # not due again yet
    assert "refreshed" in scheduler.run_once(now + timedelta(hours=7)).outcomes


def test_prices_status_after_a_failed_refresh(loaded_engine: Engine, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from knowledge.gpuhunt_source import refresh

    publish(tmp_path, "lambdalabs", "20261101-7")
    assert refresh(loaded_engine, catalog_url=tmp_path.as_uri(), providers=["lambdalabs"])[0].ok
    (tmp_path / "lambdalabs" / "20261101-7" / "catalog.zip").write_bytes(b"not a zip")  # the source breaks
    assert not refresh(loaded_engine, catalog_url=tmp_path.as_uri(), providers=["lambdalabs"])[0].ok
    code, out = run_cli(loaded_engine, tmp_path, monkeypatch, "prices", "status", "--json")
    assert code == 0
    rows = {r["provider"]: r for r in json.loads(out)}
    lam = rows["lambda"]
    # The last good prices stay in force, dated by their gpuhunt catalog (20261101), with the failure shown.
    assert lam["source"] == "gpuhunt" and lam["observed_at"].startswith("2026-11-01") and lam["offers"] > 0
    assert lam["last_error"] and lam["last_refresh_at"]
    # aws was never refreshed: its bundled snapshot, dated by snapshots.csv, old.
    assert rows["aws"]["bundled"] and rows["aws"]["observed_at"].startswith("2025-11-12") and rows["aws"]["stale"]
    code, text = run_cli(loaded_engine, tmp_path, monkeypatch, "prices", "status")
    assert code == 0 and "lambda" in text and "(bundled)" in text


def test_prices_chart_cli_writes_a_png(loaded_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "h100.png"
    code, text = run_cli(loaded_engine, tmp_path, monkeypatch, "prices", "chart", "H100 SXM", "--out", str(out),
                         "--days", "30", "--lang", "zh-Hans")
    assert code == 0, text
    data = out.read_bytes()
    assert data.startswith(PNG)
    # Bundled H100 prices exist on-demand, spot (AWS, RunPod …), auction (Mithril) and marketplace (Vast …).
    for kind in ("on-demand", "spot", "auction", "marketplace"):
        assert f"{kind} (30 days)" in text
    code, _ = run_cli(loaded_engine, tmp_path, monkeypatch, "prices", "chart", "A100", "--out", str(out))
    assert code == 1  # ambiguous: a clear one-line error, no chart guessed


def test_alerts_fire_on_user_or_live_prices_never_on_the_bundled_baseline(loaded_engine: Engine, tmp_path: Path,
                                                                          slack: FakeSlack) -> None:
    from bot.digest.commands import handle_alert_command

    snap = load_snapshot(loaded_engine)
    # Every bundled H100 SXM price is far under $100 per GPU-hour: on the baseline alone nothing fires.
    r = handle_alert_command("h100 sxm < 100", engine=loaded_engine, snapshot=snap, team_id="T1", user_id="U7",
                             lang="en")
    assert r.ok, r.text
    scheduler = Scheduler(engine=loaded_engine, tokens=StaticTokens(TOKEN),
                          cfg=SchedulerConfig(api_url=slack.url, worker="w1"), catalog=lambda: snap)
    now = datetime.now(UTC)
    assert scheduler.run_once(now).alerts_fired == []
    first, _, _ = _changed_lambda(tmp_path)  # lambda.csv as the user's own, dated today: lambda rents H100 SXM
    import_prices(loaded_engine, first, observed_at=now - timedelta(minutes=5))
    assert len(scheduler.run_once(now + timedelta(minutes=1)).alerts_fired) == 1
