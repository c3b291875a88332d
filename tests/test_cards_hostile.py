"""Hostile text in cards: shown as text, pings nobody, links nothing, clipped within Slack's limits."""

from __future__ import annotations

import json

import pytest

from bot.render.cards import render_card
from bot.render.limits import check_message
from bot.render.messages import LANGUAGES
from bot.render.samples import OBSERVED_AT, sample_catalog
from rules.plans.compare import ComparisonVerdict
from bot.render.views import Choice, ClarifyView, ComparisonView, KnowledgeView, PriceView, gpu_column

HOSTILE = [
    "<!channel> <!here> <!everyone>",
    "<@U123> <#C123|general> <!subteam^S123>",
    "<https://evil.example|click here> & more",
    "R&D &amp; &lt;b&gt;",
    "🔥👨‍👩‍👧 GPU 🚀" * 40,
    "مرحبا \u202eevil\u202c שלום",
    "x" * 3500,
    "<" * 3100,
]


def mrkdwn_texts(node: object) -> list[str]:
    if isinstance(node, dict):
        own = [node["text"]] if node.get("type") == "mrkdwn" else []
        return own + [t for v in node.values() for t in mrkdwn_texts(v)]
    if isinstance(node, list):
        return [t for item in node for t in mrkdwn_texts(item)]
    return []


def hostile_views(text: str) -> list[tuple[str, object]]:
    c = sample_catalog()
    state = {"v": 1, "i": "advise", "w": {}}
    return [
        ("comparison", ComparisonView((gpu_column(c, "l40s-48gb"), gpu_column(c, "rtx-4090")), OBSERVED_AT, text,
                                      (text, "lora"), verdict=ComparisonVerdict("none_fit"))),
        ("price", PriceView(c.gpus["rtx-4090"], (), OBSERVED_AT, text)),
        ("clarification", ClarifyView("gpu_ambiguous", text, (Choice(text, "a100-sxm-80gb"),), state, text)),
        ("clarification", ClarifyView("gpu_unknown", text, (), state, text)),
        ("knowledge", KnowledgeView(text, text, ((text, text),), ((text, text),), (("x", text),), question=text)),
    ]


@pytest.mark.parametrize("text", HOSTILE, ids=[f"h{i}" for i in range(len(HOSTILE))])
@pytest.mark.parametrize("lang", ["en", "zh-Hans", "ar-not-supported"])
def test_hostile_text_is_inert_and_within_limits(text: str, lang: str) -> None:
    for kind, view in hostile_views(text):
        message = render_card(kind, view, lang).message()
        assert check_message(message) == [], kind
        # Slack parses mentions and links only in mrkdwn text (plain_text shows them literally).
        for shown in mrkdwn_texts(message["blocks"]):
            for raw in ("<!channel>", "<!here>", "<!everyone>", "<@U123>", "<#C123", "<https://evil", "<!subteam"):
                assert raw not in shown, (kind, raw)
            assert "<" not in shown and "\u202e" not in shown
        assert "<!channel>" not in message["text"] and "<@U123>" not in message["text"]


def test_escaped_text_still_shows_what_was_typed() -> None:
    message = render_card("price", PriceView(sample_catalog().gpus["rtx-4090"], (), OBSERVED_AT, "R&D <@U123>"), "en")
    context = [b for b in message.message()["blocks"] if b["type"] == "context"][-1]
    assert context["elements"][0]["text"] == "You asked: R&amp;D &lt;@U123&gt;"


def test_rtl_letters_survive() -> None:
    card = render_card("price", PriceView(sample_catalog().gpus["rtx-4090"], (), OBSERVED_AT, "مرحبا שלום"), "en")
    assert "مرحبا שלום" in json.dumps(card.message(), ensure_ascii=False)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_language_renders_a_non_empty_fallback(lang: str) -> None:
    c = sample_catalog()
    card = render_card("price", PriceView(c.gpus["rtx-4090"], (), OBSERVED_AT, "<!channel>"), lang)
    assert card.text.strip() and card.language == lang
