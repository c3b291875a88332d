"""GPU and model name resolution: normalise, exact alias, counts, memory, families, then fuzzy."""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from rapidfuzz import fuzz

from knowledge.resolve_models import ModelIndex, ModelMatch, normalise_model_name
from rules.types import GpuSpec

__all__ = [
    "GpuIndex", "GpuMatch", "ModelIndex", "ModelMatch", "normalise_gpu_name", "normalise_model_name",
    "resolve_cloud_accelerator", "split_count",
]  # fmt: skip

log = logging.getLogger(__name__)

Status = Literal["found", "ambiguous", "none"]

# Fuzzy matching: a candidate needs FUZZY_CUTOFF (0-100, rapidfuzz ratio on the compact key) and must
# beat the runner-up GPU by FUZZY_MARGIN points; otherwise the answer is ambiguous or none.
FUZZY_CUTOFF = 84.0
FUZZY_MARGIN = 6.0
# Fuzzy guard: a fuzzy match may fix a typo but never pick a different part. Query and spelling must
# agree on the model number's digits (4090 vs 4080), on the letters just before it (GB300 vs B300,
# H100 vs A100; series words of SERIES_TYPO_MIN_CHARS+ letters such as "rtx" may carry a typo), and on
# the variant words after it (MI300A vs MI300X, 7900 XT vs XTX, 4090 D vs 4090). A variant the query
# lacks is allowed only when the query has an unknown word there (a misspelt variant: "l40ss").
FUZZY_VARIANTS = frozenset({"a", "x", "xt", "xtx", "ti", "d", "super", "s", "nvl"})
SERIES_TYPO_MIN_CHARS = 3
VARIANT_TYPO_CUTOFF = 80.0  # "supr"/"super", "tii"/"ti", "nvll"/"nvl"; a brand word like "suprim" (73) is not one
SUGGEST_CUTOFF = 55.0  # below this a GPU is not worth suggesting
MAX_SUGGESTIONS = 3
MAX_FAMILY = 8  # a token run shared by more GPUs than this ("rtx") is too vague to list
MAX_QUERY_CHARS = 200  # longer text is not a GPU name; answer "none" without work
MAX_COUNT = 4096  # "8x" ... "1024 x": anything bigger is not a GPU count
MEMORY_TOLERANCE = 0.12  # cloud memory (GiB, often usable) vs catalog VRAM (GB)

# Words that name a vendor or say "GPU" without telling GPUs apart.
NOISE_WORDS = frozenset(
    {"nvidia", "geforce", "tesla", "amd", "instinct", "radeon", "intel", "habana", "graphics", "card", "cards"}
    | {"nvida", "nvdia", "nivida", "nvidea", "nvidai", "gefore", "gforce"}  # common misspellings
)
VARIANT_SUFFIXES = frozenset({"ti", "super", "xt", "xtx"})  # "4080" is not the "4080 super"
VARIANT_MARKERS = VARIANT_SUFFIXES | {"d", "s", "a"}  # "4090 D", "MI300 A": a different part
GPU_WORDS = frozenset({"gpu", "gpus"})  # dropped unless first ("gpu_1x_a100" is a Lambda instance)
# GCP accelerator types (nvidia-tesla-a100 = the 40 GB part) are exact identifiers: kept as written.
_GCP_ID = re.compile(r"nvidia(?:-[a-z0-9]+)+")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_PCIE = re.compile(r"\bpci (?:e|express)\b")
_SXM = re.compile(r"\bsxm\d\b")
_O_FOR_ZERO = re.compile(r"(?<=\d)o+(?=\d|\s|$)")  # "A10O", "h1OO", "rtx 4o90"
_SUPER = re.compile(r"\b(\d{4})s\b")  # "4080S" is the 4080 SUPER
_MEMORY = re.compile(r"\b(\d+)\s*(?:gb|gib|gi|g)\b")
_TOKENS = re.compile(r"[a-z]+|\d+")
_MEM_TOKEN = re.compile(r"^(\d+)gb$")
_FORM_HINTS = {"pcie": "pcie", "pci": "pcie", "sxm": "sxm", "nvl": "nvl", "nvlink": "sxm"}  # words in instance names
_COUNT_WORDS = {"single": 1, "one": 1, "dual": 2, "two": 2, "twin": 2, "quad": 4, "four": 4, "eight": 8, "octo": 8}
_COUNT_PREFIX = re.compile(r"^(\d{1,4})\s*x\s*(.+)$")
_COUNT_X_FIRST = re.compile(r"^x\s*(\d{1,4})\s+(.+)$")  # "x8 h100"
_COUNT_SUFFIX = re.compile(r"^(.+?)(?:\s+x\s*|(?<=[0-9a-z])x)(\d{1,4})$")  # "h100 x8", "80gx8", not "rtx 4090"
_COUNT_SUFFIX_X = re.compile(r"^(.+?)\s+(\d{1,4})\s*x$")  # "h100 8x", "l40s 48gb 4x"
_COUNT_BARE = re.compile(r"^(\d{1,2})\s+([a-z].*)$")
_SYSTEM_WORDS = frozenset({"dgx", "hgx"})  # DGX/HGX H100, A100, B200: 8 GPUs (nvidia.com DGX datasheets)
_ABBREVIATIONS = {"q": "quadro"}  # vast.ai writes "Q RTX 6000" for the Quadro RTX 6000
_MODEL_WORD = re.compile(r"[a-z]*\d{2,}[a-z]*")  # "mi250", "4090", "h100": names a model
_OCI_SHAPE = re.compile(r"^((?:bm|vm) (?:gpu )?.+?) (\d{1,2})()$")  # OCI shapes end in the GPU count: BM.GPU.L40S-NC.4
_COUNT_MIDDLE = re.compile(r"^([a-z]+\d+[a-z]*) (\d) (\d+gb)$")  # Scaleway "L40S-4-48G": model, count, memory
_COUNT_WORD = re.compile(r"(\d{1,3})(?:x|gpus?)|x(\d{1,3})")


