"""Budgets: amounts with currencies ("under $500", "$2/hr", "2w左右的预算", "50만원", "3万円") in USD."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from bot.parse.anchors import anchors, has_any, has_digit
from bot.parse.ask import Budget
from bot.parse.notes import Note
from bot.parse.numbers import MULTIPLIERS, NUMBER, number_not_after
from bot.parse.vocabulary import Vocabulary, phrase_regex

_MONEY_MULT = r"k|w|万|萬|만|千|천|mm|m|million|억|亿|億|triệu|nghìn"
_BUDGET_WORDS = r"预算|預算|budget|예산|予算|presupuesto|ngân sách|kinh phí|经费|經費"
_PER_HOUR_BEFORE = (
    "每小时", "每小時", "一小时", "1小时", "시간당", "時間あたり", "1時間", "一時間", "时租", "時租", "per hour", "hourly",
    "mỗi giờ",
)
# Default currency for an amount written without one, by the language it was written in.
DEFAULT_CURRENCY = {
    "en": "USD", "zh-Hans": "CNY", "zh-Hant": "CNY", "ko": "KRW", "ja": "JPY",
    "es": "USD", "de": "EUR", "fr": "EUR", "vi": "VND",
}
CENT = Decimal("0.01")
MAX_USD = Decimal(10) ** 10  # more than any GPU job (the largest training runs cost ~$1B); a slip, not a budget
_MINUS = "-−"
_SIGNED = re.compile(r"[-−]\s?\d|[$€£¥₩]\s?[-−]")  # a minus before a number, or after a currency sign


@dataclass(frozen=True, slots=True)
class MoneyFound:
    """The budget, the spans it used (blanked for later extractors), and assumptions made."""

    budget: Budget
    spans: tuple[tuple[int, int], ...] = ()
    assumed: dict[str, str] = field(default_factory=dict)
    notes: tuple[Note, ...] = ()  # amounts written but not usable: "$-100", "$0", "$1e15"


_PREFIX_SYMBOLS = ("$", "us$", "€", "£", "¥", "₩", "rmb", "usd", "eur", "cny", "krw", "jpy", "gbp")


@functools.lru_cache(maxsize=1)
def _patterns(vocab_id: int, symbols: tuple[str, ...]) -> tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]:
    """The four amount patterns, each with its anchors (a currency symbol or a budget word)."""
    prefix_syms = [s for s in symbols if s in _PREFIX_SYMBOLS]
    rest = rf"(?:\s?(?:-|~|–|to|至|到|bis|à|a)\s?(?P<num2>{NUMBER}))?\s?(?P<mult>{_MONEY_MULT})?"
    amount = rf"(?P<num>{NUMBER}){rest}"
    prefixed = rf"(?<![a-z0-9])(?P<sym>{phrase_regex(prefix_syms)})\s?{amount}(?![a-z0-9])"
    suffixed = rf"(?P<num>{number_not_after('0-9.a-z$€£¥₩', comma=True)}){rest}\s?(?P<sym>{phrase_regex(list(symbols))})(?!(?:rtx|gtx)?[a-z]{{0,2}}\d)"
    gap = r"\s?(?:is|of|about|around|up to|max|:|：|=|是|为|為|约|約|大概|大约|在|는|은|は|が|khoảng|tầm|de|von|env\.?|~|≈)?\s?"
    budget_first = rf"(?:{_BUDGET_WORDS}){gap}(?<![a-z]){amount}(?![0-9a-z])"
    budget_last = rf"(?P<num>{number_not_after('0-9.a-z', comma=True)}){rest}\s?(?:左右|以内|以下|上下|ぐらい|くらい|정도|정도의)?\s?(?:的|の)?\s?(?:{_BUDGET_WORDS})"
    budget_words = anchors(_BUDGET_WORDS.split("|"))
    return (
        (re.compile(prefixed), anchors(prefix_syms)),
        (re.compile(suffixed), anchors(symbols)),
        (re.compile(budget_first), budget_words),
        (re.compile(budget_last), budget_words),
    )


@functools.lru_cache(maxsize=1)
def _negative_patterns(vocab_id: int, symbols: tuple[str, ...]) -> re.Pattern[str]:
    """A sign the amount patterns do not read: "$-100", "$ −5", "budget -100", "预算-100"."""
    prefix_syms = phrase_regex([s for s in symbols if s in _PREFIX_SYMBOLS])
    gap = r"\s?(?:is|of|:|：|=|是|为|為|는|은|は|が|de|von)?\s?"
    return re.compile(rf"(?<![a-z0-9])(?:{prefix_syms}|(?:{_BUDGET_WORDS}){gap})\s?[{_MINUS}]\s?(?:{NUMBER})")


def find_money(text: str, vocabulary: Vocabulary, language: str) -> MoneyFound:
    """Total and per-hour budget in USD, plus a qualitative level from budget words."""
    level = vocabulary.budget_levels.first(text)
    total: Decimal | None = None
    hourly: Decimal | None = None
    spans: list[tuple[int, int]] = []
    assumed: dict[str, str] = {}
    refused: list[Note] = []
    patterns = _patterns(id(vocabulary), tuple(vocabulary.currency_symbols)) if has_digit(text) else ()
    if patterns and _SIGNED.search(text):
        for m in _negative_patterns(id(vocabulary), tuple(vocabulary.currency_symbols)).finditer(text):
            spans.append(m.span())
            refused.append(Note("budget_not_positive", given=m.group(0)))
    for pattern, words in patterns:
        if not has_any(text, words):
            continue
        for m in pattern.finditer(text):
            if any(s < m.end() and m.start() < e for s, e in spans):
                continue
            if _after_minus(text, m.start()):  # "-$100", "-100元": negative, never read as 100
                spans.append(m.span())
                refused.append(Note("budget_not_positive", given=text[m.start() - 1 : m.end()].lstrip()))
                continue
            notes: dict[str, str] = {}
            usd = _to_usd(m, vocabulary, language, notes)
            if usd is None:  # a currency without a rate: not an amount we can use, as before
                continue
            if usd <= 0 or usd > MAX_USD:
                spans.append(m.span())
                refused.append(_refusal(m.group(0), usd))
                continue
            spans.append(m.span())
            if _is_per_hour(text, m.start(), m.end(), vocabulary):
                if hourly is None:
                    hourly = usd
                    assumed.update({f"{k}_per_hour": v for k, v in notes.items()})
            elif total is None:
                total = usd
                assumed.update(notes)
    budget = Budget(usd_total=total, usd_per_hour=hourly, qualitative=level)
    return MoneyFound(budget, tuple(spans), assumed, tuple(refused))


def _after_minus(text: str, start: int) -> bool:
    """A minus sign just before `start` that is not a range's dash ("100-200元" is a range)."""
    i = start - 1
    if i >= 0 and text[i] == " ":
        i -= 1
    if i < 0 or text[i] not in _MINUS:
        return False
    return i == 0 or not text[i - 1].isalnum()


