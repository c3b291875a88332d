"""A simulated month of daily digests through the real scheduler, and the digest time over 100,000 observations."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Engine

import bot.digest.scheduler as scheduler_module
from bot.digest.scheduler import Scheduler, SchedulerConfig, StaticTokens
from fake_slack_digest import FakeSlack
from knowledge.history import compute_digest
from rules.market.changes import Thresholds
from test_digest_data import MONTH_START, play_month, real_rows, write_import
from test_scheduler import at, snap, subscribe  # noqa: F401  (snap is a fixture)


def test_month_of_daily_digests_reports_each_scripted_event_once(
    engine: Engine, snap: Any, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    play_month(engine, days=30)
    subscribe(engine, snap, "daily 09:00 threshold 5% $0.05")
    seen: dict[int, list[tuple[str, int, str]]] = {}
    real = scheduler_module.subscription_digest

    def recording(engine: Engine, sub: Any, *, now: Any, gpu_order: Any = ()) -> Any:
        digest = real(engine, sub, now=now, gpu_order=gpu_order)
        day = (now - MONTH_START).days
        seen[day] = [(c.key.gpu_id, c.key.gpu_count, c.kind) for g in digest.gpus for c in g.changes]
        return digest

    monkeypatch.setattr(scheduler_module, "subscription_digest", recording)
    with FakeSlack() as slack:
        s = Scheduler(engine=engine, tokens=StaticTokens("xoxb-month"), cfg=SchedulerConfig(api_url=slack.url),
                      catalog=lambda: snap)
        for day in range(1, 30):
            s.run_once(at(day))
        posts = slack.state.posts()
    reported = {d: sorted(v) for d, v in seen.items() if v}
    a100x8, a10, gh200, h100 = ("a100-sxm-40gb", 8), ("a10", 1), ("gh200", 1), ("h100-sxm-80gb", 1)
    # Derived by hand from the script in test_digest_data.lambda_day:
    # - A100×8 +1 %/day compounds to +5.1 % every 5 days (1.01⁵), each time against the last report;
    # - A10 flaps ±20 % on days 11-20: the rise (day 11) is news, flaps back within 7 days are not,
    #   the drop on day 18 is 7 days after the rise (window over), the rise on day 19 is a flap again;
    # - GH200 vanishes on day 20; H100×1 drops 10 % on day 5.
    expected = {
        5: sorted([(*a100x8, "rise"), (*h100, "drop")]), 10: [(*a100x8, "rise")], 11: [(*a10, "rise")],
        15: [(*a100x8, "rise")], 18: [(*a10, "drop")], 20: sorted([(*a100x8, "rise"), (*gh200, "gone")]),
        25: [(*a100x8, "rise")],
    }
    assert reported == expected
    assert len(posts) == len(expected)  # quiet days send nothing
    flips = sum(1 for d in range(11, 21))  # without hysteresis the A10 would have been news 10 times
    assert sum(1 for v in reported.values() for c in v if c[0] == "a10") == 2 < flips


@pytest.mark.parametrize("backend", ["sqlite", "postgres"], indirect=True)
def test_digest_time_over_100k_observations(engine: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    """A digest over 100,000 price observations: what it holds is asserted, its time only printed with the machine
    (`gpu-advisor bench` judges DESIGN §8's budget; a timed assertion would fail on a slower host, not on slower code)."""
    import os
    import platform

    play_month(engine, days=1)
    lam, vast = real_rows("lambda"), real_rows("vast")
    day = 1
    total = len(lam) + len(vast)
    while total < 100_000:
        when = MONTH_START + timedelta(days=day)
        write_import(engine, "lambda", lam, when)
        write_import(engine, "vast", vast, when)
        total += len(lam) + len(vast)
        day += 1
    # The newest import moves every price (−10 %): the worst case, every GPU in the digest with its series.
    cheaper = [type(r)(r.provider_id, r.instance_type, r.gpu_id, r.gpu_count, r.region, r.tier, r.usd_per_hour * 9 / 10)
               for r in lam]
    write_import(engine, "lambda", cheaper, MONTH_START + timedelta(days=day))
    total += len(cheaper)
    now = MONTH_START + timedelta(days=day, hours=3)
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        digest = compute_digest(engine, since=now - timedelta(days=7), thresholds=Thresholds(), now=now,
                                gpu_order=())
        timings.append(time.perf_counter() - start)
    best = min(timings)
    with capsys.disabled():
        print(f"\n[digest timing] {engine.dialect.name}: {total} observations in {day} daily imports × 2 feeds; "
              f"{digest.change_count} changes over {len(digest.gpus)} GPUs; compute_digest best {best * 1000:.0f} ms, runs {[round(t * 1000) for t in timings]} ms "
              f"({platform.processor() or platform.machine()}, {os.cpu_count()} cores shared)")
    assert digest.prices_at is not None and len(digest.gpus) == len({r.gpu_id for r in lam})
    assert all(len(g.series_30d) == 30 for g in digest.gpus)
