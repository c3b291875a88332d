"""Texts of `/gpu digest|alert`, alert DMs and App Home digest lines, from the message catalog (bot/locales).

Accepted command words: the English ones (`daily`, `weekly`, `list`, `off`, `help`, `threshold`,
`mon`…`sun`) always, and these localized ones, which mean the same:

- daily: 毎日 · 每天/每日 · 매일 · diario/diaria · täglich · quotidien/quotidienne · hàng ngày/hằng ngày/mỗi ngày
- weekly: 毎週 · 每周/每週 · 매주 · semanal · wöchentlich · hebdomadaire · hàng tuần/mỗi tuần
- list: 一覧/リスト · 列表 · 목록 · lista · liste · danh sách
- off: オフ/停止/解除 · 关闭/取消/停止 · 끄기/해지/중지 · desactivar/cancelar · aus/abbestellen · désactiver/arrêter · tắt/hủy
- help: ヘルプ · 帮助 · 도움말 · ayuda · hilfe · aide · trợ giúp
- threshold: しきい値/閾値 · 阈值 · 임계값 · umbral · schwelle · seuil · ngưỡng
- weekdays: 月曜日…日曜日 (and 月曜…) · 星期一…星期日/周一…周日 · 월요일…일요일 · lunes…domingo ·
  montag…sonntag · lundi…dimanche · thứ hai…chủ nhật
- a time may end in 時/时/点/시 (`9時`, `9시`) as well as am/pm/h.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from bot.render.formats import Formatter
from bot.render.messages import DEFAULT_LANGUAGE, Messages, load_catalog, normalise_language

log = logging.getLogger(__name__)

_WEEKDAY_WORDS = (
    ("月曜日", "月曜", "星期一", "周一", "週一", "월요일", "lunes", "montag", "lundi", "thứ hai", "thứ 2"),
    ("火曜日", "火曜", "星期二", "周二", "週二", "화요일", "martes", "dienstag", "mardi", "thứ ba", "thứ 3"),
    ("水曜日", "水曜", "星期三", "周三", "週三", "수요일", "miércoles", "miercoles", "mittwoch", "mercredi", "thứ tư", "thứ 4"),
    ("木曜日", "木曜", "星期四", "周四", "週四", "목요일", "jueves", "donnerstag", "jeudi", "thứ năm", "thứ 5"),
    ("金曜日", "金曜", "星期五", "周五", "週五", "금요일", "viernes", "freitag", "vendredi", "thứ sáu", "thứ 6"),
    ("土曜日", "土曜", "星期六", "周六", "週六", "토요일", "sábado", "sabado", "samstag", "samedi", "thứ bảy", "thứ 7"),
    ("日曜日", "日曜", "星期日", "星期天", "周日", "週日", "일요일", "domingo", "sonntag", "dimanche", "chủ nhật"),
)
_ENGLISH_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
SYNONYMS: Mapping[str, str] = {
    **{w: "daily" for w in ("毎日", "每天", "每日", "매일", "diario", "diaria", "täglich", "taeglich", "quotidien",
                            "quotidienne", "hàng ngày", "hằng ngày", "mỗi ngày")},
    **{w: "weekly" for w in ("毎週", "每周", "每週", "매주", "semanal", "wöchentlich", "woechentlich", "hebdomadaire",
                             "hàng tuần", "mỗi tuần")},
    **{w: "list" for w in ("一覧", "リスト", "列表", "목록", "lista", "liste", "danh sách")},
    **{w: "off" for w in ("オフ", "停止", "解除", "关闭", "取消", "끄기", "해지", "중지", "desactivar", "cancelar", "aus",
                          "abbestellen", "désactiver", "arrêter", "tắt", "hủy")},
    **{w: "help" for w in ("ヘルプ", "帮助", "도움말", "ayuda", "hilfe", "aide", "trợ giúp")},
    **{w: "threshold" for w in ("しきい値", "閾値", "阈值", "임계값", "umbral", "schwelle", "seuil", "ngưỡng")},
    **{w: _ENGLISH_WEEKDAYS[i] for i, words in enumerate(_WEEKDAY_WORDS) for w in words},
}
# Synonyms of more than one word (Vietnamese) are joined before the text is split into words.
_JOINER = "\u2060"  # word joiner: not whitespace, so str.split keeps a phrase whole
_PHRASES = tuple(sorted((w for w in SYNONYMS if " " in w), key=len, reverse=True))


def catalog(language: str) -> Mapping[str, str]:
    """The key → text mapping of one supported language (the whole message catalog, bot/locales)."""
    return load_catalog(language)


@dataclass(frozen=True, slots=True)
class Usd:
    """An amount of US dollars a text shows, formatted for its language (Babel): $1.50, 1,50 $, 1,50 $US."""

    amount: Decimal


@dataclass(frozen=True, slots=True)
class Percent:
    """A percentage a text shows (5 means 5 %), formatted for its language (Babel): 5%, 5 %, 5,5 %."""

    value: Decimal


@dataclass(frozen=True, slots=True)
class Day:
    """A date a text shows, formatted for its language (Babel medium date): Nov 24, 2026, 24.11.2026, 2026年11月24日."""

    day: date


def text(lang: str | None, key: str, **params: object) -> str:
    """One text in the language (English when the key is missing there, which the contract test forbids).

    `Usd`, `Percent` and `Day` values are formatted for the language, as cards format them."""
    language = normalise_language(lang)
    found = catalog(language).get(key)
    if found is None:
        log.warning("digest text %r missing in %s", key, lang)
        found = catalog(DEFAULT_LANGUAGE)[key]
    return found.format(**{name: _shown(value, language) for name, value in params.items()})


def _shown(value: object, language: str) -> object:
    if not isinstance(value, (Usd, Percent, Day)):
        return value
    f = Formatter(Messages.for_language(language))
    if isinstance(value, Day):
        return f.date(value.day)
    return f.money(value.amount) if isinstance(value, Usd) else f.percent(float(value.value) / 100)


def split_words(command: str) -> list[str]:
    """The command's words, with multi-word localized keywords kept together as one word."""
    norm = unicodedata.normalize("NFC", command)
    lowered = norm.lower()
    if len(lowered) != len(norm):  # a rare letter whose lower case is longer: no phrase joining
        return norm.split()
    for phrase in _PHRASES:
        at = lowered.find(phrase)
        while at >= 0:
            norm = norm[:at] + phrase.replace(" ", _JOINER) + norm[at + len(phrase):]
            lowered = norm.lower()
            at = lowered.find(phrase, at + len(phrase))
    return [w.replace(_JOINER, " ") for w in norm.split()]


def canonical(word: str) -> str:
    """A command word in English (`매일` → `daily`), lower-cased; other words just lower-cased."""
    w = unicodedata.normalize("NFC", word).lower().strip(",、，")
    return SYNONYMS.get(w, w)


def delivery_error(lang: str | None, code: str) -> str:
    """A stored delivery error code (`not_in_channel`, `token_revoked` …) worded for people."""
    key = f"delivery.{code}"
    if key in catalog(DEFAULT_LANGUAGE):
        return text(lang, key)
    return text(lang, "delivery.other", code=code)
