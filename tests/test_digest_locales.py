"""Digest/alert texts in eight languages: catalog contract, answers with no English left, localized command words."""

from __future__ import annotations

import csv
import re
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from babel.numbers import format_currency
from sqlalchemy import Engine
from test_digest_data import seed_catalog

from bot.digest import texts as digest_texts
from bot.digest.commands import handle_alert_command, handle_digest_command, list_for_user
from bot.render.messages import BABEL_LOCALES, LANGUAGES, placeholders
from knowledge import digest_store as store
from knowledge import tables
from knowledge.snapshot import build_snapshot, gpu_spec
from rules.types import Offer

NOW = datetime(2025, 6, 2, 8, tzinfo=UTC)
GPUS_CSV = Path(__file__).resolve().parents[1] / "knowledge" / "data" / "gpus.csv"
# Texts that are only a layout of values and symbols, the same in several languages.
LAYOUT_ONLY = {"digest.list.line", "home.error.channel", "time.weekly", "digest.change.drop", "digest.change.rise"}
# The digest's and alerts' keys in the message catalog (the rest are the cards' and the Slack shell's).
DIGEST_PREFIXES = ("digest.", "alert.", "problem.", "delivery.", "cadence.", "weekday.", "gpus.", "time.", "home.")
CJK = ("ko", "ja", "zh-Hans")


@pytest.fixture(scope="module")
def snap():  # type: ignore[no-untyped-def]
    rows = [tables.GpuBase.model_validate({k: (None if v == "" else v) for k, v in r.items()})
            for r in csv.DictReader(GPUS_CSV.open(encoding="utf-8"))]
    return build_snapshot(gpus=[gpu_spec(r) for r in rows])


def english_words(text: str, allowed: set[str]) -> list[str]:
    """Latin-letter words left in a CJK text once commands (`…`), channel links and allowed names are removed."""
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"<#[A-Z0-9]+>", " ", text)
    text = text.replace("US$", " ")  # CLDR's symbol for US dollars in Korean and Chinese (Babel's format)
    for name in sorted(allowed, key=len, reverse=True):
        text = text.replace(name, " ")
    return re.findall(r"[A-Za-z]{2,}", text)


def test_every_key_in_every_language_with_the_same_placeholders() -> None:
    """The digest's texts (one catalog with the cards since issue 21; its whole contract: test_locales_catalog)."""
    english = {k: v for k, v in digest_texts.catalog("en").items() if k.startswith(DIGEST_PREFIXES)}
    assert len(english) > 50, "the digest's texts were not found: the prefixes are wrong"
    for lang in LANGUAGES:
        cat = {k: v for k, v in digest_texts.catalog(lang).items() if k.startswith(DIGEST_PREFIXES)}
        assert set(cat) == set(english), f"{lang}: missing {set(english) - set(cat)}, extra {set(cat) - set(english)}"
        for key, value in cat.items():
            assert placeholders(value) == placeholders(english[key]), f"{lang} {key}"
            value.format(**{p: "x" for p in placeholders(value)})  # no stray braces
            if lang != "en" and key not in LAYOUT_ONLY and len(english[key]) > 12:
                assert value != english[key], f"{lang} {key} is still the English text"


def test_every_code_the_commands_and_scheduler_use_is_in_the_catalog() -> None:
    root = Path(__file__).resolve().parents[1]
    used: set[str] = set()
    for path in ("bot/digest/commands.py", "bot/digest/scheduler.py", "bot/slack/digest_bridge.py", "bot/digest/texts.py"):
        used |= set(re.findall(r'"((?:digest|alert|problem|delivery|home|gpus)\.[a-z_.]+)"', (root / path).read_text()))
    assert used, "no codes found: the pattern is wrong"
    assert used <= set(digest_texts.catalog("en")), used - set(digest_texts.catalog("en"))


