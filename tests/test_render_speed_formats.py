"""The fast per-locale formatters (bot.render.formats) write exactly what Babel writes, in every language.

Percentages and whole-dollar amounts are no longer formatted by Babel per value (~45-60 µs a call); the affixes
are read off Babel's output once per locale. These sweeps hold the result to Babel's own for many values,
including rounding ties, negatives, zeros and large numbers.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from babel.numbers import format_currency, format_percent

from bot.render.formats import Formatter, _percent_pattern
from bot.render.messages import BABEL_LOCALES, LANGUAGES, Messages

FRACTIONS = [0, 0.0, -0.0, 1, -1, 0.053, -0.053, 0.5, 0.00125, 0.00135, 0.00145, -0.00125, 0.0005, 0.0015, 0.9999,
             0.99995, 12.3456, 1234.5678, -1234.5678, 1e-9, -1e-9, 0.1 + 0.2, 1 / 3, 2 / 3, 123456.789,
             Decimal("0.00125"), Decimal("-0.31"), Decimal("10")] + [i / 997 for i in range(-300, 300, 7)]
AMOUNTS = [Decimal(0), Decimal("0.4"), Decimal("0.5"), Decimal("1.5"), Decimal("2.5"), Decimal("999.5"),
           Decimal("1234.49"), Decimal("1234.5"), Decimal("1000000"), Decimal("12345678.9"), 2199.99, 0.49, 1e7,
           Decimal("1E+3")] + [Decimal(i) / 3 for i in range(0, 5000, 37)]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("signed", [False, True])
def test_percent_is_babels(language: str, signed: bool) -> None:
    f = Formatter(Messages.for_language(language))
    locale = BABEL_LOCALES[language]
    pattern = _percent_pattern(locale)
    babel_format = f"+{pattern};-{pattern}" if signed else pattern
    for fraction in FRACTIONS:
        expected = format_percent(fraction, format=babel_format, locale=locale)
        assert f.percent(fraction, signed=signed) == expected, (language, fraction)  # type: ignore[arg-type]


@pytest.mark.parametrize("language", LANGUAGES)
def test_whole_dollars_are_babels(language: str) -> None:
    f = Formatter(Messages.for_language(language))
    locale = BABEL_LOCALES[language]
    pattern = "¤#,##0" if locale in ("en", "ja", "ko", "zh_Hans") else "#,##0 ¤"
    for amount in [*AMOUNTS, Decimal("-0.4"), Decimal("-1234.5")]:
        expected = format_currency(Decimal(str(amount)).quantize(Decimal(1)), "USD", format=pattern, locale=locale,
                                   currency_digits=False)
        assert f.money(amount, cents=False) == expected, (language, amount)


def test_wall_clock_hours_past_a_year_say_the_years() -> None:
    """156,562 h / 8,760 h a year = 17.9 years, said as CLDR's whole years; under a year the hours alone."""
    from bot.render.cards import language_tools

    _, en = language_tools("en")
    assert en.wall_hours(156_562) == "156,562 h (18 years)"
    assert en.wall_hours(8_000) == en.hours(8_000) == "8,000 h"
    _, de = language_tools("de")
    assert de.wall_hours(156_562) == "156.562 Std. (18 Jahre)"


def test_a_gpu_name_that_carries_its_memory_is_not_followed_by_it_again() -> None:
    from bot.render.cards import language_tools
    from bot.render.findings import coded_text

    _, f = language_tools("en")
    numbers = {"gpu": "apple-m3-ultra-96gb", "vram_gb": 96, "purchase_usd": 3999.0, "price_basis": "new",
               "price_year": "2025", "precision": "gguf-q8_0", "needed_gib": 71.3}
    text = coded_text("finding", "pinned.buy_one", numbers, f, gpu="Apple M3 Ultra (96 GB)")
    assert "Apple M3 Ultra (96 GB) at $3,999.00" in text and "(96 GB) (96 GB)" not in text
    plain = coded_text("finding", "pinned.buy_one", {**numbers, "vram_gb": 24}, f, gpu="Radeon RX 7900 XTX")
    assert "Radeon RX 7900 XTX (24 GB) at" in plain
