"""Property tests (issue 15): what does not change a request's meaning does not change its parse.

Adding polite filler in the message's language, changing case, writing digits full-width, or writing
the multiplication sign as "x", "×" or "*" must give the same fields. The base messages are the case
table's and the dev corpus's requests; hypothesis picks which and how to vary them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.parse import ask_to_dict
from bot.parse.parser import parse_strict
from test_parse import catalog_snapshot  # noqa: F401  (fixture)

CASES = Path(__file__).parent / "cases"
BASES = [
    (json.loads(line)["lang"], json.loads(line)["text"])
    for name in ("parse_cases.jsonl", "parse_heldout.jsonl", "parse_requests.jsonl", "requests_dev.jsonl")
    for line in (CASES / name).read_text(encoding="utf-8").splitlines()
    if line.strip()
]
# Polite words people wrap requests in, per language (in that language, so the language stays the same).
FILLER: dict[str, tuple[list[str], list[str]]] = {
    "en": (["hi, ", "hey all, ", "quick question: ", "sorry if this is dumb, "], [" thanks!", " thanks in advance", " cheers"]),
    "zh-Hans": (["请问，", "大佬们，", "各位好，"], ["，谢谢！", "，多谢", "，先谢过"]),
    "zh-Hant": (["請問，", "各位好，"], ["，謝謝！", "，感謝"]),
    "ko": (["안녕하세요, ", "질문 있습니다. "], [" 감사합니다!", " 부탁드립니다."]),
    "ja": (["すみません、", "質問です。"], ["よろしくお願いします。", "ありがとうございます！"]),
    "es": (["Hola, ", "Buenas, "], [" ¡Gracias!", " Saludos."]),
    "de": (["Hallo zusammen, ", "Kurze Frage: "], [" Danke!", " Vielen Dank im Voraus."]),
    "fr": (["Bonjour, ", "Salut, "], [" Merci !", " Merci d'avance."]),
    "vi": (["Chào mọi người, ", "Cho mình hỏi, "], [" Cảm ơn!", " Cảm ơn nhiều."]),
}
# Fields that carry the meaning; `assumed`/`ignored` are explanations and may quote the text.
IGNORED_KEYS = ("assumed", "ignored")
_FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
_TIMES = re.compile(r"(?<=\d)(\s?)x(?=\s?[a-z0-9])(?!large)", re.IGNORECASE)  # not in "p4d.24xlarge"


def meaning(text: str, snapshot: Any) -> dict[str, Any]:
    out = ask_to_dict(parse_strict(text, snapshot=snapshot))
    for key in IGNORED_KEYS:
        out.pop(key)
    return out


def assert_same(got: dict[str, Any], want: dict[str, Any], text: str) -> None:
    """Equal parses; on failure the message names the text and only the fields that differ."""
    differ = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
    assert not differ, f"{text!r}: {differ}"


def with_filler(lang: str, text: str, before: int, after: int) -> str:
    openers, closers = FILLER[lang]
    return openers[before % len(openers)] + text + closers[after % len(closers)]


def with_times(text: str, sign: str) -> str:
    """"2x 4090" -> "2× 4090" / "2* 4090": the multiplication sign written another way."""
    return _TIMES.sub(lambda m: m.group(1) + sign, text)


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(st.sampled_from(BASES), st.integers(0, 9), st.integers(0, 9))
def test_polite_filler_changes_nothing(catalog_snapshot: Any, base: tuple[str, str], before: int, after: int) -> None:  # noqa: F811
    _, text = base
    original = meaning(text, catalog_snapshot)
    varied = with_filler(original["language"], text, before, after)  # filler in the language the text reads as
    assert_same(meaning(varied, catalog_snapshot), original, varied)


@SETTINGS
@given(st.sampled_from(BASES), st.sampled_from([str.upper, str.lower, str.swapcase, str.title]))
def test_case_changes_nothing(catalog_snapshot: Any, base: tuple[str, str], change: Any) -> None:  # noqa: F811
    _, text = base
    assert_same(meaning(change(text), catalog_snapshot), meaning(text, catalog_snapshot), change(text))


@SETTINGS
@given(st.sampled_from(BASES))
def test_full_width_digits_change_nothing(catalog_snapshot: Any, base: tuple[str, str]) -> None:  # noqa: F811
    _, text = base
    varied = text.translate(_FULL_WIDTH)
    assert_same(meaning(varied, catalog_snapshot), meaning(text, catalog_snapshot), varied)


@SETTINGS
@given(st.sampled_from([b for b in BASES if _TIMES.search(b[1])]), st.sampled_from(["x", "×", "*", "X"]))
def test_multiplication_sign_changes_nothing(catalog_snapshot: Any, base: tuple[str, str], sign: str) -> None:  # noqa: F811
    _, text = base
    varied = with_times(text, sign)
    assert_same(meaning(varied, catalog_snapshot), meaning(text, catalog_snapshot), varied)


def test_the_variations_vary() -> None:
    """The helpers do change the text (a property over unchanged text could not fail)."""
    assert with_times("2x 4090 and 8x7B", "×") == "2× 4090 and 8×7B"
    assert "３" in "H100 x3".translate(_FULL_WIDTH)
    assert with_filler("de", "Und mit AWQ?", 0, 0) == "Hallo zusammen, Und mit AWQ? Danke!"
    assert sum(bool(_TIMES.search(t)) for _, t in BASES) >= 30
