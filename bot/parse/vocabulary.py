"""The parser's word lists: loads bot/parse/lexicon/*.json once, validates them, compiles matchers."""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from importlib import resources
from typing import Any

from bot.parse.anchors import anchors, has_any
from bot.parse.text import normalise

log = logging.getLogger(__name__)

LANGUAGE_FILES: tuple[str, ...] = ("en", "zh", "ko", "ja", "es", "de", "fr", "vi")
INTENT_KEYS = frozenset(
    {"help", "language", "digest", "alert", "compare", "compare_weak", "price", "specs", "explain", "advise", "buy", "rent"}
)
METHOD_KEYS = frozenset(
    {"qlora", "lora", "full", "pretrain", "inference", "serving", "running", "diffusion", "generate", "finetune", "train",
     "rl"}
)
LEVEL_KEYS = frozenset({"low", "medium", "high"})
OBJECTIVE_KEYS = frozenset({"cheapest", "fastest", "simplest"})
SPOT_KEYS = frozenset({"yes", "no"})
LANGUAGE_CODES = frozenset({"en", "zh-Hans", "zh-Hant", "ko", "ja", "es", "de", "fr", "vi"})

# A Latin phrase must not be glued to other Latin letters or digits ("lora" is not in "explorar").
_LATIN = "0-9a-z\u00c0-\u024f\u1e00-\u1eff"
_LATIN_EDGE = re.compile(f"[{_LATIN}]")
# The same edges as `[{_LATIN}]`, split so that each class compiles cheaply (ASCII / two ranges).
_START_EDGE = "(?<![0-9a-z]{0})(?<![\u00c0-\u024f\u1e00-\u1eff]{0})"  # before the first character
_END_EDGE = f"(?:(?<![{_LATIN}])|(?![{_LATIN}]))"  # after the last character
# A table checks its phrases' anchors with `in` before scanning only when there are this few of them.
MAX_TABLE_ANCHORS = 48


