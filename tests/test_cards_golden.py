"""Golden cards: every card kind × every locale, checked against Slack's limits and the reviewed files.

`pytest tests/test_cards_golden.py --update-golden` rewrites tests/golden/; review the diff.
Each golden is the exact Slack message (`.json`) plus its terminal rendering (`.txt`) for reading.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.render.cards import render_card, render_terminal
from bot.render.limits import check_message
from bot.render.messages import LANGUAGES
from test_cards_samples import card_samples

GOLDEN = Path(__file__).parent / "golden"
SAMPLES = card_samples()
CASES = [(name, lang) for name in SAMPLES for lang in LANGUAGES]


def _rendered(name: str, lang: str) -> tuple[dict[str, Any], str]:
    kind, view, now = SAMPLES[name]
    card = render_card(kind, view, lang, now=now)
    return card.message(), render_terminal(card)


@pytest.mark.parametrize(("name", "lang"), CASES, ids=[f"{n}-{lang}" for n, lang in CASES])
def test_card_within_slack_limits(name: str, lang: str) -> None:
    message, _ = _rendered(name, lang)
    assert check_message(message) == []


@pytest.mark.parametrize(("name", "lang"), CASES, ids=[f"{n}-{lang}" for n, lang in CASES])
def test_card_matches_golden(name: str, lang: str, update_golden: bool) -> None:
    message, terminal = _rendered(name, lang)
    json_path, text_path = GOLDEN / f"{name}.{lang}.json", GOLDEN / f"{name}.{lang}.txt"
    serialized = json.dumps(message, ensure_ascii=False, indent=1) + "\n"
    if update_golden:
        GOLDEN.mkdir(exist_ok=True)
        json_path.write_text(serialized, encoding="utf-8")
        text_path.write_text(terminal, encoding="utf-8")
    assert json_path.exists(), f"no golden {json_path.name}: run pytest --update-golden and review it"
    assert serialized == json_path.read_text(encoding="utf-8")
    assert terminal == text_path.read_text(encoding="utf-8")
