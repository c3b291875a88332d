"""Knowledge base: match a conceptual question to a reviewed entry and answer it with current catalog facts."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from knowledge.kb_data import LANGUAGES, Entry, KnowledgeBase, load_kb
from knowledge.kb_facts import GpuMention, fill_facts, find_gpu_mentions, gpu_flags, gpu_sentences
from knowledge.kb_phrasing import best_phrasings
from knowledge.kb_text import TermPattern, longest_first, looks_conceptual, normalise_text

if TYPE_CHECKING:
    from knowledge.snapshot import Snapshot

__all__ = ["KbAnswer", "KbOption", "KbResult", "find_entry", "get_entry", "looks_conceptual", "match"]

# Scoring weights and thresholds (tuned on the non-held-out rows of tests/cases/kb_questions.jsonl).
CONCEPT_WEIGHT = 1.0  # times the entry's weight for a concept whose glossary form occurs in the question
KEYWORD_WEIGHT = 2.0  # an entry-specific keyword
MAX_KEYWORDS_COUNTED = 2
GPU_WEIGHT = 1.5  # the question names a GPU the entry is about
GPU_WHEN_WEIGHT = 1.0  # a named GPU has the property the entry is about (e.g. no NVLink)
PHRASE_WEIGHT = 4.0  # at perfect phrasing similarity
PHRASE_FLOOR = 45.0  # similarity (0-100) below which a phrasing adds nothing
OTHER_LANGUAGE_DISCOUNT = 0.7  # English phrasings still count for a question in another language
ANSWER_MIN_SCORE = 3.0  # below: never state an answer as fact
ANSWER_MIN_MARGIN = 1.0  # top must beat the runner-up by this much to answer outright
CHOOSE_MIN_SCORE = 1.5  # below: nothing relevant ("none")
DEFAULT_LANGUAGE = "en"

Status = Literal["answer", "choose", "none"]


@dataclass(frozen=True, slots=True)
class KbAnswer:
    """One entry rendered in one language with its numbers filled in."""

    entry_id: str
    language: str
    title: str
    text: str  # answer, plus one sentence per named GPU and relevant property
    facts: tuple[tuple[str, str], ...]  # (label, value) behind the answer
    sources: tuple[tuple[str, str], ...]  # (title, url)
    related: tuple[tuple[str, str], ...]  # (entry id, title in this language)


@dataclass(frozen=True, slots=True)
class KbOption:
    """A candidate entry offered as a button when the match is not certain."""

    entry_id: str
    title: str
    score: float


@dataclass(frozen=True, slots=True)
class KbResult:
    status: Status  # "answer" | "choose" | "none"
    entry: KbAnswer | None  # set only when status == "answer"
    alternatives: tuple[KbOption, ...]  # the two best when status == "choose" (or runners-up otherwise)
    score: float
    why: tuple[str, ...]  # what matched: concepts, keywords, GPUs, phrasings, margin
    gpus_named: tuple[str, ...]  # catalog ids the question names


@dataclass(frozen=True, slots=True)
class _Scored:
    entry_id: str
    score: float
    reasons: tuple[str, ...]


def _language(language: str) -> str:
    return language if language in LANGUAGES else DEFAULT_LANGUAGE


def _score_entry(entry: Entry, normalised: str, found: Mapping[tuple[str, str], list[TermPattern]],
                 concept_hits: Mapping[str, tuple[str, ...]], named: set[str], flags: set[str],
                 phrasing: tuple[float, str], *, explain: bool = True) -> _Scored:
    """The entry's score; with `explain`, what made it (only the best entry's reasons are reported)."""
    score, reasons = 0.0, []
    for concept, weight in entry.concepts:
        if concept_hits.get(concept):
            score += CONCEPT_WEIGHT * weight
            if explain:
                reasons.append(f"concept {concept} ← {concept_hits[concept][0]!r} (+{CONCEPT_WEIGHT * weight:.1f})")
    kw = longest_first(p.surface for p in found.get(("keyword", entry.id), ()))[:MAX_KEYWORDS_COUNTED]
    if kw:
        score += KEYWORD_WEIGHT * len(kw)
        if explain:
            reasons.append(f"keywords {list(kw)} (+{KEYWORD_WEIGHT * len(kw):.1f})")
    if about := sorted(named & set(entry.gpus)):
        score += GPU_WEIGHT
        if explain:
            reasons.append(f"gpu {about[0]} named (+{GPU_WEIGHT:.1f})")
    if when := sorted(flags & set(entry.gpu_when)):
        score += GPU_WHEN_WEIGHT
        if explain:
            reasons.append(f"named gpu is {when[0]} (+{GPU_WHEN_WEIGHT:.1f})")
    sim, best = phrasing
    if sim > PHRASE_FLOOR:
        bonus = PHRASE_WEIGHT * (sim - PHRASE_FLOOR) / (100.0 - PHRASE_FLOOR)
        score += bonus
        if explain:
            reasons.append(f"phrasing {sim:.0f}% ≈ {best!r} (+{bonus:.1f})")
    return _Scored(entry_id=entry.id, score=round(score, 3), reasons=tuple(reasons))


@functools.cache
def _unscored() -> tuple[_Scored, ...]:
    """Every entry at 0.0 with no reasons, in knowledge-base order: what an entry nothing points at scores."""
    return tuple(_Scored(entry_id=e.id, score=0.0, reasons=()) for e in load_kb().entries.values())


@functools.cache
def _term_owners() -> dict[TermPattern, tuple[tuple[str, str], ...]]:
    """Every glossary and keyword pattern once, with who uses it: ("concept", id) or ("keyword", entry id)."""
    kb = load_kb()
    owners: dict[TermPattern, list[tuple[str, str]]] = {}
    for concept, term in kb.terms.items():
        for pattern in term.patterns:
            owners.setdefault(pattern, []).append(("concept", concept))
    for entry_id, patterns in kb.keyword_patterns.items():
        for pattern in patterns:
            owners.setdefault(pattern, []).append(("keyword", entry_id))
    return {pattern: tuple(keys) for pattern, keys in owners.items()}


@dataclass(frozen=True, slots=True)
class _TermIndex:
    """The glossary and keyword patterns filed by their first two characters, and who points at each entry."""

    patterns: tuple[TermPattern, ...]  # _term_owners order
    owners: tuple[tuple[tuple[str, str], ...], ...]  # per pattern
    by_pair: Mapping[str, tuple[int, ...]]  # first two characters -> pattern numbers (ascending)
    short: tuple[int, ...]  # one-character patterns: tested on every question
    by_concept: Mapping[str, frozenset[str]]  # concept -> entry ids weighing it
    by_gpu: Mapping[str, frozenset[str]]  # catalog id -> entry ids about it
    by_flag: Mapping[str, frozenset[str]]  # gpu_when property -> entry ids


def _entries_by(pairs: list[tuple[str, str]]) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for key, entry_id in pairs:
        out.setdefault(key, set()).add(entry_id)
    return {key: frozenset(ids) for key, ids in out.items()}


@functools.cache
def _term_index() -> _TermIndex:
    owners = _term_owners()
    patterns = tuple(owners)
    by_pair: dict[str, list[int]] = {}
    for number, pattern in enumerate(patterns):
        if len(pattern.surface) >= 2:
            by_pair.setdefault(pattern.surface[:2], []).append(number)
    entries = load_kb().entries.values()
    return _TermIndex(
        patterns=patterns,
        owners=tuple(owners.values()),
        by_pair={pair: tuple(numbers) for pair, numbers in by_pair.items()},
        short=tuple(n for n, p in enumerate(patterns) if len(p.surface) < 2),
        by_concept=_entries_by([(c, e.id) for e in entries for c, _ in e.concepts]),
        by_gpu=_entries_by([(g, e.id) for e in entries for g in e.gpus]),
        by_flag=_entries_by([(f, e.id) for e in entries for f in e.gpu_when]),
    )


def _found_by_owner(normalised: str) -> dict[tuple[str, str], list[TermPattern]]:
    """The patterns found in the text, per owner, in _term_owners order. Only patterns whose first two
    characters occur in the text are tested (a few dozen of the ~1,700), then a plain substring test."""
    index = _term_index()
    pairs = {normalised[i : i + 2] for i in range(len(normalised) - 1)} & index.by_pair.keys()
    numbers = sorted({*index.short, *(n for pair in pairs for n in index.by_pair[pair])})
    found: dict[tuple[str, str], list[TermPattern]] = {}
    for number in numbers:
        pattern = index.patterns[number]
        if pattern.surface in normalised and pattern.found_in(normalised):
            for key in index.owners[number]:
                found.setdefault(key, []).append(pattern)
    return found


def _touched(found: Mapping[tuple[str, str], list[TermPattern]], concept_hits: Mapping[str, tuple[str, ...]],
             named: set[str], flags: set[str], phrasings: Mapping[str, tuple[float, str]]) -> set[str]:
    """Entries that can score above zero: every other entry scores 0.0 with no reasons."""
    index = _term_index()
    touched = {owner for kind, owner in found if kind == "keyword"}
    touched.update(*(index.by_concept.get(c, ()) for c, h in concept_hits.items() if h))
    touched.update(*(index.by_gpu.get(g, ()) for g in named), *(index.by_flag.get(f, ()) for f in flags))
    touched.update(e for e, (sim, _) in phrasings.items() if sim > PHRASE_FLOOR)
    return touched


def rank(text: str, *, language: str, snapshot: Snapshot) -> tuple[tuple[_Scored, ...], tuple[GpuMention, ...]]:
    """Every entry scored for the question, best first (ties broken by id, so the order is stable);
    the reasons of the best one."""
    kb = load_kb()
    language = _language(language)
    normalised = normalise_text(text)
    found = _found_by_owner(normalised)
    concept_hits: dict[str, tuple[str, ...]] = dict.fromkeys(kb.terms, ())
    concept_hits.update(
        {owner: longest_first(p.surface for p in patterns) for (kind, owner), patterns in found.items()
         if kind == "concept"}
    )
    mentions = find_gpu_mentions(text, snapshot)
    named = {g for m in mentions for g in m.gpu_ids}
    flags: set[str] = set().union(*(gpu_flags(snapshot.gpus[g]) for g in named if g in snapshot.gpus))
    phrasings = best_phrasings(text, language, fallback=DEFAULT_LANGUAGE, discount=OTHER_LANGUAGE_DISCOUNT,
                               floor=PHRASE_FLOOR)  # entries at or below the floor score nothing for phrasing
    touched = _touched(found, concept_hits, named, flags, phrasings)

    def score(entry: Entry, explain: bool) -> _Scored:
        return _score_entry(entry, normalised, found, concept_hits, named, flags,
                            phrasings.get(entry.id, (0.0, "")), explain=explain)

    # Reasons are worded for the best entry only (all `match` reports); scores and order are the same.
    scored = [score(e, False) if e.id in touched else zero for e, zero in zip(kb.entries.values(), _unscored(),
                                                                              strict=True)]
    scored.sort(key=lambda s: (-s.score, s.entry_id))
    if scored[0].entry_id in touched:
        scored[0] = score(kb.entries[scored[0].entry_id], True)
    return tuple(scored), mentions


def _status(top: float, runner_up: float) -> Status:
    if top >= ANSWER_MIN_SCORE and top - runner_up >= ANSWER_MIN_MARGIN:
        return "answer"
    return "choose" if top >= CHOOSE_MIN_SCORE else "none"


def match(text: str, *, language: str, snapshot: Snapshot) -> KbResult:
    """The entry that answers a conceptual question, two options when unsure, or none.

    Deterministic: glossary concepts and entry keywords found in the text, GPUs it names,
    and rapidfuzz similarity to the entry's phrasings, summed with the weights above.
    """
    language = _language(language)
    if not normalise_text(text):
        return KbResult(status="none", entry=None, alternatives=(), score=0.0, why=("empty question",), gpus_named=())
    ranked, mentions = rank(text, language=language, snapshot=snapshot)
    top, second = ranked[0], ranked[1]
    status = _status(top.score, second.score)
    kb = load_kb()
    why = (*top.reasons, f"top {top.entry_id} {top.score:.1f} vs {second.entry_id} {second.score:.1f}")
    options = tuple(
        KbOption(entry_id=s.entry_id, title=kb.entries[s.entry_id].texts[language].title, score=s.score)
        for s in ranked[:2]
        if s.score >= CHOOSE_MIN_SCORE
    )
    entry = _answer(kb.entries[top.entry_id], kb, snapshot, language, mentions) if status == "answer" else None
    return KbResult(
        status=status,
        entry=entry,
        alternatives=options if status == "choose" else options[1:],
        score=top.score,
        why=why,
        gpus_named=tuple(g for m in mentions for g in m.gpu_ids),
    )


def _answer(entry: Entry, kb: KnowledgeBase, snapshot: Snapshot, language: str,
            mentions: tuple[GpuMention, ...] = ()) -> KbAnswer:
    text, facts = fill_facts(entry, kb, snapshot, language)
    extra = gpu_sentences(entry, kb, mentions, snapshot, language)
    joiner = "" if language in {"zh-Hans", "ja"} else " "
    return KbAnswer(
        entry_id=entry.id,
        language=language,
        title=entry.texts[language].title,
        text=joiner.join((text, *extra)),
        facts=facts,
        sources=tuple((s.title, s.url) for s in entry.sources),
        related=tuple((r, kb.entries[r].texts[language].title) for r in entry.related if r in kb.entries),
    )


def find_entry(entry_id: str, language: str, snapshot: Snapshot, *, text: str = "") -> KbAnswer | None:
    """An entry by id (e.g. from a related-question button), or None for an unknown id."""
    kb = load_kb()
    entry = kb.entries.get(entry_id)
    if entry is None:
        return None
    language = _language(language)
    return _answer(entry, kb, snapshot, language, find_gpu_mentions(text, snapshot) if text else ())


def get_entry(entry_id: str, language: str, snapshot: Snapshot, *, text: str = "") -> KbAnswer:
    """Like find_entry, but an unknown id is a broken invariant: KeyError naming the id."""
    answer = find_entry(entry_id, language, snapshot, text=text)
    if answer is None:
        raise KeyError(f"no knowledge entry {entry_id!r}")
    return answer
