"""Price history queries over a simulated month (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from sqlalchemy import Engine

from knowledge.history import compute_digest, daily_cheapest, prices_at, source_ages
from rules.market.changes import SeriesKey, Thresholds
from test_digest_data import MONTH_START, lambda_day, play_month, real_rows, write_import

H100 = SeriesKey("h100-sxm-80gb", "lambda", 1, "on-demand")


def test_prices_at_follow_each_day_import(engine: Engine) -> None:
    play_month(engine, days=8)
    base = min(r.usd_per_hour for r in real_rows("lambda") if r.gpu_id == "h100-sxm-80gb" and r.gpu_count == 1)
    day4 = prices_at(engine, MONTH_START + timedelta(days=4, hours=1))
    day5 = prices_at(engine, MONTH_START + timedelta(days=5, hours=1))
    assert day4[H100].usd_per_hour == base
    assert day5[H100].usd_per_hour == (base * Decimal("0.9")).quantize(Decimal("0.0001"))
    assert prices_at(engine, MONTH_START - timedelta(hours=1)) == {}


def test_marketplace_series_is_the_median(engine: Engine) -> None:
    play_month(engine, days=1)
    prices = prices_at(engine)
    vast_1x_h100 = sorted(r.usd_per_hour for r in real_rows("vast") if r.gpu_id == "h100-sxm-80gb" and r.gpu_count == 1)
    s = prices[SeriesKey("h100-sxm-80gb", "vast", 1, "on-demand")]
    assert len(vast_1x_h100) == 3 and s.usd_per_hour == vast_1x_h100[1] and s.listings == 3


def test_failed_source_keeps_its_last_data_and_shows_age(engine: Engine) -> None:
    play_month(engine, days=3)
    later = MONTH_START + timedelta(days=10)
    write_import(engine, "vast", real_rows("vast"), later)  # lambda did not refresh for 8 days
    prices = prices_at(engine)
    assert H100 in prices  # lambda's last data is still in force
    ages = {a.provider_id: a.age_hours for a in source_ages(engine, now=later)}
    assert ages == {"lambda": 8 * 24.0, "vast": 0.0}


def test_daily_cheapest_series_shows_the_drop(engine: Engine) -> None:
    play_month(engine, days=10)
    until = MONTH_START + timedelta(days=9, hours=1)
    series = daily_cheapest(engine, until=until, days=10, gpu_ids=["h100-sxm-80gb"])["h100-sxm-80gb"]
    per_gpu = [min(r.usd_per_hour / r.gpu_count for r in lambda_day(d, real_rows("lambda")) + real_rows("vast")
                   if r.gpu_id == "h100-sxm-80gb") for d in range(10)]
    assert series == tuple(p.quantize(Decimal("0.0001")) for p in per_gpu)


def test_compute_digest_between_two_days(engine: Engine) -> None:
    play_month(engine, days=6)
    since = MONTH_START + timedelta(days=4, hours=1)
    digest = compute_digest(engine, since=since, thresholds=Thresholds(), now=MONTH_START + timedelta(days=5, hours=2))
    changes = {(c.key.gpu_id, c.key.gpu_count, c.kind): c.change_pct for g in digest.gpus for c in g.changes}
    # Day 5 brings exactly the scripted H100 -10 %; A100×8's +1 %/day is under the 5 % threshold.
    assert changes == {("h100-sxm-80gb", 1, "drop"): Decimal("-10.0")}
    (g,) = digest.gpus
    assert len(g.series_30d) == 30 and g.series_30d[-1] is not None