@pytest.mark.parametrize("lang", CJK)
def test_cjk_subscription_answer_has_no_english_sentence(engine: Engine, snap, lang: str) -> None:  # type: ignore[no-untyped-def]
    r = handle_digest_command("daily 09:00 threshold 5% gpus h100", engine=engine, snapshot=snap, team_id="T1",
                              channel_id="C1", user_id="U1", lang=lang, now=NOW)
    assert r.ok and r.code == "digest.subscribed"
    names = {snap.gpus[g].name for g in r.data["subscription"]["gpus"]}
    assert any(n.startswith("H100") for n in names)
    assert english_words(r.text, names | {"UTC", "GPU", "US$"}) == [], r.text  # US$: CLDR's dollar sign here
    assert "09:00" in r.text and "5" in r.text and "0.05" in r.text and "UTC" in r.text


@pytest.mark.parametrize("lang", ["en", "de", "fr", "ko", "zh-Hans", "ja", "es", "vi"])
def test_dollar_amounts_are_in_the_languages_currency_format(engine: Engine, snap, lang: str) -> None:  # type: ignore[no-untyped-def]
    """Digest and alert texts format dollars with Babel (CLDR), never a `$` of their own before the number."""
    seed_catalog(engine)
    offer = Offer("rtx-4090", "vast", "1x RTX 4090", 1, "us", "on-demand", Decimal("0.39"), Decimal("0.39"), 1,
                  "PCIe", NOW, "test")
    priced = build_snapshot(gpus=snap.gpus.values(), offers=[offer])
    kw = {"engine": engine, "snapshot": priced, "team_id": "T1", "user_id": "U1", "lang": lang, "now": NOW}
    locale = BABEL_LOCALES[lang]
    sub = handle_digest_command("daily 09:00 threshold 5% $0.25", channel_id="C1", **kw)
    listed = handle_digest_command("list", channel_id="C1", **kw)
    added = handle_alert_command("rtx 4090 < 0.5", **kw)
    alerts = handle_alert_command("list", **kw)
    quarter, half = format_currency(Decimal("0.25"), "USD", locale=locale), format_currency(Decimal("0.5"), "USD", locale=locale)
    assert quarter in sub.text and quarter in listed.text, (sub.text, listed.text)
    assert half in added.text and half in alerts.text, (added.text, alerts.text)
    assert format_currency(Decimal("0.39"), "USD", locale=locale) in added.text  # "(now …)": the cheapest offer


def test_korean_answer_says_daily_in_korean(engine: Engine, snap) -> None:  # type: ignore[no-untyped-def]
    r = handle_digest_command("daily 09:00 threshold 5% gpus h100", engine=engine, snapshot=snap, team_id="T1",
                              channel_id="C1", user_id="U1", lang="ko", now=NOW)
    assert "매일" in r.text and "daily" not in r.text


@pytest.mark.parametrize("lang,word", [("de", "täglich"), ("es", "diario"), ("fr", "quotidien"), ("vi", "hàng ngày")])
def test_latin_languages_word_the_cadence_in_their_language(engine: Engine, snap, lang: str, word: str) -> None:  # type: ignore[no-untyped-def]
    r = handle_digest_command("daily 09:00", engine=engine, snapshot=snap, team_id="T1", channel_id="C1",
                              user_id="U1", lang=lang, now=NOW)
    assert r.ok and word in r.text and "daily" not in r.text


@pytest.mark.parametrize("lang", CJK)
def test_cjk_errors_alerts_and_lists_have_no_english_sentence(engine: Engine, snap, lang: str) -> None:  # type: ignore[no-untyped-def]
    seed_catalog(engine)
    kw = {"engine": engine, "snapshot": snap, "team_id": "T1", "user_id": "U1", "lang": lang, "now": NOW}
    bad = handle_digest_command("daily gpus zz-unknown-9", channel_id="C1", **kw)
    assert not bad.ok and "zz-unknown-9" in bad.text
    assert english_words(bad.text, {"zz-unknown-9", "GPU"}) == [], bad.text
    verb = handle_digest_command("hourly", channel_id="C1", **kw)
    assert english_words(verb.text, {"hourly", "GPU"}) == [], verb.text
    handle_digest_command("weekly fri 07:30", channel_id="C1", **kw)
    listed = handle_digest_command("list", channel_id="C1", **kw)
    # "US$" is the dollar sign CLDR gives these locales (Babel), not an English word
    assert english_words(listed.text, {"UTC", "GPU", "US$"}) == [], listed.text
    added = handle_alert_command("rtx 4090 < 0.5", **kw)
    assert added.ok and english_words(added.text, {snap.gpus["rtx-4090"].name, "GPU", "DM", "US$"}) == [], added.text
    alerts = handle_alert_command("list", **kw)
    assert english_words(alerts.text, {snap.gpus["rtx-4090"].name, "GPU", "US$"}) == [], alerts.text