def normalise_gpu_name(text: str) -> str:
    """Canonical form of a GPU name: ASCII lower case, vendor words dropped, memory as `80gb`.

    NFKC (fullwidth to ASCII), casefold, `×` to `x`, separators to single spaces, `pci e` to `pcie`,
    `sxm4`/`sxm5` to `sxm`, a letter O between digits to zero, `80G`/`80 GiB` to `80gb`. GCP
    accelerator ids (`nvidia-tesla-a100`) are returned as written. Idempotent.
    """
    s = unicodedata.normalize("NFKC", text).casefold().strip().replace("×", "x").replace("*", "x")
    if _GCP_ID.fullmatch(s):
        return s
    words = _NON_ALNUM.sub(" ", s).split()
    words = [w for i, w in enumerate(words) if w not in NOISE_WORDS and (i == 0 or w not in GPU_WORDS)]
    s = " ".join(words)
    s = _PCIE.sub("pcie", s)
    s = _SXM.sub("sxm", s)
    s = _O_FOR_ZERO.sub(lambda m: "0" * len(m.group()), s)
    s = _MEMORY.sub(r"\1gb", s)
    s = _SUPER.sub(r"\1 super", s)
    return " ".join(s.split())


def compact_key(normalised: str) -> str:
    """The normalised name without spaces: `rtx 4090` and `rtx4090` meet here."""
    return normalised.replace(" ", "")


def name_tokens(normalised: str) -> tuple[str, ...]:
    """Letter runs and digit runs, with memory kept whole: `a100 80gb` -> (a, 100, 80gb)."""
    out: list[str] = []
    for word in normalised.split():
        out.extend([word] if _MEM_TOKEN.match(word) else _TOKENS.findall(word))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class ModelSignature:
    """The model word of a name: letters before the number, the number, variant and other words after."""

    prefix: str
    number: str
    variants: frozenset[str]
    rest: tuple[str, ...]


def model_signature(normalised: str) -> ModelSignature | None:
    """`rx 7900 xt` -> (rx, 7900, {xt}, ()); `mi300a` -> (mi, 300, {a}, ()); None without a number."""
    tokens = [t for t in name_tokens(normalised) if not _MEM_TOKEN.match(t)]
    i = next((i for i, t in enumerate(tokens) if t.isdigit()), None)
    if i is None:
        return None
    start = i
    while start and tokens[start - 1].isalpha():
        start -= 1
    prefix = "".join(tokens[start:i])  # "rtx a6000" and "rtxa6000" both -> "rtxa"
    after = tokens[i + 1 :]
    variants = frozenset(t for t in after if t in FUZZY_VARIANTS)
    return ModelSignature(prefix, tokens[i], variants, tuple(t for t in after if t not in FUZZY_VARIANTS))


