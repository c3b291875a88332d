"""The knowledge base's shortcuts give what the full computation gives (they only skip work that cannot matter)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowledge.kb import OTHER_LANGUAGE_DISCOUNT, PHRASE_FLOOR
from knowledge.kb_data import LANGUAGES
from knowledge.kb_phrasing import best_phrasings

CASES = Path(__file__).parent / "cases" / "kb_questions.jsonl"
EXTRA = ("", "memory", "4090", "why", "为什么", "warum passt ein 70B Modell nicht auf eine 4090?", "x" * 300)


def _questions() -> list[str]:
    rows = [json.loads(line) for line in CASES.read_text("utf-8").splitlines() if line.strip()]
    return [str(r["q"]) for r in rows[::3]] + list(EXTRA)


@pytest.mark.parametrize("language", LANGUAGES)
def test_phrasings_above_the_floor_are_the_full_ones_above_it(language: str) -> None:
    """With a floor, exactly the entries whose full best similarity is above it, with the same (score, phrasing)."""
    for question in _questions():
        full = best_phrasings(question, language, fallback="en", discount=OTHER_LANGUAGE_DISCOUNT)
        above = {e: best for e, best in full.items() if best[0] > PHRASE_FLOOR}
        floored = best_phrasings(question, language, fallback="en", discount=OTHER_LANGUAGE_DISCOUNT,
                                 floor=PHRASE_FLOOR)
        assert floored == above, (language, question)


def test_a_high_floor_keeps_only_the_close_phrasings() -> None:
    """A floor near 100 leaves the entries phrased almost as asked (the bound prunes nothing it should keep)."""
    question = "Why does QLoRA use less memory than LoRA?"
    full = best_phrasings(question, "de", fallback="en", discount=OTHER_LANGUAGE_DISCOUNT)
    floor = max(best[0] for best in full.values()) - 1.0
    floored = best_phrasings(question, "de", fallback="en", discount=OTHER_LANGUAGE_DISCOUNT, floor=floor)
    assert floored and floored == {e: best for e, best in full.items() if best[0] > floor}
