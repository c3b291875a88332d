"""Model preset resolution by id, name, alias or Hugging Face id (org prefix and -Instruct optional)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from rapidfuzz import fuzz, process

from knowledge.resolve_readings import NON_ALNUM as _NON_ALNUM
from knowledge.resolve_readings import _TOKENS, compact_key

Status = Literal["found", "ambiguous", "none"]
MAX_QUERY_CHARS = 200  # longer text is not a model name
MAX_CANDIDATES = 8  # more matches than this ("llama") is too vague to list

# Model names: a trailing word from this set does not change the architecture.
MODEL_SUFFIXES = frozenset(
    {"instruct", "chat", "hf", "it", "pt", "base", "gguf", "awq", "gptq", "fp8", "bnb", "4bit", "8bit", "unsloth"}
)
MODEL_FUZZY_CUTOFF = 88.0
MODEL_FUZZY_MARGIN = 5.0


def normalise_model_name(text: str) -> str:
    """`meta-llama/Llama-3.1-8B-Instruct` -> `llama 3 1 8b`: org dropped, suffixes like -Instruct/-hf/-it dropped."""
    s = unicodedata.normalize("NFKC", text).casefold().strip()
    s = s.rstrip("/").rsplit("/", 1)[-1]
    words = _NON_ALNUM.sub(" ", s).split()
    while len(words) > 1 and words[-1] in MODEL_SUFFIXES:
        if words[-1] == "base" and len(words) == 2:
            break  # a size named "base" ("Whisper base", "BERT base"), not a base checkpoint of a named size
        words.pop()
    return " ".join(words)


class ModelAliasRow(Protocol):
    """The fields of `knowledge.tables.ModelAliasBase` the index reads."""

    alias: str
    model_id: str


class _ModelLike(Protocol):
    """What the index reads of a model (read-only, as the frozen ModelSpec has them)."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def hf_id(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class ModelMatch:
    """What a model name or Hugging Face id resolved to."""

    status: Status
    query: str
    model_id: str | None = None
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ModelIndex:
    """Lookup of model presets by id, name, alias or HF id (org prefix and -Instruct optional)."""

    exact: Mapping[str, str]  # compact key -> model id
    spelled: tuple[tuple[tuple[str, ...], str], ...]  # (tokens, model id)
    order: Mapping[str, int]
    # sorted numbers of a spelling -> (its spellings joined without spaces, their model ids), in `spelled` order
    by_numbers: Mapping[tuple[str, ...], tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    words: tuple[frozenset[str], ...] = ()  # each spelling's tokens as a set, in `spelled` order (build fills it)

    @classmethod
    def build(cls, models: Mapping[str, _ModelLike], aliases: Iterable[ModelAliasRow]) -> ModelIndex:
        texts = [(t, m.id) for m in models.values() for t in (m.id, m.name, m.hf_id) if t]
        named = [(a.alias, a.model_id) for a in aliases if a.model_id in models]
        texts += named
        exact: dict[str, str] = {}
        # Explicit aliases win over names on a clash, as in the GPU index: "Whisper base" normalises to
        # "whisper" (variant words drop), and the alias says a bare "whisper" means Whisper large-v3.
        for text, model_id in (*named, *texts):
            exact.setdefault(compact_key(normalise_model_name(text)), model_id)
        spelled = tuple(dict.fromkeys((_model_tokens(normalise_model_name(t)), m) for t, m in texts))
        groups: dict[tuple[str, ...], tuple[list[str], list[str]]] = {}
        for key, model_id in spelled:
            joined, ids = groups.setdefault(_numbers(key), ([], []))
            joined.append("".join(key))
            ids.append(model_id)
        by_numbers = {n: (tuple(joined), tuple(ids)) for n, (joined, ids) in groups.items()}
        words = tuple(frozenset(key) for key, _ in spelled)
        return cls(exact, spelled, {m: i for i, m in enumerate(models)}, by_numbers, words)

    def resolve(self, text: str) -> ModelMatch:
        """Found, ambiguous (`llama 70b`, `qwen 14b`) with candidates, or none."""
        if len(text) > MAX_QUERY_CHARS:
            return ModelMatch("none", text)
        norm = normalise_model_name(text)
        if not norm:
            return ModelMatch("none", text)
        model_id = self.exact.get(compact_key(norm))
        if model_id is not None:
            return ModelMatch("found", text, model_id)
        tokens = _model_tokens(norm)
        if any(t.isalpha() and t != "b" for t in tokens):
            need = set(tokens)  # a subsequence's tokens are all in the key: a set test first, in C
            ids = self._sorted(
                {m for (key, m), words in zip(self.spelled, self.words, strict=True)
                 if need <= words and _is_subsequence(tokens, key)}
            )
            if len(ids) > MAX_CANDIDATES:  # "llama 70b": the Llamas, not every model with "llama" in its name
                ids = self._sorted({m for key, m in self.spelled if m in ids and key[:1] == tokens[:1]}) or ids
            if len(ids) == 1:
                return ModelMatch("found", text, ids[0])
            if 1 < len(ids) <= MAX_CANDIDATES:
                return ModelMatch("ambiguous", text, candidates=tuple(ids))
        return self._fuzzy(norm, tokens, text)

    def _fuzzy(self, norm: str, tokens: tuple[str, ...], text: str) -> ModelMatch:
        """Spellings with the same numbers only (a typo may not change a size or a version), scored in one
        batch; those under the cutoff are left out, which cannot change `close` (it keeps none of them)."""
        joined, ids = self.by_numbers.get(_numbers(tokens), ((), ()))
        best: dict[str, float] = {}
        for _, score, i in process.extract(compact_key(norm), joined, scorer=fuzz.ratio, processor=None,
                                           score_cutoff=MODEL_FUZZY_CUTOFF, limit=None):
            best[ids[i]] = max(score, best.get(ids[i], 0.0))
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], self.order[kv[0]]))
        close = [m for m, s in ranked if s >= MODEL_FUZZY_CUTOFF and ranked[0][1] - s < MODEL_FUZZY_MARGIN]
        if len(close) == 1:
            return ModelMatch("found", text, close[0])
        return ModelMatch("ambiguous" if close else "none", text, candidates=tuple(close[:MAX_CANDIDATES]))

    def _sorted(self, ids: set[str]) -> list[str]:
        return sorted(ids, key=lambda m: self.order.get(m, 0))


def _model_tokens(norm: str) -> tuple[str, ...]:
    return tuple(_TOKENS.findall(norm))


def _numbers(tokens: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(t for t in tokens if t.isdigit()))


def _is_subsequence(part: tuple[str, ...], key: tuple[str, ...]) -> bool:
    it = iter(key)
    return all(any(t == k for k in it) for t in part)