def fuzzy_allowed(query: ModelSignature | None, spelling: ModelSignature | None, vocabulary: frozenset[str]) -> bool:
    """The fuzzy guard (see FUZZY_VARIANTS): may `query` be read as a typo of `spelling`?"""
    if query is None:
        return True
    if spelling is None or query.number != spelling.number:
        return False
    if not _same_prefix(query.prefix, spelling.prefix, vocabulary):
        return False
    if not query.variants <= spelling.variants:
        return False
    misspelt = any(w not in vocabulary for w in query.rest)
    return query.variants == spelling.variants or misspelt


def _same_prefix(query: str, spelling: str, vocabulary: frozenset[str]) -> bool:
    """Equal letters before the number; or one adds a whole series word (`a6000` / `rtx a6000`); or a typo
    in a long series word that keeps the letter touching the number (`rtxx 4090`, not `rtxa` vs `rtx`)."""
    if query == spelling:
        return True
    short, long = sorted((query, spelling), key=len)
    head = long[: len(long) - len(short)]
    if long.endswith(short) and len(head) >= SERIES_TYPO_MIN_CHARS and head in vocabulary:
        return True
    typo = min(len(query), len(spelling)) >= SERIES_TYPO_MIN_CHARS and fuzz.ratio(query, spelling) >= VARIANT_TYPO_CUTOFF
    return typo and query[-1] == spelling[-1]


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
            if not _GCP_ID.fullmatch(norm) and row.kind != "instance":
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
        """Ways to read the name, most literal first: as written, hyphens as spaces, plural `s` dropped,
        `Q RTX` as Quadro, a glued series word split off, numbers after the model (vCPU, RAM) dropped."""
        loose = normalise_gpu_name(name.replace("-", " ")) if _GCP_ID.fullmatch(norm) else norm
        raw = name.replace("-", " ") if loose != norm else name
        words = [self._singular(w) for w in _NON_ALNUM.sub(" ", unicodedata.normalize("NFKC", raw).casefold()).split()]
        singular = normalise_gpu_name(" ".join(words))
        expanded = " ".join(_ABBREVIATIONS.get(w, w) for w in singular.split())
        unglued = " ".join(self._unglue(w) for w in expanded.split())
        return list(dict.fromkeys((norm, loose, singular, expanded, unglued, _drop_trailing_numbers(unglued))))

    def _unglue(self, word: str) -> str:
        """`rtxa2000` -> `rtx a2000`: a series word (3+ letters) glued to a lettered model number."""
        m = re.fullmatch(r"([a-z]{3,})([a-z]+\d+[a-z]*)", word)
        return f"{m.group(1)} {m.group(2)}" if m and m.group(1) in self.vocabulary else word

    def _singular(self, word: str) -> str:
        """`3090s`, `h100s` -> `3090`, `h100` unless the word with its `s` is a spelling (`l40s`)."""
        if re.fullmatch(r"[a-z]*\d+s", word) and word not in self.exact:
            return word[:-1]
        return word

    def _read(self, text: str, query: str) -> GpuMatch | None:
        """Lookup of the text, then of its parts after a count is split off (`8x`, `dual`, `DGX` = 8)."""
        count, rest = None, text
        words = text.split()
        if any(w in _SYSTEM_WORDS for w in words):
            count, rest = 8, " ".join(w for w in words if w not in _SYSTEM_WORDS)
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
            if j - 1 in positions and _variant_like(word):
                return False
            if (m := _MEM_TOKEN.match(word)) and not _vram_matches(self.gpus[gpu_id], int(m.group(1))):
                return False
            if _MODEL_WORD.fullmatch(word) and not _MEM_TOKEN.match(word):
                other = self._lookup(word, "")
                if other is None or other.gpu_id != gpu_id:
                    return False
        return True

    def _family(self, tokens: tuple[str, ...], query: str) -> GpuMatch | None:
        memory = [int(m.group(1)) for t in tokens if (m := _MEM_TOKEN.match(t))]
        core = tuple(t for t in tokens if not _MEM_TOKEN.match(t))
        if not core or len(memory) > 1 or not any(t.isdigit() for t in core) or (len(core) == 1 and len(core[0]) < 3):
            return None  # "rtx" or "3" alone says too little
        containing = [(key, gid) for key, gid in self.family_keys if _contains(key, core)]
        ids = list(dict.fromkeys(gid for _, gid in containing))
        if not ids or len(ids) > MAX_FAMILY:
            return None
        suggest = tuple(dict.fromkeys(gid for _, gid in containing))[:MAX_SUGGESTIONS]
        # "3090" means the 3090, not the 3090 Ti; "4070" is none of 4070 Ti / SUPER (a card not in the catalog)
        upgraded = {g for g in ids if all(_followed_by_variant(k, core) for k, gid in containing if gid == g)}
        ids = [g for g in ids if g not in upgraded]
        if memory:
            ids = [g for g in ids if _vram_matches(self.gpus[g], memory[0])]
        if not ids:
            return GpuMatch("none", query, suggestions=suggest)
        return self._pick(ids, query, "memory" if memory else "family")

    def known_words(self, norm: str) -> str:
        """The query without words whose tokens no catalog spelling uses (count words kept)."""
        vocab = self.vocabulary
        keep = [w for w in norm.split() if w in _COUNT_WORDS or re.fullmatch(r"\d+x?|x", w) or set(name_tokens(w)) <= vocab]
        if any(_variant_like(w) for w in norm.split() if w not in keep):
            return ""  # "rtx 4090 d", "rtx 4080 supr": the dropped word names (or misspells) another part
        return " ".join(keep) if any(re.search(r"[a-z]\d|\d\d\d", w) for w in keep) else ""

    def family_ids(self, norm: str) -> list[str]:
        """GPUs with a spelling containing this name's tokens (memory ignored), in catalog order."""
        core = tuple(t for t in name_tokens(norm) if not _MEM_TOKEN.match(t))
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