def _refusal(given: str, usd: Decimal) -> Note:
    if usd > MAX_USD:
        return Note("budget_too_large", given=given, max_usd=int(MAX_USD))
    return Note("budget_not_positive", given=given)


def _to_usd(m: re.Match[str], vocabulary: Vocabulary, language: str, assumed: dict[str, str]) -> Decimal | None:
    raw = (m.group("num2") or m.group("num")).replace(",", "")
    try:
        amount = Decimal(raw) * Decimal(str(MULTIPLIERS.get(m.group("mult") or "", 1.0)))
    except InvalidOperation:
        return None
    if amount <= 0:
        return Decimal(0) if amount == 0 else None
    sym = m.groupdict().get("sym")
    code = vocabulary.currency_symbols.get(sym, "") if sym else DEFAULT_CURRENCY.get(language, "USD")
    if code == "YEN_SIGN":
        code = "JPY" if language == "ja" else "CNY"
        assumed["currency"] = f"¥ read as {code}"
    elif not sym:
        assumed["currency"] = f"amount without a currency read as {code}"
    rate = vocabulary.usd_per_unit.get(code)
    if rate is None:
        return None
    if amount * rate > MAX_USD:  # refused by the caller; quantize would overflow Decimal's 28 digits
        return amount * rate
    usd = (amount * rate).quantize(CENT, rounding=ROUND_HALF_UP)
    if code != "USD":
        assumed["exchange_rate"] = (
            f"{amount.normalize():f} {code} = ${usd} at {rate} USD/{code} ({vocabulary.rates_as_of})"
        )
    return usd


def _is_per_hour(text: str, start: int, end: int, vocabulary: Vocabulary) -> bool:
    after = text[end : end + 16].lstrip()
    if any(after.startswith(p) for p in vocabulary.per_hour):
        return True
    before = text[max(0, start - 12) : start]
    return any(p in before for p in _PER_HOUR_BEFORE)
