"""Deadlines: "by tomorrow", "in 2 days", "48h", "3天内", "3일 안에", "3日以内", "en 2 días"."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from bot.parse.anchors import anchors, has_any, has_digit
from bot.parse.notes import Note
from bot.parse.numbers import cjk_number, parse_number
from bot.parse.vocabulary import Vocabulary, phrase_regex

MAX_DEADLINE_HOURS = 24 * 365
_MINUS = "-−"
# A deadline already past, in each language: a "by"/"until" word with a past time ("by yesterday",
# "bis gestern", "昨天之前", "어제까지", "昨日までに"). A past time alone ("I trained it yesterday") is no deadline.
_PAST = re.compile(
    r"(?<![a-z])(?:by|before|until|till|due|deadline(?: is| of)?:?)\s(?:yesterday|last (?:night|week|month|year)"
    r"|(?:\d+|a|an|one|two|three) (?:hours?|days?|weeks?|months?) ago)(?![a-z])"
    r"|(?:昨天|昨日|前天|上周|上週|上个月|上個月|上星期)(?:之前|以前|前|までに|まで)"
    r"|(?:어제|그저께|지난주|지난달)\s?까지|(?:昨日|一昨日|先週|先月)(?:までに|まで)"
    r"|(?<![a-z])(?:para|antes de|hasta) (?:ayer|anteayer|la semana pasada)(?![a-z])"
    r"|(?<![a-z])bis (?:gestern|vorgestern|letzte woche)(?![a-z])"
    r"|(?<![a-z])(?:pour|avant|d'ici) (?:hier|avant-hier|la semaine dernière)(?![a-z])"
    r"|(?<![a-z])(?:trước|đến|tới) (?:hôm qua|hôm kia|tuần trước)(?![a-z])"
)
_PAST_ANCHORS = ("yesterday", "last ", " ago", "昨", "前天", "上周", "上週", "上个", "上個", "上星期", "어제", "그저께",
                 "지난", "先週", "先月", "ayer", "pasada", "gestern", "letzte", "hier", "dernière", "hôm qua",
                 "hôm kia", "tuần trước")


@dataclass(frozen=True, slots=True)
class Deadline:
    """Hours until the work must be done (None = not said) and what could not be used as one; `media_hours`: a
    length of recorded audio or video the text names ("1000 hours of audio"), which is never a deadline."""

    hours: float | None
    notes: tuple[Note, ...] = ()
    media_hours: float | None = None
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


# A time followed by what it measures is data, not the time available: "100 hours of audio", "500小时的语音",
# "100時間の音声", "100시간 분량의 음성", "100 horas de audio", "100 heures d'audio", "100 Stunden Audio",
# "100 giờ âm thanh". Said as a note (the card reads no audio length as a dataset yet), never a deadline.
_MEDIA_AFTER = re.compile(
    r"^\s?(?:of\s(?:transcribed\s|labeled\s|labelled\s)?(?:audio|speech|recordings?|video|footage|podcasts?|calls?)"
    r"|(?:的)?(?:音频|音頻|语音|語音|录音|錄音|视频|視頻)|の?(?:音声|録音|動画)|\s?(?:분량의\s?)?(?:오디오|음성|녹음|영상)"
    r"|de\s(?:audio|voz|grabaci[oó]n|v[ií]deo)|d['’]audio|de\s(?:parole|vid[eé]o)|(?:an\s)?(?:audio|sprache|aufnahmen?|video)"
    r"|(?:âm thanh|ghi âm|giọng nói|video))(?![a-z])"
)


# A number of hours (or minutes) in any of the eight languages, for a length of media.
_MEDIA_TIME = re.compile(
    r"(?<![0-9.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s?(k\s?)?(hours?|hrs?|h|minutes?|mins?|小时|小時|時間|시간|분|"
    r"horas?|heures?|stunden|minuten|giờ|phút|分钟|分鐘|分)(?![a-z])"
)
_MEDIA_ANCHORS = ("audio", "speech", "recording", "video", "footage", "podcast", "call", "音频", "音頻", "语音", "語音",
                  "录音", "錄音", "视频", "視頻", "音声", "録音", "動画", "오디오", "음성", "녹음", "영상", "voz", "grabaci",
                  "vídeo", "parole", "vidéo", "sprache", "aufnahme", "âm thanh", "ghi âm", "giọng nói")


def find_media_length(text: str) -> tuple[float, int, int] | None:
    """(hours, start, end) of the first length of recorded media ("1000 hours of audio", "500小时的语音",
    "30 minutes of video"), else None."""
    if not has_any(text, _MEDIA_ANCHORS):
        return None
    for m in _MEDIA_TIME.finditer(text):
        extra = media_words(text, m.end())
        if not extra:
            continue
        value = float(m.group(1).replace(",", "")) * (1000 if m.group(2) else 1)
        minutes = m.group(3) in ("minute", "minutes", "min", "mins", "분", "minuten", "phút", "分钟", "分鐘", "分")
        return (value / 60 if minutes else value), m.start(), m.end() + extra
    return None


def media_words(text: str, end: int) -> int:
    """How many characters after text[end] say the time measures recorded media (" of audio"), else 0."""
    found = _MEDIA_AFTER.match(text[end : end + 24])
    return found.end() if found else 0


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
    return find_deadline(text, vocabulary).hours


def find_deadline(text: str, vocabulary: Vocabulary) -> Deadline:
    """The deadline in hours; one in the past ("by yesterday", "in -3 days", "in 0 hours") is a note instead."""
    past = _PAST.search(text) if has_any(text, _PAST_ANCHORS) else None
    if past is not None:
        return Deadline(None, (Note("deadline_past", given=past.group(0)),))
    media = find_media_length(text) if has_digit(text) else None
    if media is not None:  # said as data, then looked for a deadline in the rest
        found = find_deadline(text[: media[1]] + " " * (media[2] - media[1]) + text[media[2] :], vocabulary)
        note = Note("media_length", given=text[media[1] : media[2]])
        return Deadline(found.hours, (*found.notes, note), media[0])
    for hours, _, _ in vocabulary.deadline_phrases.find(text):
        return Deadline(float(hours))
    counts = tuple(vocabulary.count_words)
    units = tuple(vocabulary.time_units)
    before, after, compact = _patterns(id(vocabulary), vocabulary.deadline_prefixes, units, counts)
    for pattern, words in (before, after):
        if not has_any(text, words):
            continue
        for m in pattern.finditer(text):
            value = _amount(m.group(1), vocabulary)
            unit_hours = vocabulary.time_units.get(m.group(2))
            if value == 0 and unit_hours:
                return Deadline(None, (Note("deadline_past", given=m.group(0)),))
            if value and unit_hours and value * unit_hours <= MAX_DEADLINE_HOURS:
                return Deadline(value * unit_hours)
    if not has_digit(text):
        return Deadline(None)
    hours = compact.search(text) if "h" in text else None
    if hours and not is_run_length(text, hours.start(), hours.end()):
        return _checked(text, hours, float(hours.group(1)))
    days = _BARE_DAYS.search(text) if has_any(text, _BARE_DAYS_ANCHORS) else None
    if days and not is_run_length(text, days.start(), days.end()):
        weeks = days.group(2) in ("week", "weeks", "星期", "周", "週", "woche", "wochen", "tuần")
        return _checked(text, days, float(days.group(1)) * (168 if weeks else 24))
    return Deadline(None)


def _checked(text: str, m: re.Match[str], hours: float) -> Deadline:
    """A bare "48h" / "3 days": zero or written with a minus sign ("-3 days") is a past deadline."""
    minus = m.start() > 0 and text[m.start() - 1] in _MINUS and not text[m.start() - 2 : m.start() - 1].isalnum()
    if hours <= 0 or minus:
        return Deadline(None, (Note("deadline_past", given=text[m.start() - (1 if minus else 0) : m.end()]),))
    return Deadline(hours)


def _amount(token: str, vocabulary: Vocabulary) -> float | None:
    number = parse_number(token)
    if number is not None:  # 0 is a number (a deadline now: in the past by the time it runs)
        return number
    return vocabulary.count_words.get(token) or cjk_number(token)
