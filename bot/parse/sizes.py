"""Model sizes in every form: "13B", "1.5b", "13 billion params", "8x7B", "350M", "130亿", "1300억"."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from bot.parse.anchors import has_any, has_digit
from bot.parse.notes import Note
from bot.parse.numbers import parse_number

# Words after a size that make it a dataset size, not a model size ("1B tokens", "10亿条").
_NOT_MODEL = r"(?!\s*(?:(?:de|of|d')\s?)?(?:tokens?|tok(?![a-z])|words|samples|rows|examples|词元|條|条|个token|個token|토큰|개의? ?(?:샘플|토큰)|トークン|件|원|元|円|won|yen|dollars?|usd|\$))"


@dataclass(frozen=True, slots=True)
class SizeMention:
    """A parameter count found in the text, in billions, with where it was."""

    params_b: float
    start: int
    end: int
    experts: int | None = None  # 8 in "8x7B": the total is below 8 x 7 since attention is shared


MIN_B, MAX_B = 0.01, 5000  # 10M to 5T parameters: every model people ask about, with room
# Scientific notation with a unit: "1.3e10 parameters" (13B), "7e9 params", "1e12B" (10^21 parameters:
# refused with a note). Without a unit ("lr 2e-5") it is not a size.
_SCIENTIFIC = re.compile(
    r"(?<![\w.])(\d{1,6}(?:\.\d{1,6})?)e([+-]?\d{1,5})\s?(b|bn|billion|params|parameters?)(?![a-z0-9])"
)
# Five digits and more before a "B" ("20000B"): the size patterns stop at four, so it used to vanish.
_LONG_BILLIONS = re.compile(rf"(?<![0-9.$,])(\d{{5,}}(?:\.\d+)?)\s?(?:b|bn|billion)(?![a-z0-9]){_NOT_MODEL}")
# Prechecks (one word of each is in every match): billions, millions, units of 10^8.
_BILLION_ANCHORS = ("b", "mil millones", "milliard", "tỷ")
_MILLION_ANCHORS = ("m",)
_CJK_ANCHORS = ("亿", "億", "억")


@functools.lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern[str], ...]:
    billions = r"(?:b|\s?(?:bn|billions?|billion parameters|mil millones|milliarden|milliards?|tỷ))"
    return (
        # 8x7B (mixture of experts)
        re.compile(r"(\d(?<![0-9.]\d)\d?)\s?x\s?(\d{1,3}(?:\.\d+)?)\s?b(?![a-z0-9])"),
        # 7B, 1.5b, 13 billion, 70 billion params; not $5b nor 1B tokens
        # "1,3B" (a decimal comma: es/de/fr/vi) is 1.3B; "1,300B" would be thousands and is not a model size
        # (not "A22B" in "Qwen3-235B-A22B": the active parameters of a mixture of experts)
        re.compile(rf"(\d(?<![0-9.$]\d)(?<![-\s_]a\d)(?<!\d,\d)\d{{0,3}}(?:[.,]\d{{1,2}}(?!\d))?){billions}(?![a-z0-9]){_NOT_MODEL}"),
        # 350M params, smollm-135m, "un modelo de 350M"
        re.compile(
            r"(?:(?<=[-_])(\d{2,4})m(?![a-z0-9])|(?<![0-9.$])(?<!\d,)(\d{2,4})\s?m\s?(?:params|parameters|param|model)"
            r"|(?:model|modelo|modèle|modell|mô hình)\s(?:de\s|of\s|von\s|với\s)?(\d{2,4})\s?m(?![a-z0-9]))"
            rf"{_NOT_MODEL}"
        ),
        # 130亿 / 130億 / 1300억 (units of 10^8)
        re.compile(rf"(\d(?<![0-9.]\d)(?<!\d,\d)\d{{0,4}}(?:\.\d+)?)\s?(?:亿|億|억)(?!\s?(?:원|元|円|韩元)){_NOT_MODEL}"),
    )


def _negative(text: str, start: int) -> bool:
    """A minus sign right before `start` that no letter or digit precedes (a sign, not a hyphen)."""
    return start > 0 and text[start - 1] in "-−" and (start == 1 or not text[start - 2].isalnum())


def find_sizes(text: str, ignored: list[Note] | None = None) -> list[SizeMention]:
    """Every parameter count in order of appearance (text already normalised).

    A size no model has ("1e308B", "20000B") is not used; when `ignored` is given, a `Note` saying so
    is added to it.
    """
    if not has_digit(text):
        return []
    moe, billions, millions, cjk = _patterns()
    found: list[SizeMention] = []
    taken: list[tuple[int, int]] = []
    absurd: list[tuple[int, int]] = []
    negative: list[tuple[int, int]] = []
    for m in _SCIENTIFIC.finditer(text) if "e" in text else ():
        size_b = float(f"{m.group(1)}e{m.group(2)}") / (1 if m.group(3) in ("b", "bn", "billion") else 1e9)
        taken.append(m.span())
        if MIN_B <= size_b <= MAX_B:
            found.append(SizeMention(round(size_b, 3), m.start(), m.end()))
        elif size_b > MAX_B:
            absurd.append(m.span())
    for m in moe.finditer(text) if "x" in text else ():
        experts, each = int(m.group(1)), parse_number(m.group(2))
        if each and experts > 1:
            found.append(SizeMention(experts * each, m.start(), m.end(), experts))
            taken.append(m.span())
    for pattern, scale, words in (
        (billions, 1.0, _BILLION_ANCHORS), (millions, 0.001, _MILLION_ANCHORS), (cjk, 0.1, _CJK_ANCHORS)
    ):
        if not has_any(text, words):
            continue
        for m in pattern.finditer(text):
            if any(s <= m.start() < e for s, e in taken):
                continue
            value = parse_number((m.group(1) or m.group(m.lastindex or 1)).replace(",", "."))
            if _negative(text, m.start()):  # "a -7B model": never 7B ("qwen2.5-7b" is a name, not a sign)
                negative.append((m.start() - 1, m.end()))
            elif value and MIN_B <= value * scale <= MAX_B:
                found.append(SizeMention(round(value * scale, 3), m.start(), m.end()))
            elif value and value * scale > MAX_B:
                absurd.append(m.span())
    if ignored is not None and has_any(text, _BILLION_ANCHORS):
        absurd.extend(m.span() for m in _LONG_BILLIONS.finditer(text) if not any(s <= m.start() < e for s, e in taken))
    if ignored is not None:
        ignored.extend(Note("size_absurd", given=text[a:b], max_b=MAX_B) for a, b in absurd)
        ignored.extend(Note("quantity_not_positive", given=text[a:b]) for a, b in negative)
    return sorted(found, key=lambda s: s.start)