class LexiconError(ValueError):
    """A lexicon file is malformed; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class PhraseTable:
    """Phrases -> values, matched longest-first, non-overlapping, left to right.

    The phrases starting with a Latin letter or digit and the others are two compiled tries:
    one trie of both was 3-4x slower to scan, and the Latin one checks its start edge first.
    Matches are merged exactly as one regex's `finditer` would give them.
    `anchors` (None for tables with many phrases): one of them is in every phrase, so a text
    without any of them is not scanned.
    """

    patterns: tuple[re.Pattern[str], ...]
    values: Mapping[str, Any]
    anchors: tuple[str, ...] | None = None

    def _matches(self, text: str) -> Iterator[re.Match[str]]:
        if not self.patterns or (self.anchors is not None and not has_any(text, self.anchors)):
            return iter(())
        if len(self.patterns) == 1:
            return self.patterns[0].finditer(text)
        return _merged(self.patterns, text)

    def find(self, text: str) -> list[tuple[Any, int, int]]:
        """Every non-overlapping phrase in `text` (already normalised) as (value, start, end)."""
        return [(self.values[m.group(0)], m.start(), m.end()) for m in self._matches(text)]

    def first(self, text: str) -> Any | None:
        if not self.patterns or (self.anchors is not None and not has_any(text, self.anchors)):
            return None
        found = [m for m in (p.search(text) for p in self.patterns) if m is not None]
        return self.values[min(found, key=lambda m: m.start()).group(0)] if found else None


def _merged(patterns: tuple[re.Pattern[str], ...], text: str) -> Iterator[re.Match[str]]:
    """The matches one alternation of `patterns` would find (no two can start at one position).

    After each match the next one is searched from its end, so a match of one pattern that
    overlaps a match of another is searched again from there, as the single regex would.
    """
    pos = 0
    pending: list[re.Match[str] | None] = [p.search(text) for p in patterns]
    while True:
        best: re.Match[str] | None = None
        for i, m in enumerate(pending):
            if m is not None and m.start() < pos:
                m = pending[i] = patterns[i].search(text, pos)
            if m is not None and (best is None or m.start() < best.start()):
                best = m
        if best is None:
            return
        yield best
        pos = best.end()


def phrase_regex(phrases: list[str], *, latin_start: bool = False) -> str:
    """One regex for many phrases, as a trie (shared prefixes merged), longest match first.

    A flat alternation of ~1,500 phrases is tried branch by branch at every position (about
    0.5 ms per message); the trie tries only the branches that start with the character at hand.
    A phrase starting or ending with a Latin letter or digit gets a word edge on that side.
    The end edge is written once after the whole trie ("if the last character matched is Latin,
    the next one is not"): backtracking tries the same ends in the same order as one edge per
    phrase would, but the regex compiles in a fifth of the time (each Latin character class costs
    ~0.5 ms to compile, and there were ~800 of them).
    `latin_start=True` (every phrase starts with a Latin letter or digit): the start edge is
    checked once before the trie, which fails at once inside a word (2-3x faster to scan).
    """
    trie: dict[str, Any] = {}
    for phrase in set(phrases):
        if phrase:
            node = trie
            for ch in phrase:
                node = node.setdefault(ch, {})
            node[""] = True
    branches = []
    for ch in sorted(trie):
        # The edge check comes after the first literal so that every branch starts with a literal:
        # the regex engine then skips positions whose character starts no phrase.
        edge = _START_EDGE.format(re.escape(ch)) if _LATIN_EDGE.match(ch) and not latin_start else ""
        branches.append(re.escape(ch) + edge + _emit(trie[ch]))
    if not branches:
        return ""
    return ("(?<![" + _LATIN + "])" if latin_start else "") + "(?:" + "|".join(branches) + ")" + _END_EDGE


def _emit(node: dict[str, Any]) -> str:
    """The regex for the rest of a trie branch."""
    options = [re.escape(ch) + _emit(child) for ch, child in sorted(node.items()) if ch]
    if "" in node:
        options.append("")
    if len(options) == 1:
        return options[0]
    return "(?:" + "|".join(options) + ")"


def build_table(mapping: Mapping[str, Any]) -> PhraseTable:
    """Compile a phrase -> value mapping (phrases normalised; the first value given wins)."""
    values: dict[str, Any] = {}
    for phrase, value in mapping.items():
        values.setdefault(normalise(phrase), value)
    values.pop("", None)
    if not values:
        return PhraseTable((), {})
    latin = [p for p in values if _LATIN_EDGE.match(p)]
    other = [p for p in values if not _LATIN_EDGE.match(p)]
    patterns = tuple(
        re.compile(phrase_regex(group, latin_start=group is latin)) for group in (latin, other) if group
    )
    words = anchors(values)
    return PhraseTable(patterns, values, words if len(words) <= MAX_TABLE_ANCHORS else None)


def _ending(phrases: Mapping[str, Any]) -> re.Pattern[str]:
    """One of `phrases` at the end of a text (a Latin phrase starting at a word edge); longest first."""
    words = sorted({normalise(p) for p in phrases if p}, key=len, reverse=True)
    edge = f"(?<![{_LATIN}])"
    return re.compile("(?:" + "|".join((edge if _LATIN_EDGE.match(w) else "") + re.escape(w) for w in words) + ")$")


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """Every language's phrases merged per category (people mix languages in one message)."""

    intents: PhraseTable
    methods: PhraseTable
    budget_levels: PhraseTable
    objectives: PhraseTable
    spot: PhraseTable
    language_names: PhraseTable
    count_words: Mapping[str, int]
    gpu_units: tuple[str, ...]
    deadline_phrases: PhraseTable
    deadline_prefixes: tuple[str, ...]
    time_units: Mapping[str, float]
    per_hour: tuple[str, ...]
    sample_units: tuple[str, ...]
    epoch_units: tuple[str, ...]
    count_questions: tuple[str, ...]  # "how many", "几张", "몇 장": next to a GPU, the count is the question
    follow_up_open: PhraseTable  # "and with", "那", "그럼", "では", "y si", "und mit", "et avec", "còn"
    follow_up_close: re.Pattern[str]  # at the very end: "instead?", "呢", "면요?", "たら？", "thì sao?"
    polite: PhraseTable  # "hi", "thanks!", "请问", "감사합니다": wrapping that tells nothing about the request
    stopwords: Mapping[str, frozenset[str]]  # stopwords plus the words of the language's own phrases
    simplified_chars: frozenset[str]
    traditional_chars: frozenset[str]
    japanese_kanji: frozenset[str]  # kanji Chinese does not use in GPU talk ("8枚", "円")
    currency_symbols: Mapping[str, str]
    usd_per_unit: Mapping[str, Decimal]
    rates_as_of: str
    rates_source: str


def _read(name: str) -> dict[str, Any]:
    path = resources.files("bot.parse").joinpath("lexicon", f"{name}.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise LexiconError(f"lexicon/{name}.json: cannot read: {exc}") from exc
    if not isinstance(data, dict):
        raise LexiconError(f"lexicon/{name}.json: top level must be an object")
    return data


def _require_groups(data: dict[str, Any], file: str, key: str, allowed: frozenset[str]) -> dict[str, list[str]]:
    groups = data.get(key)
    if not isinstance(groups, dict):
        raise LexiconError(f"lexicon/{file}.json: {key}: must be an object of phrase lists")
    for name, phrases in groups.items():
        if name not in allowed:
            raise LexiconError(f"lexicon/{file}.json: {key}.{name}: unknown (allowed: {sorted(allowed)})")
        if not isinstance(phrases, list) or not all(isinstance(p, str) and p.strip() for p in phrases):
            raise LexiconError(f"lexicon/{file}.json: {key}.{name}: must be a list of non-empty strings")
    return groups


def _require_numbers(data: dict[str, Any], file: str, key: str) -> dict[str, float]:
    table = data.get(key)
    if not isinstance(table, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in table.values()
    ):
        raise LexiconError(f"lexicon/{file}.json: {key}: must map phrases to positive numbers")
    return table


def _require_list(data: dict[str, Any], file: str, key: str) -> list[str]:
    items = data.get(key)
    if not isinstance(items, list) or not all(isinstance(p, str) and p.strip() for p in items):
        raise LexiconError(f"lexicon/{file}.json: {key}: must be a list of non-empty strings")
    return items


def _phrase_words(data: dict[str, Any]) -> list[str]:
    """Single words of a language's own phrases: they tell its Latin-script messages apart too."""
    words: list[str] = []
    for key in ("intents", "methods", "budget_words", "objectives"):
        for phrases in data.get(key, {}).values():
            words += [w for p in phrases for w in p.split() if len(w) > 3]
    # Number words too ("zwei", "deux", "hai"): "Mixtral auf zwei RTX 3090" is German.
    return words + [w for phrase in data.get("numbers", {}) for w in phrase.split() if len(w) > 2]


def _script_pairs() -> dict[str, str]:
    """Simplified -> traditional character map from scripts.json (identical pairs dropped)."""
    pairs = _read("scripts").get("pairs")
    if not isinstance(pairs, str):
        raise LexiconError("lexicon/scripts.json: pairs: must be a string of character pairs")
    table: dict[str, str] = {}
    for pair in pairs.split():
        if len(pair) != 2:
            raise LexiconError(f"lexicon/scripts.json: pairs: {pair!r} is not two characters")
        if pair[0] != pair[1]:
            table[pair[0]] = pair[1]
    return table


def _with_traditional(phrases: list[str], to_trad: Mapping[str, str]) -> list[str]:
    out = list(phrases)
    for phrase in phrases:
        trad = "".join(to_trad.get(ch, ch) for ch in phrase)
        if trad != phrase:
            out.append(trad)
    return out


def _currency() -> tuple[dict[str, str], dict[str, Decimal], str, str]:
    data = _read("currency")
    symbols, rates = data.get("symbols"), data.get("usd_per_unit")
    if not isinstance(symbols, dict) or not isinstance(rates, dict):
        raise LexiconError("lexicon/currency.json: symbols and usd_per_unit must be objects")
    try:
        usd = {code: Decimal(str(v)) for code, v in rates.items()}
    except InvalidOperation as exc:
        raise LexiconError(f"lexicon/currency.json: usd_per_unit: not a number: {exc}") from exc
    for symbol, code in symbols.items():
        if code not in usd and code != "YEN_SIGN":
            raise LexiconError(f"lexicon/currency.json: symbols.{symbol}: no rate for {code}")
    if not data.get("as_of") or not data.get("source"):
        raise LexiconError("lexicon/currency.json: as_of and source are required")
    return {normalise(k): v for k, v in symbols.items()}, usd, str(data["as_of"]), str(data["source"])


@functools.lru_cache(maxsize=1)
def load_vocabulary() -> Vocabulary:
    """Read and validate every lexicon file once; a bad file raises LexiconError naming it."""
    to_trad = _script_pairs()
    merged: dict[str, dict[str, Any]] = {
        k: {} for k in ("intents", "methods", "levels", "objectives", "spot", "langs", "deadline")
    }
    counts: dict[str, int] = {}
    units: dict[str, float] = {}
    lists: dict[str, list[str]] = {
        k: [] for k in ("gpu_units", "prefixes", "per_hour", "samples", "epochs", "count_questions")
    }
    follow_up: dict[str, dict[str, Any]] = {"open": {}, "close": {}, "polite": {}}
    stopwords: dict[str, frozenset[str]] = {}
    for file in LANGUAGE_FILES:
        data = _read(file)
        extend = (lambda p: _with_traditional(p, to_trad)) if file == "zh" else list
        for key, target, allowed in (
            ("intents", "intents", INTENT_KEYS),
            ("methods", "methods", METHOD_KEYS),
            ("budget_words", "levels", LEVEL_KEYS),
            ("objectives", "objectives", OBJECTIVE_KEYS),
            ("spot", "spot", SPOT_KEYS),
            ("language_names", "langs", LANGUAGE_CODES),
        ):
            for value, phrases in _require_groups(data, file, key, allowed).items():
                for phrase in extend(phrases):
                    merged[target].setdefault(phrase, value)
        for word, n in _require_numbers(data, file, "numbers").items():
            counts.setdefault(normalise(word), int(n))
        deadline = data.get("deadline")
        if not isinstance(deadline, dict):
            raise LexiconError(f"lexicon/{file}.json: deadline: must be an object")
        for phrase, hours in _require_numbers(deadline, file, "phrases").items():
            for variant in extend([phrase]):
                merged["deadline"].setdefault(variant, float(hours))
        for unit, hours in _require_numbers(deadline, file, "units").items():
            for variant in extend([unit]):
                units.setdefault(normalise(variant), float(hours))
        lists["prefixes"] += extend(_require_list(deadline, file, "prefixes"))
        for key, target in (("gpu_units", "gpu_units"), ("per_hour", "per_hour"), ("samples", "samples"),
                            ("epochs", "epochs"), ("count_questions", "count_questions")):
            lists[target] += extend(_require_list(data, file, key))
        for side, key in (("open", "follow_up_open"), ("close", "follow_up_close"), ("polite", "polite")):
            for phrase in extend(_require_list(data, file, key)):
                follow_up[side].setdefault(phrase, True)
        words = _require_list(data, file, "stopwords") + _phrase_words(data)
        stopwords[file] = frozenset(normalise(w) for w in extend(words))
    symbols, usd, as_of, source = _currency()
    norm = {k: tuple(sorted({normalise(p) for p in v}, key=lambda p: (-len(p), p))) for k, v in lists.items()}
    return Vocabulary(
        intents=build_table(merged["intents"]),
        methods=build_table(merged["methods"]),
        budget_levels=build_table(merged["levels"]),
        objectives=build_table(merged["objectives"]),
        spot=build_table(merged["spot"]),
        language_names=build_table(merged["langs"]),
        count_words=counts,
        gpu_units=norm["gpu_units"],
        deadline_phrases=build_table(merged["deadline"]),
        deadline_prefixes=norm["prefixes"],
        time_units=units,
        per_hour=norm["per_hour"],
        sample_units=norm["samples"],
        epoch_units=norm["epochs"],
        count_questions=norm["count_questions"],
        follow_up_open=build_table(follow_up["open"]),
        follow_up_close=_ending(follow_up["close"]),
        polite=build_table(follow_up["polite"]),
        stopwords=stopwords,
        simplified_chars=frozenset(to_trad),
        traditional_chars=frozenset(to_trad.values()),
        japanese_kanji=frozenset(str(_read("ja").get("japanese_kanji", ""))),
        currency_symbols=symbols,
        usd_per_unit=usd,
        rates_as_of=as_of,
        rates_source=source,
    )
