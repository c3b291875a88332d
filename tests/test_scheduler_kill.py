"""A real `gpu-advisor scheduler` process SIGKILLed after Slack got the post but before it was recorded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from decimal import Decimal
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import Engine

from fake_slack_digest import FakeSlack
from knowledge import digest_store as store
from knowledge.digest_store import SubscriptionSettings
from test_digest_data import MONTH_START, play_month

TOKEN = "xoxb-kill-test"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def scheduler_process(engine: Engine, slack: FakeSlack, tmp: str) -> subprocess.Popen[str]:
    env = {**os.environ, "DATABASE_URL": engine.url.render_as_string(hide_password=False),
           "SLACK_BOT_TOKEN": TOKEN, "SLACK_API_URL": slack.url, "XDG_DATA_HOME": tmp}
    return subprocess.Popen([sys.executable, "-c", "import sys; from bot.cli import main; sys.exit(main())", "scheduler", "--once", "--lease-seconds", "1"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_killed_between_post_and_record_then_restarted(engine: Engine, slack: FakeSlack, tmp_path) -> None:  # type: ignore[no-untyped-def]
    play_month(engine, days=6)
    settings = SubscriptionSettings("daily", 0, 0, "UTC", 0, Decimal(5), Decimal("0.05"), (), "en")
    # Subscribed before the month began, so today's digest has the month's changes to report.
    store.upsert_subscription(engine, team_id="T1", channel_id="C1", settings=settings, user_id="U1",
                              now=MONTH_START + timedelta(hours=1))
    slack.state.hang_after_post_s = 60  # Slack keeps the message; the process never hears back
    proc = scheduler_process(engine, slack, str(tmp_path))
    deadline = time.monotonic() + 60
    while not slack.state.posts() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert slack.state.posts(), proc.stderr.read() if proc.poll() is not None and proc.stderr else "no post"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    (row,) = store.period_rows(engine)
    assert row.status == "claimed" and row.message_ts is None  # posted in Slack, not recorded here

    slack.state.hang_after_post_s = 0
    time.sleep(1.2)  # the dead owner's lease (1 s) runs out
    restarted = scheduler_process(engine, slack, str(tmp_path))
    out, err = restarted.communicate(timeout=120)
    assert restarted.returncode == 0, err
    assert '"recovered"' in out
    (post,) = slack.state.posts()  # still exactly one message
    (row,) = store.period_rows(engine)
    assert (row.status, row.message_ts, row.attempts) == ("posted", post["ts"], 2)
