"""Phrasing similarity for knowledge-base matching: phrasings normalised once per language, scored in batches."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from knowledge.kb_data import load_kb
from knowledge.kb_text import compact_text, normalise_text

CHAR_LEVEL_LANGUAGES = frozenset({"zh-Hans", "ja", "ko"})


@dataclass(frozen=True, slots=True)
class PhrasingIndex:
    """Every entry's phrasings in one language, with the text the scorer compares (normalised once)."""

    entry_ids: tuple[str, ...]
    phrasings: tuple[str, ...]
    compared: tuple[str, ...]  # compact_text for character-level languages, else normalise_text
    char_level: bool
    sorted_words: tuple[str, ...] = ()  # each compared text's words sorted (what token_sort_ratio compares)


@functools.cache
def phrasing_index(language: str) -> PhrasingIndex:
    """The index for one language of the bundled knowledge base (built on first use, then kept)."""
    char_level = language in CHAR_LEVEL_LANGUAGES
    prepare = compact_text if char_level else normalise_text
    rows = [(e.id, p) for e in load_kb().entries.values() for p in e.texts[language].phrasings]
    return PhrasingIndex(
        entry_ids=tuple(r[0] for r in rows),
        phrasings=tuple(r[1] for r in rows),
        compared=tuple(prepare(r[1]) for r in rows),
        char_level=char_level,
        sorted_words=() if char_level else tuple(sort_words(prepare(r[1])) for r in rows),
    )


def sort_words(text: str) -> str:
    """The words sorted and joined by one space: token_sort_ratio(a, b) == ratio(sort_words(a), sort_words(b))."""
    return " ".join(sorted(text.split()))


def _scores(query: str, choices: Sequence[str], scorer: Callable[..., float]) -> list[float]:
    """scorer(query, choice) for every choice, in choice order (one C++ batch, no processor)."""
    out = [0.0] * len(choices)
    for _, score, i in process.extract(query, choices, scorer=scorer, processor=None, limit=None):
        out[i] = score
    return out


def similarities(question: str, index: PhrasingIndex, *, worth: Callable[[float], bool] | None = None) -> list[float]:
    """0-100 similarity of the question to each phrasing of the index.

    Character-level languages: ratio of the space-less texts. Others: the mean of token_set
    (word overlap) and token_sort (charges for what is missing; token_set alone gives 100 to any
    one-word question contained in a phrasing). token_sort is computed as the ratio of the word-sorted
    texts, with the phrasings' words sorted once at build time (the same score, a third of the work).
    `worth(bound)`: whether a phrasing whose similarity is at most `bound` can still matter; token_set
    (nine tenths of the work) is skipped for those that cannot, and they are given 0.0.
    """
    if index.char_level:
        return _scores(compact_text(question), index.compared, fuzz.ratio)
    query = normalise_text(question)
    token_sort = _scores(sort_words(query), index.sorted_words, fuzz.ratio)  # choices sorted once, not per call
    if worth is None:
        token_set = _scores(query, index.compared, fuzz.token_set_ratio)
        return [(a + b) / 2.0 for a, b in zip(token_set, token_sort, strict=True)]
    # token_set is at most 100, so (100 + token_sort) / 2 bounds the mean (float rounding is monotonic).
    kept = [i for i, b in enumerate(token_sort) if worth((100.0 + b) / 2.0)]
    if len(kept) == len(token_sort):
        token_set = _scores(query, index.compared, fuzz.token_set_ratio)
        return [(a + b) / 2.0 for a, b in zip(token_set, token_sort, strict=True)]
    out = [0.0] * len(token_sort)
    for i, a in zip(kept, _scores(query, [index.compared[i] for i in kept], fuzz.token_set_ratio), strict=True):
        out[i] = (a + token_sort[i]) / 2.0
    return out


def best_phrasings(question: str, language: str, *, fallback: str, discount: float,
                   floor: float | None = None) -> dict[str, tuple[float, str]]:
    """Per entry id, the best (similarity, phrasing) in the question's language; the fallback
    language's phrasings count too, their similarity times `discount`. Ties go to the larger tuple.

    With a `floor`, only the entries whose best similarity is above it are given (the matcher adds
    nothing for the others), and phrasings that cannot get above it are not scored exactly: most of
    the fallback language's, whose similarity is discounted.
    """
    best: dict[str, tuple[float, str]] = {}
    languages = ((language, 1.0),) if language == fallback else ((language, 1.0), (fallback, discount))
    for lang, factor in languages:
        index = phrasing_index(lang)
        worth = None if floor is None else _above(floor, factor)
        for entry_id, phrasing, sim in zip(index.entry_ids, index.phrasings, similarities(question, index, worth=worth),
                                           strict=True):
            candidate = (sim * factor if lang != language else sim, phrasing)
            if floor is not None and candidate[0] <= floor:
                continue
            if candidate > best.get(entry_id, (0.0, "")):
                best[entry_id] = candidate
    return best


def _above(floor: float, factor: float) -> Callable[[float], bool]:
    """Whether a similarity bound, weighed as best_phrasings weighs it, gets above `floor`."""
    return lambda bound: bound * factor > floor
