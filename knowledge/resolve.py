"""GPU and model name resolution: normalise, exact alias, counts, memory, families, then fuzzy."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from rapidfuzz import fuzz

from knowledge.resolve_models import MAX_QUERY_CHARS, ModelIndex, ModelMatch, Status, normalise_model_name
from knowledge.resolve_readings import (
    COUNT_WORDS,
    GCP_ID,
    MEM_TOKEN,
    MODEL_WORD,
    SYSTEM_WORDS,
    FAMILY_VARIANTS,
    ModelSignature,
    compact_key,
    fuzzy_allowed,
    gpu_readings,
    model_signature,
    name_tokens,
    normalise_gpu_name,
    split_count,
    variant_like,
)
from rules.types import GpuSpec

__all__ = [
    "GpuIndex", "GpuMatch", "ModelIndex", "ModelMatch", "normalise_gpu_name", "normalise_model_name",
    "resolve_cloud_accelerator", "split_count",
]  # fmt: skip

log = logging.getLogger(__name__)


# Fuzzy matching: a candidate needs FUZZY_CUTOFF (0-100, rapidfuzz ratio on the compact key) and must
# beat the runner-up GPU by FUZZY_MARGIN points; otherwise the answer is ambiguous or none.
FUZZY_CUTOFF = 84.0
FUZZY_MARGIN = 6.0
SUGGEST_CUTOFF = 55.0  # below this a GPU is not worth suggesting
MAX_SUGGESTIONS = 3
MAX_FAMILY = 8  # a token run shared by more GPUs than this ("rtx") is too vague to list
MEMORY_TOLERANCE = 0.12  # cloud memory (GiB, often usable) vs catalog VRAM (GB)
_FORM_HINTS = {"pcie": "pcie", "pci": "pcie", "sxm": "sxm", "nvl": "nvl", "nvlink": "sxm"}  # words in instance names


class GpuAliasRow(Protocol):
    """The fields of `knowledge.tables.GpuAliasBase` the index reads."""

    alias: str
    gpu_id: str
    kind: str
    count: int


@dataclass(frozen=True, slots=True)
class GpuMatch:
    """What a GPU name resolved to. `count` = GPUs implied by "2x4090" or an instance type."""

    status: Status
    query: str
    gpu_id: str | None = None
    candidates: tuple[str, ...] = ()
    suggestions: tuple[str, ...] = ()
    count: int | None = None
    method: str = ""  # alias, family, memory, fuzzy: how it was found (for "I took X as Y")


@dataclass(frozen=True, slots=True)
class _Entry:
    gpu_id: str
    count: int  # GPUs an instance alias implies, 0 otherwise
    kind: str


@dataclass(frozen=True, slots=True)
class GpuIndex:
    """Immutable lookup tables over the catalog's GPUs and aliases."""

    gpus: Mapping[str, GpuSpec]
    exact: Mapping[str, _Entry]  # compact key -> entry
    bags: Mapping[tuple[str, ...], frozenset[str]]  # sorted tokens -> GPU ids (order-free spellings)
    family_keys: tuple[tuple[tuple[str, ...], str], ...]  # (tokens, gpu id) for family and fuzzy
    fuzzy_keys: tuple[tuple[str, str, ModelSignature | None], ...]  # (compact key, gpu id, model word)
    vocabulary: frozenset[str]  # every token of every spelling
    phrases: tuple[tuple[tuple[str, ...], str], ...] = ()  # (words of a spelling with a model number, gpu id)
    _cache: dict[object, GpuMatch] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(cls, gpus: Mapping[str, GpuSpec], aliases: Iterable[GpuAliasRow]) -> GpuIndex:
        """Index ids, names and aliases; explicit aliases win over names on a clash."""
        keyed: dict[str, _Entry] = {}
        for gpu in gpus.values():
            for text in (gpu.id, gpu.name):
                keyed.setdefault(compact_key(normalise_gpu_name(text)), _Entry(gpu.id, 0, "name"))
        spelled: list[tuple[str, str]] = [(normalise_gpu_name(g.id), g.id) for g in gpus.values()]
        spelled += [(normalise_gpu_name(g.name), g.id) for g in gpus.values()]
        for row in aliases:
            if row.gpu_id not in gpus:
                log.warning("alias %r points at unknown GPU %r; skipped", row.alias, row.gpu_id)
                continue
            norm = normalise_gpu_name(row.alias)
            keyed[compact_key(norm)] = _Entry(row.gpu_id, row.count, row.kind)
            if not GCP_ID.fullmatch(norm) and row.kind != "instance":
                spelled.append((norm, row.gpu_id))
        bags: dict[tuple[str, ...], set[str]] = {}
        for norm, gpu_id in spelled:
            bags.setdefault(tuple(sorted(name_tokens(norm))), set()).add(gpu_id)
        family = tuple(dict.fromkeys((name_tokens(n), g) for n, g in spelled))
        fuzzy_keys = tuple(dict.fromkeys((compact_key(n), g, model_signature(n)) for n, g in spelled))
        vocabulary = frozenset(t for key, _ in family for t in key)
        phrases = tuple(dict.fromkeys((tuple(n.split()), g) for n, g in spelled if re.search(r"\d", n)))
        bag_sets = {k: frozenset(v) for k, v in bags.items()}
        return cls(dict(gpus), keyed, bag_sets, family, fuzzy_keys, vocabulary, phrases)

    def resolve(self, name: str) -> GpuMatch:
        """Resolve a GPU name as a person or a cloud writes it (cached per query text)."""
        hit = self._cache.get(name)
        if hit is None:
            hit = self._resolve(name)
            if len(self._cache) < 50_000:
                self._cache[name] = hit
        return hit

    def _resolve(self, name: str) -> GpuMatch:
        if len(name) > MAX_QUERY_CHARS:
            return GpuMatch("none", name)
        norm = normalise_gpu_name(name)
        if not norm:
            return GpuMatch("none", name)
        for text in self.readings(name, norm):
            found = self._read(text, name)
            if found is not None:
                return found
        split = split_count(norm)
        if split is not None:
            return _with_count(self._fuzzy(split[1], name), split[0])
        return self._fuzzy(norm, name)

    def readings(self, name: str, norm: str) -> list[str]:
        """Ways to read the name, most literal first (see `gpu_readings`)."""
        return gpu_readings(name, norm, self.exact, self.vocabulary)

    def _read(self, text: str, query: str) -> GpuMatch | None:
        """Lookup of the text, then of its parts after a count is split off (`8x`, `dual`, `DGX` = 8)."""
        count, rest = None, text
        words = text.split()
        if any(w in SYSTEM_WORDS for w in words):
            count, rest = 8, " ".join(w for w in words if w not in SYSTEM_WORDS)
        tries = [(count, rest)]
        split = split_count(rest)
        if split is not None:
            tries.append((split[0] * (count or 1), normalise_gpu_name(split[1])))
        order = [tries[0], *tries[1:], *((n, self.known_words(p)) for n, p in tries[1:]), (count, self.known_words(rest))]
        for n, candidate in order:  # a written count beats a reading that ignores it
            found = self._lookup(candidate, query) if candidate else None
            if found is not None:
                return _with_count(found, n) if n else found
        for n, part in tries:
            found = self._covering(part, query)
            if found is not None:
                return _with_count(found, n) if n else found
        return None

    def _lookup(self, norm: str, query: str) -> GpuMatch | None:
        """Exact key, order-free tokens, then the family of GPUs spelled with these tokens."""
        entry = self.exact.get(compact_key(norm))
        if entry is not None:
            return GpuMatch("found", query, entry.gpu_id, count=entry.count or None, method="alias")
        tokens = name_tokens(norm)
        bag = self.bags.get(tuple(sorted(tokens)))
        if bag is not None and len(bag) == 1:
            return GpuMatch("found", query, next(iter(bag)), method="alias")
        return self._family(tokens, query)

    def _covering(self, text: str, query: str) -> GpuMatch | None:
        """A longer name that contains a whole spelling: `MSI RTX 4090 Suprim X`, `V100-PCIE-32GB`.

        Refused when a variant word follows the model (`4090 D`, `7900 XT`), when another model
        number is in the text, or when a memory size does not fit the GPU.
        """
        words = text.split()
        best: dict[str, int] = {}
        for phrase, gpu_id in self.phrases:
            if len(phrase) < len(words) and len(phrase) >= best.get(gpu_id, 0) and self._covers(phrase, words, gpu_id):
                best[gpu_id] = len(phrase)
        if not best:
            return None
        longest = max(best.values())
        return self._pick([g for g in self.gpus if best.get(g) == longest], query, "contains")

    def _covers(self, phrase: tuple[str, ...], words: list[str], gpu_id: str) -> bool:
        positions, i = [], 0
        for part in phrase:
            while i < len(words) and words[i] != part:
                i += 1
            if i == len(words):
                return False
            positions.append(i)
            i += 1
        for j, word in enumerate(words):
            if j in positions:
                continue
            if j - 1 in positions and variant_like(word):
                return False
            if (m := MEM_TOKEN.match(word)) and not _vram_matches(self.gpus[gpu_id], int(m.group(1))):
                return False
            if MODEL_WORD.fullmatch(word) and not MEM_TOKEN.match(word):
                other = self._lookup(word, "")
                if other is None or other.gpu_id != gpu_id:
                    return False
        return True

    def _family(self, tokens: tuple[str, ...], query: str) -> GpuMatch | None:
        memory = [int(m.group(1)) for t in tokens if (m := MEM_TOKEN.match(t))]
        core = tuple(t for t in tokens if not MEM_TOKEN.match(t))
        if not core or len(memory) > 1 or not any(t.isdigit() for t in core) or (len(core) == 1 and len(core[0]) < 3):
            return None  # "rtx" or "3" alone says too little
        if not any(t.isdigit() and len(t) > 1 for t in core) and not any(len(t) >= 3 and t.isalpha() for t in core):
            return None  # "v2" (from "Standard_NC6s_v2") says too little; "m2 ultra" is a name
        containing = [(key, gid) for key, gid in self.family_keys if _contains(key, core)]
        ids = list(dict.fromkeys(gid for _, gid in containing))
        # "3090" means the 3090, not the 3090 Ti; "4070" is none of 4070 Ti / SUPER (a card not in the catalog)
        upgraded = {g for g in ids if all(_followed_by_variant(k, core) for k, gid in containing if gid == g)}
        plain = [g for g in ids if g not in upgraded]
        if not ids or len(plain or ids) > MAX_FAMILY:
            return None  # "apple m2": 3 sizes of the base chip, not 11 with the M2 Pro, Max and Ultra
        suggest = tuple(plain or ids)[:MAX_SUGGESTIONS]
        ids = plain
        if memory:
            ids = [g for g in plain if _vram_matches(self.gpus[g], memory[0])]
            if not ids:  # "4090 48gb": no stock card has it, a memory-modified one may
                ids = [g for g in upgraded if self.gpus[g].modified and _vram_matches(self.gpus[g], memory[0])]
        if not ids:
            return GpuMatch("none", query, suggestions=suggest)
        return self._pick(ids, query, "memory" if memory else "family")

    def known_words(self, norm: str) -> str:
        """The query without words whose tokens no catalog spelling uses (count words kept)."""
        vocab = self.vocabulary
        keep = [w for w in norm.split() if w in COUNT_WORDS or re.fullmatch(r"\d+x?|x", w) or set(name_tokens(w)) <= vocab]
        if any(variant_like(w) for w in norm.split() if w not in keep):
            return ""  # "rtx 4090 d", "rtx 4080 supr": the dropped word names (or misspells) another part
        return " ".join(keep) if any(re.search(r"[a-z]\d|\d\d\d", w) for w in keep) else ""

    def family_ids(self, norm: str) -> list[str]:
        """GPUs with a spelling containing this name's tokens (memory ignored), in catalog order."""
        core = tuple(t for t in name_tokens(norm) if not MEM_TOKEN.match(t))
        found = {gid for key, gid in self.family_keys if core and _contains(key, core)}
        return [g for g in self.gpus if g in found]

    def _pick(self, ids: list[str], query: str, method: str) -> GpuMatch:
        """One GPU, or the SXM part when variants differ only in form factor, else ambiguous."""
        if len(ids) == 1:
            return GpuMatch("found", query, ids[0], method=method)
        specs = [self.gpus[g] for g in ids]
        if len({s.vram_gb for s in specs}) == 1:
            sxm = [s.id for s in specs if s.form_factor.upper().startswith("SXM")]
            if len(sxm) == 1:
                return GpuMatch("found", query, sxm[0], method=method)
        ordered = sorted(ids, key=lambda g: (not self.gpus[g].form_factor.upper().startswith("SXM"), -self.gpus[g].vram_gb))
        return GpuMatch("ambiguous", query, candidates=tuple(ordered))

    def _fuzzy(self, norm: str, query: str) -> GpuMatch:
        """Typos: best ratio per GPU over spellings the fuzzy guard allows; accept only above the cutoff
        and clearly ahead of the runner-up. A refused near miss stays in the suggestions."""
        ranked = self.fuzzy_scores(norm)
        if not ranked:
            return GpuMatch("none", query)
        allowed = self.fuzzy_scores(norm, guarded=True)
        best_id, best = allowed[0] if allowed else ("", 0.0)
        runner = allowed[1][1] if len(allowed) > 1 else 0.0
        digits_ok = bool(allowed) and _digits(norm) <= _digit_set(self, best_id)
        if best >= FUZZY_CUTOFF and best - runner >= FUZZY_MARGIN and digits_ok:
            return GpuMatch("found", query, best_id, method="fuzzy")
        close = tuple(g for g, s in allowed if s >= FUZZY_CUTOFF and best - s < FUZZY_MARGIN)
        if len(close) > 1:
            return GpuMatch("ambiguous", query, candidates=close[:MAX_FAMILY])
        suggestions = tuple(g for g, s in ranked[:MAX_SUGGESTIONS] if s >= SUGGEST_CUTOFF)
        return GpuMatch("none", query, suggestions=suggestions)

    def fuzzy_scores(self, norm: str, guarded: bool = False) -> list[tuple[str, float]]:
        """GPU ids with their best rapidfuzz ratio against any spelling (with `guarded`, only spellings
        the fuzzy guard allows), best first (ties: catalog order)."""
        q = compact_key(norm)
        signature = model_signature(norm) if guarded else None
        best: dict[str, float] = {}
        for key, gid, spelled in self.fuzzy_keys:
            if guarded and not fuzzy_allowed(signature, spelled, self.vocabulary):
                continue
            score = fuzz.ratio(q, key)
            if score > best.get(gid, -1.0):
                best[gid] = score
        order = {g: i for i, g in enumerate(self.gpus)}
        return sorted(best.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def _contains(key: tuple[str, ...], part: tuple[str, ...]) -> bool:
    n = len(part)
    return any(key[i : i + n] == part for i in range(len(key) - n + 1))


# "Apple M2" is the base chip, not the M2 Pro, Max or Ultra (other chips, other memory and bandwidth).
APPLE_TIERS = frozenset({"pro", "max", "ultra"})  # after the chip's tokens ("m", "2"): another chip


def _followed_by_variant(key: tuple[str, ...], part: tuple[str, ...]) -> bool:
    """True when every occurrence of `part` in `key` is followed by Ti/Super/XT/D/Laptop (a different card), or
    an Apple chip's by Pro/Max/Ultra (APPLE_TIERS)."""
    n = len(part)
    starts = [i for i in range(len(key) - n + 1) if key[i : i + n] == part]
    return bool(starts) and all(i + n < len(key) and (key[i + n] in FAMILY_VARIANTS or (
        key[i + n] in APPLE_TIERS and part[-2:-1] == ("m",) and part[-1].isdigit())) for i in starts)



def _vram_matches(gpu: GpuSpec, memory: float) -> bool:
    return abs(gpu.vram_gb - memory) <= MEMORY_TOLERANCE * gpu.vram_gb


def _digits(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"\d+", text))


