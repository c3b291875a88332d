"""Locale catalogs: every language has every key with the same placeholders, and sentences are translated."""

from __future__ import annotations

import re

import pytest

from bot.render.formats import Formatter
from bot.render.messages import LANGUAGES, Messages, load_catalog, normalise_language, placeholders

OTHER = [lang for lang in LANGUAGES if lang != "en"]
# Messages that are names, units or notation in some languages, so the same text is the translation.
SAME_AS_ENGLISH_OK = {
    "row.fp16", "row.fp8", "row.fp32", "row.tdp", "row.vram", "row.mig", "row.segment", "row.architecture",
    "row.software", "row.source", "tier.spot", "mem.logits", "mem.gradients", "mem.activations", "mem.total",
    "rec.option_offer", "help.header", "home.title",  # home.title: the product name, "GPU Advisor"
    "switch.checkpointing", "field.grad_checkpointing",  # Vietnamese ML writing keeps "gradient checkpointing" as the term
    "precision.awq", "precision.gptq", "precision.nf4",  # format names with their bit width ("AWQ 4-bit")
}

# Architecture, framework and serving-engine names are product names, kept in English in every language.
PRODUCT_NAME_PREFIXES = ("arch.", "value.framework.", "value.engine.")


def english_words(message: str) -> list[str]:
    """Words of a message with placeholders, markup and notation removed."""
    text = re.sub(r"\{[^}]*\}", " ", message)
    text = re.sub(r"`[^`]*`", " ", text)
    return re.findall(r"[A-Za-z]{3,}", text)


@pytest.mark.parametrize("lang", OTHER)
def test_every_locale_has_every_key(lang: str) -> None:
    english, other = load_catalog("en"), load_catalog(lang)
    assert sorted(set(english) - set(other)) == []
    assert sorted(set(other) - set(english)) == []


@pytest.mark.parametrize("lang", OTHER)
def test_placeholders_match_english(lang: str) -> None:
    english, other = load_catalog("en"), load_catalog(lang)
    wrong = {k: (sorted(placeholders(v)), sorted(placeholders(other[k]))) for k, v in english.items()
             if k in other and placeholders(v) != placeholders(other[k])}
    assert wrong == {}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_message_formats(lang: str) -> None:
    messages = Messages.for_language(lang)
    for key, message in messages.catalog.items():
        values = {name: "X" for name in placeholders(message)}
        assert messages.text(key, **values).strip(), key


@pytest.mark.parametrize("lang", OTHER)
def test_sentences_are_translated(lang: str) -> None:
    """A message with English words must differ from English unless it is a name or unit (listed)."""
    english, other = load_catalog("en"), load_catalog(lang)
    untranslated = [k for k, v in english.items()
                    if len(english_words(v)) >= 2 and other[k] == v
                    and k not in SAME_AS_ENGLISH_OK and not k.startswith(PRODUCT_NAME_PREFIXES)]
    assert untranslated == []


@pytest.mark.parametrize(
    ("lang", "blackwell", "ampere", "ada"),
    [
        # As ../shared/guides/000_*.txt (Chinese table) and 002_*.txt (Korean table) write them.
        ("zh-Hans", "布莱克韦尔", "安培", "艾达·洛夫莱斯"),
        ("ko", "블랙웰", "암페어", "에이다 러브레이스"),
        ("en", "Blackwell", "Ampere", "Ada Lovelace"),
    ],
)
def test_architecture_names_follow_the_guides(lang: str, blackwell: str, ampere: str, ada: str) -> None:
    f = Formatter(Messages.for_language(lang))
    assert f.architecture("Blackwell") == blackwell
    assert f.architecture("Ampere") == ampere
    assert f.architecture("Ada Lovelace") == ada
    assert f.architecture("CDNA 4") == "CDNA 4"  # AMD names stay as they are


def test_guide_table_names_exactly() -> None:
    """The Chinese guide writes 布莱克韦尔 Ultra; the Korean guide writes 에이다 러브레이스 with a space."""
    assert Formatter(Messages.for_language("zh-Hans")).architecture("Blackwell Ultra") == "布莱克韦尔 Ultra"
    assert Formatter(Messages.for_language("ko")).architecture("Ampere (GA102)") == "암페어 (GA102)"


@pytest.mark.parametrize(
    ("tag", "language"),
    [("ko-KR", "ko"), ("zh_CN", "zh-Hans"), ("zh-Hant", "zh-Hans"), ("ES", "es"), ("es-LA", "es"),
     ("pt-BR", "en"), (None, "en"), ("", "en"), ("ja-JP", "ja"), ("vi", "vi")],
)
def test_normalise_language(tag: str | None, language: str) -> None:
    assert normalise_language(tag) == language


@pytest.mark.parametrize("lang", LANGUAGES)
def test_fast_number_and_money_formatting_equals_babel(lang: str) -> None:
    """The cached formatter must print exactly what Babel prints for the locale (CLDR is the reference)."""
    from decimal import Decimal

    from babel.numbers import format_currency, format_decimal

    from bot.render.messages import BABEL_LOCALES

    f, locale = Formatter(Messages.for_language(lang)), BABEL_LOCALES[lang]
    for value in (0, 0.5, 2039, 2039.5, 19.5, 1307.4, 12345678.25, 0.229999, Decimal("1.10"), 91.6):
        for digits in (0, 1, 2):
            assert f.number(value, digits) == format_decimal(
                value, format="#,##0" + ("." + "#" * digits if digits else ""), locale=locale)
            assert f.fixed(value, digits) == format_decimal(
                value, format="#,##0" + ("." + "0" * digits if digits else ""), locale=locale)
    for usd in (Decimal("1.10"), Decimal("0.229999"), Decimal("12345.6"), Decimal("32.77")):
        assert f.money(usd) == format_currency(usd, "USD", locale=locale)