@pytest.mark.parametrize("text,cadence,weekday,hour,minute,pct", [
    ("매일 9시 임계값 3% gpus h100", "daily", 0, 9, 0, Decimal(3)),
    ("毎週 金曜日 7:30", "weekly", 4, 7, 30, Decimal(5)),
    ("每周 星期五 18:00 阈值 2%", "weekly", 4, 18, 0, Decimal(2)),
    ("hàng tuần thứ sáu 07:30", "weekly", 4, 7, 30, Decimal(5)),
    ("täglich 18:00 schwelle 4%", "daily", 0, 18, 0, Decimal(4)),
    ("semanal lunes 10:00 umbral 1.5%", "weekly", 0, 10, 0, Decimal("1.5")),
    ("hebdomadaire dimanche 8h seuil 6%", "weekly", 6, 8, 0, Decimal(6)),
])
def test_localized_command_words(engine: Engine, snap, text, cadence, weekday, hour, minute, pct) -> None:  # type: ignore[no-untyped-def]
    r = handle_digest_command(text, engine=engine, snapshot=snap, team_id="T1", channel_id="C1", user_id="U1",
                              lang="en", now=NOW)
    assert r.ok, r.text
    sub = store.find_subscription(engine, "T1", "C1")
    assert sub is not None
    assert (sub.cadence, sub.local_hour, sub.local_minute) == (cadence, hour, minute)
    assert (sub.weekday if cadence == "weekly" else 0, Decimal(sub.threshold_pct)) == (weekday, pct)


@pytest.mark.parametrize("lang,listing,off", [("ko", "목록", "끄기"), ("ja", "一覧", "オフ"), ("zh-Hans", "列表", "关闭"),
                                              ("de", "liste", "aus"), ("vi", "danh sách", "tắt")])
def test_localized_list_and_off(engine: Engine, snap, lang: str, listing: str, off: str) -> None:  # type: ignore[no-untyped-def]
    kw = {"engine": engine, "snapshot": snap, "team_id": "T1", "channel_id": "C1", "user_id": "U1", "lang": lang, "now": NOW}
    handle_digest_command("daily", **kw)
    assert handle_digest_command(listing, **kw).code == "digest.list"
    assert handle_digest_command(off, **kw).code == "digest.off"
    assert store.find_subscription(engine, "T1", "C1").status == "off"  # type: ignore[union-attr]


def test_home_errors_are_worded_in_the_users_language(engine: Engine, snap) -> None:  # type: ignore[no-untyped-def]
    handle_digest_command("daily", engine=engine, snapshot=snap, team_id="T1", channel_id="C7", user_id="U1", lang="de", now=NOW)
    sub = store.find_subscription(engine, "T1", "C7")
    assert sub is not None and sub.id is not None
    store.record_error(engine, sub.id, "is_archived", NOW)
    home = list_for_user(engine, snapshot=snap, team_id="T1", user_id="U1", lang="de")
    assert home.errors == ("⚠ <#C7>: der Kanal ist archiviert.",)
    home_ko = list_for_user(engine, snapshot=snap, team_id="T1", user_id="U1", lang="ko")
    assert home_ko.errors == ("⚠ <#C7>: 채널이 보관되었습니다.",)
    store.record_error(engine, sub.id, "some_new_code", NOW)
    assert "some_new_code" in list_for_user(engine, snapshot=snap, team_id="T1", user_id="U1", lang="en").errors[0]
