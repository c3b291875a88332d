"""Money, percentages and dates in digest and alert texts go through Babel in the text's language (issue 21 item 2):
no hard-coded `$` before a number, "0,50 $" in German, "US$0.50" in Chinese, "5,5 %" in French.

Expected strings come from Babel itself (CLDR), not from our formatter."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from babel.dates import format_date
from babel.numbers import format_currency, format_percent
from fake_slack_digest import FakeSlack
from sqlalchemy import Engine
from test_digest_data import play_month, real_rows, seed_catalog, write_import
from test_scheduler import at, scheduler, slack, snap  # noqa: F401  (fixtures)

from bot.digest.commands import handle_alert_command, handle_digest_command, period_shown
from bot.render.messages import BABEL_LOCALES, LANGUAGES

DOLLAR_FIRST = re.compile(r"(?<!US)\$\s?\d")  # "$0.50" written by hand; "US$0.50" is CLDR's zh/vi form


def usd(amount: str, lang: str) -> str:
    return format_currency(Decimal(amount), "USD", locale=BABEL_LOCALES[lang])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_alert_and_its_list_show_the_price_as_the_locale_writes_money(engine: Engine, snap: Any, lang: str) -> None:  # noqa: F811
    seed_catalog(engine)
    kw = {"engine": engine, "snapshot": snap, "team_id": "T1", "user_id": "U1", "lang": lang}
    added = handle_alert_command("rtx 4090 < 0.5", **kw)
    listed = handle_alert_command("list", **kw)
    for text in (added.text, listed.text):
        assert usd("0.50", lang) in text, text
        if usd("0.50", lang) != "$0.50":
            assert not DOLLAR_FIRST.search(text), text
    assert added.params["usd"] == "0.50"  # the language-neutral values stay as they were


@pytest.mark.parametrize("lang", LANGUAGES)
def test_digest_threshold_shows_percent_and_money_as_the_locale_writes_them(engine: Engine, snap: Any, lang: str) -> None:  # noqa: F811
    kw = {"engine": engine, "snapshot": snap, "team_id": "T1", "channel_id": "C1", "user_id": "U1", "lang": lang}
    subscribed = handle_digest_command("daily 09:00 threshold 5.5% $0.10", **kw)
    listed = handle_digest_command("list", **kw)
    pct = format_percent(Decimal("0.055"), locale=BABEL_LOCALES[lang], decimal_quantization=False)  # CLDR's pattern
    for text in (subscribed.text, listed.text):
        assert pct in text and usd("0.10", lang) in text, text
        assert usd("0.10", lang).startswith("$") or not DOLLAR_FIRST.search(text), text


def test_german_alert_dm_is_in_german_money(engine: Engine, snap: Any, slack: FakeSlack) -> None:  # noqa: F811
    """The alert DM the clock sends (the issue's example: German alert money was `$1.23`)."""
    play_month(engine, days=1)
    base = min(r.usd_per_hour / r.gpu_count for r in real_rows("lambda") + real_rows("vast") if r.gpu_id == "h100-sxm-80gb")
    line = (base - Decimal("0.10")).quantize(Decimal("0.01"))
    r = handle_alert_command(f"h100 sxm < {line}", engine=engine, snapshot=snap, team_id="T1", user_id="U7", lang="de")
    assert r.ok, r.text
    s = scheduler(engine, snap, slack)
    under = line - Decimal("0.05")
    cheap = [type(row)(row.provider_id, row.instance_type, row.gpu_id, row.gpu_count, row.region, row.tier, under)
             if (row.gpu_id, row.gpu_count) == ("h100-sxm-80gb", 1) else row for row in real_rows("lambda")]
    write_import(engine, "lambda", cheap, at(1, 6))
    assert s.run_once(at(1)).alerts_fired == [1]
    (dm,) = slack.state.posts("U7")
    assert usd(str(under), "de") in dm["text"] and usd(str(line), "de") in dm["text"], dm["text"]
    assert not DOLLAR_FIRST.search(dm["text"]), dm["text"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_missed_digest_periods_are_dates_of_the_language(lang: str) -> None:
    day = period_shown("2026-11-24", lang)
    week = period_shown("2026-W48", lang)
    assert format_date(date(2026, 11, 24), format="medium", locale=BABEL_LOCALES[lang]) in day
    # ISO week 48 of 2026 starts on Monday 23 November
    monday = date(2026, 11, 23)
    assert monday.isoweekday() == 1 and monday.isocalendar().week == 48
    assert format_date(monday, format="medium", locale=BABEL_LOCALES[lang]) in week
    assert "2026-11-24" not in day and "W48" not in week
    assert period_shown("not-a-key", lang) == "not-a-key"