def _drop_trailing_numbers(norm: str) -> str:
    """`4x rtx4090 43 181` -> `4x rtx4090`: bare numbers after a model word (vCPUs, RAM) say nothing."""
    words = norm.split()
    first = next((i for i, w in enumerate(words) if re.search(r"[a-z]\d|\d[a-z]", w) and not _MEM_TOKEN.match(w)), None)
    if first is None:
        return norm
    return " ".join(w for i, w in enumerate(words) if i <= first or not w.isdigit())


def _variant_like(word: str) -> bool:
    """A variant word or a misspelling of one (`supr`, `tii`, `nvll`), which must not be dropped."""
    return word in VARIANT_MARKERS or any(fuzz.ratio(word, v) >= VARIANT_TYPO_CUTOFF for v in FUZZY_VARIANTS if len(v) > 1)


def _contains(key: tuple[str, ...], part: tuple[str, ...]) -> bool:
    n = len(part)
    return any(key[i : i + n] == part for i in range(len(key) - n + 1))


def _followed_by_variant(key: tuple[str, ...], part: tuple[str, ...]) -> bool:
    """True when every occurrence of `part` in `key` is followed by Ti/Super/XT (a different card)."""
    n = len(part)
    starts = [i for i in range(len(key) - n + 1) if key[i : i + n] == part]
    return bool(starts) and all(i + n < len(key) and key[i + n] in VARIANT_SUFFIXES for i in starts)


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


def split_count(norm: str) -> tuple[int, str] | None:
    """`2x 4090`, `8 x h100`, `h100 x8`, `h100 8x`, `dual 3090`, `4 a100`, `gpu 8gpu` -> (count, rest)."""
    words = norm.split()
    if len(words) > 1 and words[0] in _COUNT_WORDS:
        return _COUNT_WORDS[words[0]], " ".join(words[1:])
    patterns = ((_COUNT_PREFIX, 1, 2), (_COUNT_X_FIRST, 1, 2), (_COUNT_SUFFIX, 2, 1), (_COUNT_SUFFIX_X, 2, 1), (_COUNT_BARE, 1, 2))
    for pattern, count_group, rest_group in patterns:
        m = pattern.match(norm)
        if not m or not m.group(rest_group).strip() or not 1 <= int(m.group(count_group)) <= MAX_COUNT:
            continue
        count, rest = m.group(count_group), m.group(rest_group).strip()
        if rest.isdigit() and len(count) > len(rest):  # "3090 x2": the count is the short number
            continue
        return int(count), rest
    m = _OCI_SHAPE.match(norm) or _COUNT_MIDDLE.match(norm)
    if m:
        return int(m.group(2)), f"{m.group(1)} {m.group(3)}".strip()
    return _count_word(words)


def _count_word(words: list[str]) -> tuple[int, str] | None:
    """One count word inside an instance name: `8gpu`, `2x`, `x4` between other words."""
    hits = [(i, m) for i, w in enumerate(words) if (m := _COUNT_WORD.fullmatch(w))]
    if len(hits) != 1 or len(words) < 2:
        return None
    i, m = hits[0]
    count = int(m.group(1) or m.group(2))
    return (count, " ".join(words[:i] + words[i + 1 :])) if 1 <= count <= MAX_COUNT else None


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
