"""Held-out parse table: requests written before the parser was tuned on them, scored, never edited to pass.

tests/cases/parse_heldout.jsonl was committed (b719d51) before any parser change made for it.
Fixes are generalised and their cases go to parse_cases.jsonl, not here. This test prints
per-language and per-field accuracy and every miss, and asserts a floor at the level reached,
so a regression fails while the honest misses stay visible.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from test_parse import catalog_snapshot  # noqa: F401  (fixture)
from test_parse_cases import load_cases, print_accuracy, run_cases

HELDOUT = Path(__file__).parent / "cases" / "parse_heldout.jsonl"
LANGS = ("en", "zh-Hans", "zh-Hant", "ko", "ja", "es", "de", "fr", "vi")
# Floors at the level reached (see the printed table); raise, never lower.
# Before the parser changes (b719d51): 80/101 cases, 398/421 fields. After: 100/101, 420/421.
# Still missed, kept as written: vi "context 8k, batch size 4, LoRA gemma 2 9b" has no Vietnamese
# word at all (only English/tech words), so it reads as English; the row over-asks, it is not edited.
MIN_CASES_RIGHT = 100
MIN_FIELDS_RIGHT = 420


def test_heldout_table_shape() -> None:
    cases = load_cases(HELDOUT)
    assert len(cases) >= 90
    for lang in LANGS:
        assert sum(c["lang"] == lang for c in cases) >= 10, lang


def test_heldout_accuracy(catalog_snapshot: Any, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    failures, lang_ok, lang_all, field_ok, field_all = run_cases(catalog_snapshot, HELDOUT)
    with capsys.disabled():
        print_accuracy("held-out parse accuracy", failures, lang_ok, lang_all, field_ok, field_all)
    cases, fields = sum(lang_all.values()), sum(field_all.values())
    with capsys.disabled():
        print(f"  total: {sum(lang_ok.values())}/{cases} cases, {sum(field_ok.values())}/{fields} fields")
    assert sum(lang_ok.values()) >= MIN_CASES_RIGHT, f"{len(failures)} of {cases} held-out cases misread"
    assert sum(field_ok.values()) >= MIN_FIELDS_RIGHT, "held-out field accuracy fell (misses listed above)"
