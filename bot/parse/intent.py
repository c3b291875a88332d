"""What kind of answer the message wants, decided first-hit from cue words and what was found."""

from __future__ import annotations

from dataclasses import dataclass

SHORT_MESSAGE_CHARS = 40  # "help" or "reply in Korean" only counts as the whole request when short


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the extractors found, as the intent rules need it."""

    cues: frozenset[str]  # intent cue words present (lexicon `intents` keys)
    text_chars: int
    distinct_gpus: int
    has_workload: bool  # a model or a size
    has_method: bool
    has_money_or_time: bool
    anything: bool  # any field at all was filled


def decide_intent(e: Evidence) -> str:
    """First matching row wins; `advise` is the catch-all for a workload, `help` for nothing at all."""
    short = e.text_chars <= SHORT_MESSAGE_CHARS
    if "help" in e.cues and short and not e.has_workload and not e.distinct_gpus:
        return "help"
    if "language" in e.cues and short and not e.has_workload and not e.distinct_gpus:
        return "language"
    if "digest" in e.cues and not e.has_workload:
        return "digest"
    if "alert" in e.cues and not e.has_workload:
        return "alert"
    if e.distinct_gpus >= 2 and ("compare" in e.cues or "compare_weak" in e.cues):
        return "compare"
    if e.distinct_gpus >= 1 and "compare" in e.cues and not e.has_workload:
        return "compare"
    if e.distinct_gpus and not e.has_workload and "price" in e.cues:
        return "price"
    if e.distinct_gpus and not e.has_workload and "specs" in e.cues:
        return "specs"
    if "explain" in e.cues and not e.has_workload:
        return "explain"
    if e.distinct_gpus >= 2 and not e.has_workload:
        return "compare"
    if e.distinct_gpus and not (e.has_workload or e.has_method or e.has_money_or_time):
        return "specs"
    if "help" in e.cues and not e.anything:
        return "help"
    if not e.anything and not e.cues:
        return "help"
    return "advise"