def _digit_set(index: GpuIndex, gpu_id: str) -> frozenset[str]:
    """Every number used in any spelling of this GPU (a fuzzy match may not invent numbers)."""
    return frozenset(d for key, gid, _ in index.fuzzy_keys if gid == gpu_id for d in re.findall(r"\d+", key))


def _with_count(match: GpuMatch, count: int) -> GpuMatch:
    total = count * (match.count or 1)
    return GpuMatch(match.status, match.query, match.gpu_id, match.candidates, match.suggestions, total, match.method)


def resolve_cloud_accelerator(
    index: GpuIndex,
    accelerator_name: str,
    memory_gib: float | None = None,
    instance_type: str | None = None,
    gpu_count: int | None = None,
) -> GpuMatch:
    """Map a price catalog row to a GPU: instance alias, then name + per-GPU memory, then the name.

    `nvidia-tesla-a100`, `A100` + 40 GiB, `p4d.24xlarge` all land on one catalog id; the form factor
    comes from the instance alias or a `pcie`/`sxm` word in the instance name, else the SXM default.
    Some catalogs give the memory of all GPUs together: with `gpu_count`, memory / count is tried too.
    """
    key = (accelerator_name, None if memory_gib is None else round(memory_gib, 1), instance_type, gpu_count)
    hit = index._cache.get(key)
    if hit is None:
        memories = [m for m in (memory_gib, memory_gib / gpu_count if memory_gib and gpu_count else None) if m]
        hit = _resolve_cloud(index, accelerator_name, memories, instance_type)
        index._cache[key] = hit
    return hit


def _resolve_cloud(index: GpuIndex, name: str, memories: list[float], instance_type: str | None) -> GpuMatch:
    instance = normalise_gpu_name(instance_type or "")
    if instance:
        entry = index.exact.get(compact_key(instance))
        if entry is not None and entry.kind == "instance":
            return GpuMatch("found", name, entry.gpu_id, count=entry.count or None, method="instance")
    match = index.resolve(name)
    if match.status == "none":
        return match
    ids = list(match.candidates) if match.status == "ambiguous" else index.family_ids(normalise_gpu_name(name))
    for memory in memories:
        fits = [g for g in ids if _vram_matches(index.gpus[g], memory)]
        if fits:
            ids = fits
            break
    hint = {_FORM_HINTS[t] for t in name_tokens(instance) if t in _FORM_HINTS}
    if hint:
        ids = [g for g in ids if hint & set(name_tokens(normalise_gpu_name(g)))] or ids
    if match.gpu_id is not None and (match.gpu_id in ids or not ids):
        return match if len(ids) != 1 else replace(match, gpu_id=ids[0], method="memory")
    picked = index._pick(ids, name, "memory")
    return picked if picked.status == "found" else match
