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

# A time after "takes about" / before "걸리는" is how long the run lasts, not the time available.
_RUN_LENGTH_BEFORE = re.compile(
    r"(?:takes?|took|taking|lasts?|will take|would take|runs? for|dauert|dauerte|tarda|tardó|lleva|prend|"
    r"prendra|dure|dura|durará|dauern|mất|hết|耗时|耗時|花了|跑了|需要|要跑|要花)\s?"
    r"(?:about|around|roughly|approx\.?|approximately|like|~|etwa|ca\.|circa|unos|unas|aproximadamente|"
    r"environ|à peu près|khoảng|chừng|大概|大约|大約|约|約)?\s?$"
)
_RUN_LENGTH_AFTER = re.compile(r"^\s?(?:정도|쯤|くらい|ぐらい|程度|左右)?\s?(?:걸리|걸려|걸릴|かか)")


def is_run_length(text: str, start: int, end: int) -> bool:
    """Whether the time at text[start:end] says how long training lasts ("takes about 10 hours")."""
    return bool(_RUN_LENGTH_BEFORE.search(text[max(0, start - 24) : start])
                or _RUN_LENGTH_AFTER.match(text[end : end + 8]))


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
    hours = compact.search(text) if "h" in text else None
    if hours and not is_run_length(text, hours.start(), hours.end()):
        return float(hours.group(1))
    days = _BARE_DAYS.search(text) if has_any(text, _BARE_DAYS_ANCHORS) else None
    if days and not is_run_length(text, days.start(), days.end()):
        weeks = days.group(2) in ("week", "weeks", "星期", "周", "週", "woche", "wochen", "tuần")
        return float(days.group(1)) * (168 if weeks else 24)
    return None


def _amount(token: str, vocabulary: Vocabulary) -> float | None:
    return parse_number(token) or vocabulary.count_words.get(token) or cjk_number(token)
