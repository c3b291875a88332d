"""No English sentence in a non-English card: every card × locale checked against the English catalog."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from bot.render.cards import render_card
from bot.render.messages import LANGUAGES, load_catalog
from test_cards_samples import card_samples

SAMPLES = card_samples()
CASES = [(name, lang) for name in SAMPLES for lang in LANGUAGES if lang != "en"]


def english_fragments(lang: str) -> set[str]:
    """Pieces of English messages between placeholders with at least two words, unless the locale uses the same."""
    other = "\n".join(load_catalog(lang).values())
    fragments = set()
    for message in load_catalog("en").values():
        for piece in re.split(r"\{[^}]*\}|`[^`]*`", message):
            piece = piece.strip(" *:.,;()·—–-\n")
            if len(re.findall(r"[A-Za-z]{2,}", piece)) >= 2 and piece not in other:
                fragments.add(piece)
    return fragments


def card_strings(message: Any) -> list[str]:
    """Every string a person sees in the card (text fallback, header, sections, fields, buttons)."""
    out: list[str] = []

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k not in ("value", "action_id", "type", "block_id", "style"):
                    walk(v, k)
        elif isinstance(node, list):
            for item in node:
                walk(item, key)
        elif isinstance(node, str):
            out.append(node)

    walk(message)
    return out


@pytest.mark.parametrize(("name", "lang"), CASES, ids=[f"{n}-{lang}" for n, lang in CASES])
def test_no_english_sentence_in_non_english_card(name: str, lang: str) -> None:
    kind, view, now = SAMPLES[name]
    text = "\n".join(card_strings(render_card(kind, view, lang, now=now).message()))
    question = getattr(view, "question", "")
    if question:  # the person's own words are echoed back as typed
        text = text.replace(question, "")
    found = sorted(fragment for fragment in english_fragments(lang) if fragment in text)
    assert found == [], f"English in the {lang} {name} card"


def test_the_check_catches_english() -> None:
    """The test above can fail: an English card is full of English fragments."""
    kind, view, now = SAMPLES["recommendation"]
    text = "\n".join(card_strings(render_card(kind, view, "en", now=now).message()))
    assert len([f for f in english_fragments("de") if f in text]) >= 5


def test_text_fallback_is_in_the_card_language() -> None:
    kind, view, now = SAMPLES["price-a100"]
    assert render_card(kind, view, "ko", now=now).text.endswith("부터")
    assert "对比" in render_card(*SAMPLES["comparison-guide002"][:2], "zh-Hans").text or \
        "GPU 对比" in render_card(*SAMPLES["comparison-guide002"][:2], "zh-Hans").text
    assert json.dumps(render_card("help", SAMPLES["help"][1], "ja").text, ensure_ascii=False) != '""'
