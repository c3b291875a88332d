"""Locale-aware values for cards via Babel: numbers, money, dates, ages, and localized catalog names."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from datetime import date, datetime, timedelta
from decimal import Decimal

from babel import Locale
from babel.dates import format_date, format_timedelta
from babel.numbers import (
    format_compact_decimal, format_currency, format_percent, get_decimal_symbol, get_group_symbol,
)

from bot.render.messages import BABEL_LOCALES, Messages

DASH = "—"
GIB = 1024**3
HOURS_PER_YEAR = 8760.0  # 365 days
# Architecture families the locales name ("Blackwell (GB202)" keeps its chip suffix untranslated).
ARCH_FAMILIES = ("Blackwell Ultra", "Blackwell", "Hopper", "Ada Lovelace", "Ampere", "Turing", "Volta", "Pascal")


@lru_cache(maxsize=None)
def _symbols(locale: str) -> tuple[str, str]:
    """The locale's decimal and group separators (CLDR, via Babel)."""
    return get_decimal_symbol(locale), get_group_symbol(locale)


@lru_cache(maxsize=None)
def _money_template(locale: str) -> str:
    """Babel's USD format for the locale with the amount as a slot ("$\0", "\0 $US", "US$\0")."""
    sample = format_currency(Decimal("1234.50"), "USD", locale=locale)
    return sample.replace(_grouped(Decimal("1234.50"), 2, locale, trim=False), "\0")


@lru_cache(maxsize=None)
def _babel_locale(locale: str) -> Locale:
    """The parsed Babel locale: Babel's functions re-parse an identifier string on every call (~20 µs)."""
    return Locale.parse(locale)


@lru_cache(maxsize=None)
def _whole_money_template(locale: str) -> str:
    """Babel's whole-dollar USD format for the locale with the amount as a slot ("$\0", "\0 $US")."""
    sample = format_currency(Decimal(1234), "USD", format=_whole_money_pattern(locale), locale=_babel_locale(locale),
                             currency_digits=False)
    return sample.replace(_grouped(Decimal(1234), 0, locale, trim=False), "\0")


def _whole_money_pattern(locale: str) -> str:
    return "¤#,##0" if locale in ("en", "ja", "ko", "zh_Hans") else "#,##0 ¤"


@lru_cache(maxsize=None)
def _percent_pattern(locale: str) -> str:
    """The locale's own percent pattern (CLDR: "#,##0%", "#,##0 %") with one optional decimal."""
    pattern = str(Locale.parse(locale).percent_formats[None].pattern)
    return pattern.replace("#,##0", "#,##0.#", 1) if "#,##0." not in pattern else pattern


def _percent_format(locale: str, signed: bool) -> str:
    pattern = _percent_pattern(locale)
    return f"+{pattern};-{pattern}" if signed else pattern


@lru_cache(maxsize=None)
def _percent_affixes(locale: str, signed: bool) -> tuple[tuple[str, str], tuple[str, str]]:
    """What Babel writes around a percentage, (prefix, suffix) for a positive and a negative one, read off its own
    output for a sample once per locale: Babel parses the pattern again on every call (~45 µs)."""
    number = _grouped(Decimal("1234.5"), 1, locale, trim=True)
    affixes = []
    for sample in (Decimal("12.345"), Decimal("-12.345")):
        text = format_percent(sample, format=_percent_format(locale, signed), locale=_babel_locale(locale))
        prefix, found, suffix = text.partition(number)
        if not found:
            raise ValueError(f"percent format of {locale!r} does not hold its number: {text!r}")
        affixes.append((prefix, suffix))
    return affixes[0], affixes[1]


@lru_cache(maxsize=256)
def _medium_date(when: datetime | date, locale: str) -> str:
    """Babel's medium date, cached: every priced card shows the snapshot's price date (~0.1 ms per call)."""
    return format_date(when, format="medium", locale=locale)


def _grouped(value: float | int | Decimal, digits: int, locale: str, trim: bool) -> str:
    """Babel-equivalent #,##0.## formatting for our locales (all group by three), done fast.

    Babel re-parses its pattern on every call, which made a comparison card take ~9 ms to render.
    """
    text = f"{Decimal(str(value)):,.{digits}f}" if isinstance(value, float) else f"{value:,.{digits}f}"
    if trim and "." in text:
        text = text.rstrip("0").rstrip(".")
    decimal, group = _symbols(locale)
    if decimal == "." and group == ",":
        return text  # English, and any locale writing numbers the way Python does
    return text.replace(",", "\x00").replace(".", decimal).replace("\x00", group)


