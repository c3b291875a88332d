"""Periods left `claimed`/`retry` after they ended: recovered from the channel's history when posted, else marked
missed with their changes folded into the next digest; shown in `digest run --json` outcomes and App Home."""

from __future__ import annotations

import time
from datetime import date, timedelta
from typing import Any

from babel.dates import format_date
from fake_slack_digest import FakeSlack
from sqlalchemy import Engine
from test_digest_data import play_month
from test_scheduler import at, scheduler, slack, snap, subscribe  # noqa: F401  (slack, snap: fixtures)

from bot.digest.commands import list_for_user
from knowledge import digest_store as store


def test_posted_but_unrecorded_period_is_recovered_the_next_day(engine: Engine, snap: Any, slack: FakeSlack) -> None:  # noqa: F811
    play_month(engine, days=7)
    subscribe(engine, snap)
    slack.state.hang_after_post_s = 1.5  # day 5: Slack keeps the post, we time out and leave the period `retry`
    assert set(scheduler(engine, snap, slack, timeout_s=1).run_once(at(5)).outcomes) == {"retry"}
    slack.state.hang_after_post_s = 0
    time.sleep(1.0)  # let the fake's hung handler finish here (its broken-pipe trace must not leak into other tests)
    # No tick again until day 6: that period has ended. It is settled first, then day 6 is computed from it.
    report = scheduler(engine, snap, slack).run_once(at(6))
    assert report.outcomes == {"recovered_late": ["subscription 1 (T1/C1) 2025-05-06"],
                               "empty": ["subscription 1 (T1/C1)"]}  # day 6 has only A100×8 +1 %: not news
    (post,) = slack.state.posts("C1")  # never a second digest with day 5's changes again
    periods = [(p.period_key, p.status, p.message_ts) for p in store.period_rows(engine)]
    assert periods == [("2025-05-06", "posted", post["ts"]), ("2025-05-07", "empty", None)]


def test_unposted_stuck_period_is_missed_and_folded_into_the_next(engine: Engine, snap: Any, slack: FakeSlack) -> None:  # noqa: F811
    play_month(engine, days=7)
    subscribe(engine, snap)
    assert store.claim_period(engine, subscription_id=1, period_key="2025-05-06", worker="dead", now=at(5)) is not None
    report = scheduler(engine, snap, slack).run_once(at(6))
    assert report.outcomes == {"missed": ["subscription 1 (T1/C1) 2025-05-06"], "posted": ["subscription 1 (T1/C1)"]}
    (post,) = slack.state.posts("C1")
    # Day 6 carries what day 5 would have said: H100 −10 % and A100×8 +6.2 % (1.01⁶) since subscribing.
    assert post["metadata"]["event_payload"] == {"team_id": "T1", "subscription_id": 1, "period": "2025-05-07",
                                                "changes": 2}
    assert [(p.period_key, p.status) for p in store.period_rows(engine)] == [("2025-05-06", "missed"),
                                                                           ("2025-05-07", "posted")]
    home = list_for_user(engine, snapshot=snap, team_id="T1", user_id="U1", now=at(6))
    day = format_date(date(2025, 5, 6), format="medium", locale="en")  # the missed period as English writes a date
    assert home.missed == (f"<#C1>: the digest for {day} could not be posted; its changes come in the next one.",)
    assert list_for_user(engine, snapshot=snap, team_id="T1", user_id="U1", now=at(14)).missed == ()  # a week later


def test_a_claim_inside_its_lease_is_left_to_its_owner(engine: Engine, snap: Any, slack: FakeSlack) -> None:  # noqa: F811
    play_month(engine, days=7)
    subscribe(engine, snap)
    late = at(5, 23, 58)  # claimed two minutes before the day ended (UTC subscription)
    assert store.claim_period(engine, subscription_id=1, period_key="2025-05-06", worker="slow", now=late) is not None
    s = scheduler(engine, snap, slack, lease=timedelta(minutes=5))
    assert s.run_once(late + timedelta(minutes=3)).outcomes == {"not_due": ["subscription 1 (T1/C1)"]}
    assert s.run_once(late + timedelta(minutes=6)).outcomes == {"missed": ["subscription 1 (T1/C1) 2025-05-06"],
                                                                "not_due": ["subscription 1 (T1/C1)"]}
    assert slack.state.posts() == []


def test_dry_run_settles_nothing(engine: Engine, snap: Any, slack: FakeSlack) -> None:  # noqa: F811
    play_month(engine, days=7)
    subscribe(engine, snap)
    store.claim_period(engine, subscription_id=1, period_key="2025-05-06", worker="dead", now=at(5))
    report = scheduler(engine, snap, slack, dry_run=True).run_once(at(6))
    assert set(report.outcomes) == {"would_post"}
    assert [p.status for p in store.period_rows(engine)] == ["claimed"]
