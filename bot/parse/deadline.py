"""Deadlines: "by tomorrow", "in 2 days", "48h", "3天内", "3일 안에", "3日以内", "en 2 días"."""

from __future__ import annotations

import functools
import re

from bot.parse.anchors import anchors, has_any, has_digit
from bot.parse.numbers import cjk_number, parse_number
from bot.parse.vocabulary import Vocabulary, phrase_regex

MAX_DEADLINE_HOURS = 24 * 365
# "3 days" with no "in"/"within": in a GPU question a number of days is the time available.
_BARE_DAYS = re.compile(
    r"(\d(?<![0-9.]\d)\d{0,2})\s?(days?|weeks?|天|星期|周|週|일간|日間|días|dias|tagen?|wochen?|jours?|ngày|tuần)(?![a-z])"
)
_BARE_DAYS_ANCHORS = (
    "day", "week", "天", "星期", "周", "週", "일간", "日間", "días", "dias", "tag", "woche", "jour", "ngày", "tuần",
)


@functools.lru_cache(maxsize=1)
def _patterns(
    vocab_id: int, prefixes: tuple[str, ...], units: tuple[str, ...], counts: tuple[str, ...]
) -> tuple[tuple[re.Pattern[str], tuple[str, ...]], tuple[re.Pattern[str], tuple[str, ...]], re.Pattern[str]]:
    """"in 2 days" and "3天内" with the anchors of their prefix/suffix words, and "48h"."""
    unit = phrase_regex(list(units))
    number = rf"(\d+(?:\.\d+)?|{phrase_regex(list(counts))}|[一二两兩三四五六七八九十]+)"
    latin_prefixes = [p for p in prefixes if p.isascii() or p[0].isalpha() and ord(p[0]) < 0x2E80]
    cjk_suffixes = [p for p in prefixes if p not in latin_prefixes]
    before = re.compile(rf"(?<![0-9a-z])(?:{phrase_regex(latin_prefixes)})\s{number}\s?({unit})(?![a-z0-9])")
    after = re.compile(rf"(?<![0-9.]){number}\s?(?:个)?({unit})\s?(?:{phrase_regex(cjk_suffixes)})")
    compact = re.compile(r"(\d(?<![0-9a-z.$/,]\d)\d{0,2})\s?(?:h|hrs?|hours?)(?![a-z0-9/])(?!\s?(?:/|per|each|x))")
    return (before, anchors(latin_prefixes)), (after, anchors(cjk_suffixes)), compact


def find_deadline_hours(text: str, vocabulary: Vocabulary) -> float | None:
    """Hours until the work must be done, or None. Money spans must already be blanked out."""
    for hours, _, _ in vocabulary.deadline_phrases.find(text):
        return float(hours)
    counts = tuple(vocabulary.count_words)
    units = tuple(vocabulary.time_units)
    before, after, compact = _patterns(id(vocabulary), vocabulary.deadline_prefixes, units, counts)
    for pattern, words in (before, after):
        if not has_any(text, words):
            continue
        for m in pattern.finditer(text):
            value = _amount(m.group(1), vocabulary)
            unit_hours = vocabulary.time_units.get(m.group(2))
            if value and unit_hours and value * unit_hours <= MAX_DEADLINE_HOURS:
                return value * unit_hours
    if not has_digit(text):
        return None
    m = compact.search(text) if "h" in text else None
    if m:
        return float(m.group(1))
    m = _BARE_DAYS.search(text) if has_any(text, _BARE_DAYS_ANCHORS) else None
    if m:
        weeks = m.group(2) in ("week", "weeks", "星期", "周", "週", "woche", "wochen", "tuần")
        return float(m.group(1)) * (168 if weeks else 24)
    return None


def _amount(token: str, vocabulary: Vocabulary) -> float | None:
    return parse_number(token) or vocabulary.count_words.get(token) or cjk_number(token)
