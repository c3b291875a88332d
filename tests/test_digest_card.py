"""The digest card renders through the cards template (bot/templates/blocks/digest.json.j2) in every language,
with provider display names on the change lines."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from babel.numbers import format_currency

from bot.digest.card import builtin_card, digest_view, render_digest
from bot.render.messages import LANGUAGES, load_catalog
from rules.market.changes import Change, DigestInput, GpuDigest, SeriesKey, SeriesPrice, Thresholds
from rules.types import Provider

NOW = datetime(2025, 6, 2, 9, tzinfo=UTC)
OBSERVED = datetime(2025, 6, 2, 6, tzinfo=UTC)


class _Gpu:
    def __init__(self, name: str) -> None:
        self.name = name


GPUS = {"h100-sxm-80gb": _Gpu("H100 SXM")}
PROVIDERS = {"lambda": Provider("lambda", "Lambda Cloud", "cloud", 1, "NVLink", "test"),
             "vast": Provider("vast", "Vast.ai", "marketplace", 1, "PCIe", "test")}


def _digest() -> DigestInput:
    drop_key = SeriesKey("h100-sxm-80gb", "lambda", 1, "on-demand")
    new_key = SeriesKey("h100-sxm-80gb", "vast", 1, "on-demand")
    cheapest = SeriesPrice(new_key, Decimal("1.99"), "1x H100", "us", OBSERVED)
    changes = (
        # 2.49 → 2.19: (2.19 − 2.49) / 2.49 = −12.048 %, shown with one decimal as −12.0 %
        Change(drop_key, "drop", Decimal("2.49"), Decimal("2.19"), Decimal("-12.048")),
        Change(new_key, "new", None, Decimal("1.99"), None, cheapest),
    )
    gpu = GpuDigest("h100-sxm-80gb", changes, cheapest, cheapest, None, None, (Decimal("2.49"), Decimal("1.99")), OBSERVED)
    return DigestInput((gpu,), datetime(2025, 6, 1, 9, tzinfo=UTC), OBSERVED, Thresholds())


def _all_text(message: dict[str, Any]) -> str:
    return json.dumps(message["blocks"], ensure_ascii=False)


def _catalog(lang: str) -> Mapping[str, str]:
    return load_catalog(lang)


def test_card_view_changes_carry_display_names_and_ids() -> None:
    view = digest_view(_digest(), gpus=GPUS, providers=PROVIDERS)
    changes = view["gpus"][0]["changes"]
    assert [(c["provider"], c["provider_id"]) for c in changes] == [("Lambda Cloud", "lambda"), ("Vast.ai", "vast")]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_language_renders_through_the_template(lang: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="bot.digest.card"):
        message = render_digest(_digest(), gpus=GPUS, providers=PROVIDERS, lang=lang, now=NOW)
    assert not caplog.records, "fell back to the built-in English card"
    header = message["blocks"][0]
    assert header["type"] == "header" and header["text"]["text"] == _catalog(lang)["digest.header"]


@pytest.mark.parametrize("lang", ["ko", "de"])
def test_change_lines_name_providers_not_ids(lang: str) -> None:
    message = render_digest(_digest(), gpus=GPUS, providers=PROVIDERS, lang=lang, now=NOW)
    text = _all_text(message)
    assert "Lambda Cloud" in text and "Vast.ai" in text
    assert "lambda" not in text and "vast " not in text  # ids never shown
    assert "H100 SXM" in text
    decimal_mark = {"ko": ".", "de": ","}[lang]
    assert f"2{decimal_mark}49" in text and f"2{decimal_mark}19" in text
    assert re.search(rf"-12(?:{re.escape(decimal_mark)}0)?\s?%", text)  # −12.048 % to at most one decimal
    assert "GPU price digest" not in message["text"]  # not the English built-in card


def test_korean_and_german_cards_use_their_own_words() -> None:
    ko = render_digest(_digest(), gpus=GPUS, providers=PROVIDERS, lang="ko", now=NOW)
    de = render_digest(_digest(), gpus=GPUS, providers=PROVIDERS, lang="de", now=NOW)
    assert ko["text"] != de["text"]
    assert any("\uac00" <= ch <= "\ud7a3" for ch in ko["text"])  # Hangul syllables in the Korean fallback text
    assert _catalog("de")["digest.header"] in _all_text(de)


def test_builtin_card_also_names_providers() -> None:
    view = digest_view(_digest(), gpus=GPUS, providers=PROVIDERS)
    text = _all_text(builtin_card(view))
    assert "Lambda Cloud ×1 on-demand" in text and "lambda" not in text


def _template_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("template broken for the test")

    monkeypatch.setattr("bot.render.cards.render_card", broken)


@pytest.mark.expect_traceback
@pytest.mark.parametrize("lang", ["de", "ko"])
def test_builtin_card_speaks_the_channels_language(lang: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The card used when the template fails is worded by the catalog: the language's own texts, Babel's money."""
    _template_fails(monkeypatch)
    message = render_digest(_digest(), gpus=GPUS, providers=PROVIDERS, lang=lang, now=NOW)
    header, text = message["blocks"][0]["text"]["text"], _all_text(message)
    assert header == _catalog(lang)["digest.header"]
    assert message["text"] == _catalog(lang)["digest.fallback"].format(count=2)
    money = format_currency(Decimal("2.19"), "USD", locale=lang)  # CLDR: "2,19\xa0$" in German, "US$2.19" in Korean
    assert money in text and "$2.19" not in text.replace(money, "")
    assert "Lambda Cloud" in text and "Vast.ai" in text and "H100 SXM" in text
    assert "GPU price digest" not in text + message["text"] and "gone (was" not in text


@pytest.mark.expect_traceback
def test_builtin_card_falls_back_to_english_when_the_language_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    _template_fails(monkeypatch)
    real = load_catalog
    monkeypatch.setattr("bot.render.messages.load_catalog",
                        lambda lang: {**real(lang), "digest.change.drop": "{oops}"} if lang == "de" else real(lang))
    message = render_digest(_digest(), gpus=GPUS, providers=PROVIDERS, lang="de", now=NOW)
    assert message["blocks"][0]["text"]["text"] == _catalog("en")["digest.header"]
    assert "Lambda Cloud ×1 on-demand: $2.49 → $2.19" in _all_text(message)
