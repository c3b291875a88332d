"""Batch phrasing similarity equals the per-pair definition (rapidfuzz called on one question and one phrasing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rapidfuzz import fuzz

from knowledge.kb_data import LANGUAGES
from knowledge.kb_phrasing import CHAR_LEVEL_LANGUAGES, best_phrasings, phrasing_index, similarities
from knowledge.kb_text import compact_text, normalise_text

CASES = Path(__file__).parent / "cases" / "kb_questions.jsonl"
EXTRA = ("", "   ", "memory", "4090", "왜", "为什么", "Ｈ１００ ＳＸＭ？", "x" * 300)


def _pair(question: str, phrasing: str, language: str) -> float:
    """The matcher's similarity for one pair, written out from its definition."""
    if language in CHAR_LEVEL_LANGUAGES:
        return float(fuzz.ratio(compact_text(question), compact_text(phrasing)))
    q, p = normalise_text(question), normalise_text(phrasing)
    return (fuzz.token_set_ratio(q, p) + fuzz.token_sort_ratio(q, p)) / 2.0


def _questions() -> list[str]:
    rows = [json.loads(line) for line in CASES.read_text("utf-8").splitlines() if line.strip()]
    return [str(r["q"]) for r in rows[::4]] + list(EXTRA)


@pytest.mark.parametrize("language", LANGUAGES)
def test_batch_scores_equal_pairwise_scores(language: str) -> None:
    index = phrasing_index(language)
    assert index.phrasings, f"no phrasings indexed for {language}"
    for question in _questions():
        expected = [_pair(question, p, language) for p in index.phrasings]
        assert similarities(question, index) == expected, question


def test_best_phrasing_per_entry_discounts_the_fallback_language() -> None:
    question = "warum passt ein 70B Modell nicht auf eine 4090?"
    best = best_phrasings(question, "de", fallback="en", discount=0.7)
    de, en = phrasing_index("de"), phrasing_index("en")
    for entry_id in set(de.entry_ids):
        own = [(_pair(question, p, "de"), p) for e, p in zip(de.entry_ids, de.phrasings) if e == entry_id]
        other = [(_pair(question, p, "en") * 0.7, p) for e, p in zip(en.entry_ids, en.phrasings) if e == entry_id]
        assert best[entry_id] == max(own + other), entry_id