@dataclass(frozen=True, slots=True)
class Formatter:
    """Formats values for one language; templates call it as `f`."""

    messages: Messages
    locale: str = field(init=False)  # Babel's name of the language (read for every number)

    def __post_init__(self) -> None:
        object.__setattr__(self, "locale", BABEL_LOCALES[self.messages.language])

    def number(self, value: float | int | Decimal | None, digits: int = 0) -> str:
        """A grouped number with at most `digits` decimals (trailing zeros dropped); None → —."""
        if value is None:
            return DASH
        return _grouped(value, digits, self.locale, trim=True)

    def fixed(self, value: float | int | Decimal | None, digits: int = 1) -> str:
        """A grouped number with exactly `digits` decimals; None → —."""
        if value is None:
            return DASH
        return _grouped(value, digits, self.locale, trim=False)

    def compact(self, value: float | int | None) -> str:
        """A short large number: 1.2B, 12亿, 12억."""
        if value is None:
            return DASH
        return format_compact_decimal(value, format_type="short", fraction_digits=1, locale=_babel_locale(self.locale))

    def money(self, usd: Decimal | float | None, cents: bool = True) -> str:
        """US dollars in the locale's currency format; whole dollars when `cents` is False."""
        if usd is None:
            return DASH
        amount = Decimal(str(usd))
        if not cents:
            whole = amount.quantize(Decimal(1))
            if whole.is_signed() or not whole.is_finite():  # Babel's own sign and symbols (never a price)
                return format_currency(whole, "USD", format=_whole_money_pattern(self.locale),
                                       locale=_babel_locale(self.locale), currency_digits=False)
            return _whole_money_template(self.locale).replace("\0", _grouped(whole, 0, self.locale, trim=False))
        if amount < 0:
            return format_currency(amount, "USD", locale=_babel_locale(self.locale))
        return _money_template(self.locale).replace("\0", _grouped(amount, 2, self.locale, trim=False))

    def rate(self, usd_per_hour: Decimal | float | None) -> str:
        """Dollars per GPU-hour: "$1.10/GPU-h" in the locale's words."""
        if usd_per_hour is None:
            return DASH
        return self.messages.plain("unit.per_gpu_hour", price=self.money(usd_per_hour))

    def percent(self, fraction: float | None, signed: bool = False) -> str:
        """A percentage from a fraction (0.053 → 5.3%, 5,3 % in German and French), with a sign when asked."""
        if fraction is None:
            return DASH
        value = (fraction if isinstance(fraction, Decimal) else Decimal(str(fraction))).scaleb(2)
        if not value.is_finite():
            return format_percent(fraction, format=_percent_format(self.locale, signed), locale=_babel_locale(self.locale))
        prefix, suffix = _percent_affixes(self.locale, signed)[1 if value.is_signed() else 0]
        return prefix + _grouped(abs(value), 1, self.locale, trim=True) + suffix

    def date(self, when: datetime | date | None) -> str:
        """A medium date ("Mar 4, 2025", "2025年3月4日")."""
        if when is None:
            return DASH
        return _medium_date(when, self.locale)

    def age(self, then: datetime | None, now: datetime) -> str:
        """How long ago, in words ("3 days ago", "3天前")."""
        if then is None:
            return DASH
        return format_timedelta(then - now, add_direction=True, threshold=1.0, locale=_babel_locale(self.locale))

    def hours(self, hours: float | None) -> str:
        """A duration in hours with sensible precision; under an hour shown in minutes."""
        if hours is None:
            return DASH
        if hours < 1:
            return self.messages.plain("unit.minutes", minutes=self.number(max(hours * 60, 1)))
        digits = 1 if hours < 100 else 0
        return self.messages.plain("unit.hours", hours=self.number(hours, digits))

    def wall_hours(self, hours: float) -> str:
        """Wall-clock hours of a run, with the years they come to past a year: "156,562 h (18 years)"."""
        text = self.hours(hours)
        if hours >= HOURS_PER_YEAR:
            years = format_timedelta(timedelta(hours=hours), granularity="year", threshold=1.0, format="long",
                                     locale=_babel_locale(self.locale))
            text = f"{text} ({years})"
        return text

    def gib(self, value_gib: float | None) -> str:
        """Memory in GiB with one decimal."""
        if value_gib is None:
            return DASH
        return f"{self.fixed(value_gib, 1)} GiB"

    def gb(self, value_gb: float | None) -> str:
        """Memory in GB as catalogs write it (80 GB, 24 GB)."""
        return DASH if value_gb is None else f"{self.number(value_gb, 1)} GB"

    def tflops(self, value: float | None) -> str:
        return DASH if value is None else f"{self.number(value, 1)} TFLOPS"

    def architecture(self, name: str) -> str:
        """The locale's name for an architecture family (布莱克韦尔, 암페어), chip suffix kept."""
        for family in ARCH_FAMILIES:
            if name == family or name.startswith(family + " ") or name.startswith(family + "("):
                return self.messages.plain(f"arch.{family.lower().replace(' ', '_')}") + name[len(family):]
        return name

    def segment(self, segment: str) -> str:
        key = "segment." + segment
        return self.messages.plain(key) if self.messages.has(key) else segment

    def billing(self, increment_s: int) -> str:
        """Billing granularity in words."""
        names = {1: "billing.second", 60: "billing.minute", 3600: "billing.hour"}
        if increment_s in names:
            return self.messages.plain(names[increment_s])
        return self.messages.plain("billing.other", seconds=self.number(increment_s))

