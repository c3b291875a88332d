"""What kind of answer the message wants, decided first-hit from cue words and what was found."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.parse.vocabulary import Vocabulary

SHORT_MESSAGE_CHARS = 40  # "help" or "reply in Korean" only counts as the whole request when short
FOLLOW_UP_MAX_CHARS = 100  # a follow-up in a thread is a short message
FOLLOW_UP_NAMED_MAX_CHARS = 40  # "and for 13B?", "那换成72B呢": a follow-up naming a model is shorter still
FOLLOW_UP_EDGE_CHARS = 3  # an opener starts within this many characters of the start ("¿Y si", "ok, and")
_CLOSING_MARKS = " ?？!！.。…~"
_CLAUSE_END = tuple(",.!，。！、")
_LEAD = re.compile(r"^[\s,.!:;，。！、：]+")


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
    follow_up: bool = False  # a follow-up in a thread ("and with 4-bit?")
    has_budget: bool = False  # a money amount (a budget makes "which card should I buy" advice)
    language_named: bool = False  # a language name ("français"): "reply in" needs one in a long message


def decide_intent(e: Evidence) -> str:
    """First matching row wins; `advise` is the catch-all for a workload, `help` for nothing at all.

    Knowledge questions ("why", "what is", "should I", "the difference between LoRA and QLoRA") are
    `explain` unless a workload (a model or size) or a budget is given, or the question asks which model
    fits ("the biggest model I can run on 24 GB" is advice). A follow-up in a thread is advice. Buying
    weighed against renting, or buying a named GPU, with no workload is a knowledge question (the answer
    works out each named card's break-even; with a workload, the advice card computes it for that job).
    """
    short = e.text_chars <= SHORT_MESSAGE_CHARS
    bare = not e.has_workload and not e.distinct_gpus
    if "help" in e.cues and short and bare:
        return "help"
    if "language" in e.cues and (short or e.language_named) and bare:
        return "language"
    if "digest" in e.cues and not e.has_workload:
        return "digest"
    if "alert" in e.cues and not e.has_workload:
        return "alert"
    if e.follow_up:
        return "advise"
    if e.distinct_gpus >= 2 and ("compare" in e.cues or "compare_weak" in e.cues):
        return "compare"
    if "buy" in e.cues and ("rent" in e.cues or e.distinct_gpus) and not (e.has_workload or e.has_budget):
        # Owning weighed against renting ("buy a 4090 or rent?"), or buying a named card ("should I buy an
        # H100?"): the buy-vs-rent answer, with the break-even of each named card at today's prices.
        return "explain"
    if e.distinct_gpus == 1 and not e.has_workload and "price" in e.cues:
        return "price"  # "an H100 an hour on runpod vs lambda": providers compared, one GPU priced
    if e.distinct_gpus >= 1 and "compare" in e.cues and not e.has_workload:
        return "compare"
    if e.distinct_gpus and not e.has_workload and "price" in e.cues:
        return "price"
    if e.distinct_gpus and not e.has_workload and "specs" in e.cues:
        return "specs"
    knowledge = "explain" in e.cues or ("compare" in e.cues and not e.distinct_gpus)
    if knowledge and not (e.has_workload or e.has_budget or "advise" in e.cues):
        return "explain"
    if e.distinct_gpus >= 2 and not e.has_workload:
        return "compare"
    if e.distinct_gpus and not (e.has_workload or e.has_method or e.has_money_or_time or "advise" in e.cues):
        return "specs"
    if "help" in e.cues and not e.anything:
        return "help"
    if not e.anything and not e.cues:
        return "help"
    return "advise"


def without_polite(text: str, vocabulary: Vocabulary) -> str:
    """The request without greetings and thanks ("hi, ... thanks!"), for the rules that look at its length
    or at how it opens and closes: wrapping a request in polite words does not change what it asks."""
    found = vocabulary.polite.find(text)
    if not found:
        return text
    chars = list(text)
    for _, start, end in found:
        chars[start:end] = " " * (end - start)
    return _LEAD.sub("", "".join(chars)).strip(_CLOSING_MARKS + ",，、:：")


def is_follow_up(text: str, vocabulary: Vocabulary, *, names_model: bool) -> bool:
    """A short message that opens or closes like a follow-up ("and with AWQ?", "那换成AWQ呢？", "¿Y si...?"):
    it changes the previous request of the thread, which the answering layer merges. One that names a model
    must be shorter still ("and for 13B?"): "if I use 4 4090s for Llama 3 70B, ..." is a request of its own."""
    if len(text) > (FOLLOW_UP_NAMED_MAX_CHARS if names_model else FOLLOW_UP_MAX_CHARS):
        return False
    body = text.lstrip(" ¿¡\"'(")
    for _, start, _ in vocabulary.follow_up_open.find(body[:40]):
        before = body[:start].rstrip(" ¿¡")
        # at the start, or after a short first clause ("ok thanks, and for 13B?", "好的，那换成AWQ呢")
        if start <= FOLLOW_UP_EDGE_CHARS and not before.strip(" ,.") or before[-1:] in _CLAUSE_END and len(before) <= 24:
            return True
    end = len(text.rstrip(_CLOSING_MARKS))
    tail = text[max(0, end - 24) : end]
    return vocabulary.follow_up_close.search(tail) is not None
