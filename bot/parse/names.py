"""Names in a message (GPUs, models, engines, clouds), blanked before its language is read.

"Command R plus" is not French and "Flux schnell" is not German: a name's words say nothing about
the language a person writes in. Spans are found as whole words: every spelling the catalog holds
(GPU ids, names and aliases; model ids, names, aliases and Hub ids; providers), the model families
with their tails ("gemma 2 9b it"), and the product names in lexicon/names.json.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import TYPE_CHECKING

from bot.parse.models import model_name_spans
from bot.parse.text import normalise
from bot.parse.vocabulary import LexiconError, load_vocabulary

if TYPE_CHECKING:
    from knowledge.snapshot import Snapshot

# Words of Latin script or digits; "3.1" and "qwen2.5" stay one word, "a100-sxm4" is two.
_WORD = re.compile(r"[0-9a-z\u00c0-\u024f\u1e00-\u1eff]+(?:\.[0-9]+)*")
_HAS_DIGIT = re.compile(r"\d")
# A run of letters, digits and . _ - + with a digit in it is a code, never a function word:
# "p4de.24xlarge", "a2-highgpu-1g", "bm.gpu.mi300x.8", "phi-3-mini-128k-instruct", "fp16".
_CODE = re.compile(r"(?<![0-9a-z._+-])[0-9a-z._+-]*\d[0-9a-z._+-]*")

Spellings = Mapping[str, tuple[tuple[str, ...], ...]]  # first word -> whole spellings, longest first


def name_words(name: str) -> tuple[str, ...]:
    """A name as the words the detector compares ("A100-SXM4-80GB" -> a100, sxm4, 80gb)."""
    return tuple(_WORD.findall(normalise(name)))


def index_spellings(names: Iterable[str], *, keep: frozenset[str] = frozenset()) -> Spellings:
    """Spellings by first word. A one-word spelling that is also a word of one of our languages is
    left out unless listed in `keep`: read alone it is the word."""
    words_of_languages = frozenset().union(*load_vocabulary().stopwords.values()) - keep
    by_first: dict[str, set[tuple[str, ...]]] = {}
    for name in names:
        words = name_words(name)
        if not words or (len(words) == 1 and words[0] in words_of_languages):
            continue
        by_first.setdefault(words[0], set()).add(words)
    return {w: tuple(sorted(s, key=lambda t: (-len(t), t))) for w, s in by_first.items()}


@functools.lru_cache(maxsize=1)
def product_spellings() -> Spellings:
    """lexicon/names.json: the products the catalog does not hold."""
    data = json.loads(resources.files("bot.parse").joinpath("lexicon/names.json").read_text(encoding="utf-8"))
    names = data.get("names")
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise LexiconError("lexicon/names.json: names: must be a list of non-empty strings")
    # The lexicon's names are reviewed as names ("ollama" is also a word of the method phrases).
    return index_spellings(names, keep=frozenset(w for n in names for w in name_words(n)))


def catalog_names(snapshot: Snapshot) -> list[str]:
    """Every spelling of a GPU, model or provider the snapshot holds."""
    names: list[str] = []
    for gpu in snapshot.gpus.values():
        names += [gpu.id, gpu.name]
    names += [" ".join(words) for words, _ in snapshot.gpu_index.phrases]
    names += [" ".join(key) for key, _ in snapshot.gpu_index.family_keys]
    for model in snapshot.models.values():
        names += [model.id, model.name, *([model.hf_id] if model.hf_id else [])]
    names += [" ".join(words) for words, _ in snapshot.model_index.spelled]
    for provider in snapshot.providers.values():
        names += [provider.id, provider.name]
    return names


def catalog_spellings(snapshot: Snapshot) -> Spellings:
    return snapshot.derived("parse.names", lambda s: index_spellings(catalog_names(s)))


def name_spans(text: str, spellings: Iterable[Spellings]) -> list[tuple[int, int]]:
    """Where `text` (normalised) names something: the longest spelling at each word, left to right."""
    tables = tuple(spellings)
    words = list(_WORD.finditer(text))
    written = [w.group(0) for w in words]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        options = [found for table in tables if (found := table.get(written[i]))]
        if not options:  # most words start no spelling (about 7 in 8)
            i += 1
            continue
        seen = tuple(written[i : i + 8])  # spellings of more than 8 words are never read
        longest = max((len(s) for spelled in options for s in spelled if seen[: len(s)] == s), default=0)
        if longest:
            spans.append((words[i].start(), words[i + longest - 1].end()))
        i += max(longest, 1)
    return spans


def without_names(text: str, snapshot: Snapshot | None = None) -> str:
    """`text` (normalised) with every name replaced by spaces; positions are kept."""
    tables = [product_spellings()] + ([catalog_spellings(snapshot)] if snapshot is not None else [])
    spans = name_spans(text, tables) + model_name_spans(text) + [m.span() for m in _CODE.finditer(text)]
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)
