"""Change detection (rules/market/changes.py): thresholds, hysteresis, new/gone, cheapest, spread, marketplaces."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal as D

import pytest

from rules.market.changes import (
    PricePoint,
    SeriesKey,
    SeriesPrice,
    Thresholds,
    build_digest_input,
    detect_changes,
    exceeds,
    initial_states,
    summarise,
)

T0 = datetime(2025, 6, 1, 9, tzinfo=UTC)
TH = Thresholds(pct=D(5), usd_per_gpu_hour=D("0.05"))


def key(gpu: str = "h100-sxm-80gb", provider: str = "lambda", count: int = 1, tier: str = "on-demand") -> SeriesKey:
    return SeriesKey(gpu, provider, count, tier)


def price(usd: str, k: SeriesKey | None = None, at: datetime = T0) -> SeriesPrice:
    k = k or key()
    return SeriesPrice(k, D(usd), "inst", "us-east-1", at)


def run(before: dict[SeriesKey, SeriesPrice], after: dict[SeriesKey, SeriesPrice], **kw):  # type: ignore[no-untyped-def]
    return detect_changes(initial_states(before), after, thresholds=kw.get("th", TH), now=kw.get("now", T0))


@pytest.mark.parametrize(
    "old,new,count,expected",
    [
        ("2.00", "2.10", 1, True),  # 5.0 % and $0.10: both met
        ("2.00", "2.09", 1, False),  # 4.5 %: under the percentage
        ("0.20", "0.24", 1, False),  # 20 % but $0.04: under the dollar threshold
        ("16.00", "16.80", 8, True),  # 5 %, $0.10 per GPU-hour on an 8-GPU box
        ("16.00", "16.32", 8, False),  # 2 %: under
        ("2.00", "1.90", 1, True),  # drops count the same as rises
    ],
    ids=["rise-5pct", "under-pct", "under-usd", "8gpu-over", "8gpu-under", "drop"],
)
def test_thresholds_need_both_pct_and_usd(old: str, new: str, count: int, expected: bool) -> None:
    assert exceeds(D(old), D(new), count, TH) is expected


def test_drop_rise_new_gone_with_pct() -> None:
    a, b, c, d = key(provider="aws"), key(provider="gcp"), key(provider="lambda"), key(provider="runpod")
    before = {a: price("4.00", a), b: price("3.00", b), c: price("2.50", c)}
    after = {a: price("3.00", a), b: price("3.60", b), d: price("2.20", d)}
    got = {ch.key.provider_id: ch for ch in run(before, after).changes}
    assert (got["aws"].kind, got["aws"].change_pct) == ("drop", D("-25.0"))  # (3-4)/4
    assert (got["gcp"].kind, got["gcp"].change_pct) == ("rise", D("20.0"))  # (3.6-3)/3
    assert (got["lambda"].kind, got["lambda"].old_usd_per_hour, got["lambda"].new_usd_per_hour) == ("gone", D("2.50"), None)
    assert (got["runpod"].kind, got["runpod"].old_usd_per_hour, got["runpod"].new_usd_per_hour) == ("new", None, D("2.20"))


def test_unchanged_and_small_moves_are_silent() -> None:
    before = {key(): price("2.00")}
    assert run(before, {key(): price("2.00")}).changes == ()
    assert run(before, {key(): price("2.04")}).changes == ()


def test_slow_creep_is_reported_once_it_adds_up() -> None:
    """Day by day +2 % never crosses 5 %, but against what the channel was told it does on day 3."""
    states = initial_states({key(): price("2.00")})
    reported = []
    for day, usd in enumerate(["2.04", "2.08", "2.12", "2.16"], start=1):
        res = detect_changes(states, {key(): price(usd)}, thresholds=TH, now=T0 + timedelta(days=day))
        states = dict(res.states)
        reported += [(day, ch.old_usd_per_hour, ch.new_usd_per_hour) for ch in res.changes]
    assert reported == [(3, D("2.00"), D("2.12"))]  # 6 % and $0.12 over 2.00


def test_flapping_price_is_reported_once_per_window() -> None:
    """2.00 ↔ 2.40 every day: the first rise is news, the flaps back and forth within 7 days are not."""
    states = initial_states({key(): price("2.00")})
    kinds = []
    for day in range(1, 11):
        usd = "2.40" if day % 2 else "2.00"
        res = detect_changes(states, {key(): price(usd)}, thresholds=TH, now=T0 + timedelta(days=day))
        states = dict(res.states)
        kinds.append("".join(ch.kind[0] for ch in res.changes) or "-")
    # day 1 rise; days 2..7 flaps held back (believed stays 2.40); day 8 the drop back is older than the
    # window, so it is reported; day 9 it flaps up again inside the new window and is held back.
    assert kinds == ["r", "-", "-", "-", "-", "-", "-", "d", "-", "-"]


def test_flapping_availability_is_not_reported_daily() -> None:
    states = initial_states({})
    kinds = []
    for day in range(1, 6):
        now_prices = {key(): price("2.00")} if day % 2 else {}
        res = detect_changes(states, now_prices, thresholds=TH, now=T0 + timedelta(days=day))
        states = dict(res.states)
        kinds.append("".join(ch.kind for ch in res.changes) or "-")
    assert kinds == ["new", "-", "-", "-", "-"]


def test_reversal_to_a_new_level_is_not_a_flap() -> None:
    states = initial_states({key(): price("2.00")})
    res = detect_changes(states, {key(): price("2.40")}, thresholds=TH, now=T0)
    res2 = detect_changes(res.states, {key(): price("1.50")}, thresholds=TH, now=T0 + timedelta(days=1))
    assert [(c.kind, c.old_usd_per_hour, c.new_usd_per_hour) for c in res2.changes] == [("drop", D("2.40"), D("1.50"))]


def test_marketplace_is_median_p10_and_count() -> None:
    # Ten listings 1.00 .. 1.90: median is (1.40 + 1.50) / 2 = 1.45; p10 index int(0.1*9)=0 → 1.00.
    pts = [
        PricePoint("rtx-4090", "vast", f"m{i}", 1, f"r{i}", "on-demand", D("1.00") + D("0.10") * i, T0)
        for i in range(10)
    ]
    (s,) = summarise(pts, marketplaces=frozenset({"vast"})).values()
    assert (s.usd_per_hour, s.p10_usd_per_hour, s.listings, s.region) == (D("1.45"), D("1.00"), 10, "any")
    (c,) = summarise(pts).values()  # a cloud: the cheapest region
    assert (c.usd_per_hour, c.region) == (D("1.00"), "r0")


def test_new_cheapest_offer_and_spot_spread() -> None:
    aws, lam, run_spot = key(provider="aws"), key(provider="lambda"), key(provider="runpod", tier="spot")
    before = {aws: price("3.00", aws), lam: price("2.50", lam), run_spot: price("1.80", run_spot)}
    after = {aws: price("2.00", aws), lam: price("2.50", lam), run_spot: price("1.80", run_spot)}
    digest = build_digest_input(believed=initial_states(before), now_prices=after, thresholds=TH, now=T0)
    (g,) = digest.gpus
    assert g.new_cheapest is not None and g.new_cheapest.key == aws
    assert g.old_cheapest is not None and g.old_cheapest.key == lam
    assert g.spot_spread is not None and g.spot_spread.spread_pct == D("10.0")  # (2.00-1.80)/2.00


def test_gpu_filter_and_catalog_order() -> None:
    a, b, c = key("a100-80gb"), key("h100-sxm-80gb"), key("rtx-4090")
    before = {a: price("2", a), b: price("3", b), c: price("1", c)}
    after = {a: price("1", a), b: price("2", b), c: price("0.5", c)}
    d = build_digest_input(
        believed=initial_states(before), now_prices=after, thresholds=TH, now=T0,
        gpu_filter=frozenset({"h100-sxm-80gb", "rtx-4090"}), gpu_order=["rtx-4090", "h100-sxm-80gb", "a100-80gb"],
    )
    assert [g.gpu_id for g in d.gpus] == ["rtx-4090", "h100-sxm-80gb"]
