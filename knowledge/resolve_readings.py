"""Reading a GPU name: normalisation, tokens, alternative readings, counts, and the fuzzy guard's model word."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Container
from dataclasses import dataclass

from rapidfuzz import fuzz

# Fuzzy guard: a fuzzy match may fix a typo but never pick a different part. Query and spelling must
# agree on the model number's digits (4090 vs 4080), on the letters just before it (GB300 vs B300,
# H100 vs A100; series words of SERIES_TYPO_MIN_CHARS+ letters such as "rtx" may carry a typo), and on
# the variant words after it (MI300A vs MI300X, 7900 XT vs XTX, 4090 D vs 4090). A variant the query
# lacks is allowed only when the query has an unknown word there (a misspelt variant: "l40ss").
FUZZY_VARIANTS = frozenset({"a", "x", "xt", "xtx", "ti", "d", "super", "s", "nvl", "laptop"})
SERIES_TYPO_MIN_CHARS = 3
VARIANT_TYPO_CUTOFF = 80.0  # "supr"/"super", "tii"/"ti", "nvll"/"nvl"; a brand word like "suprim" (73) is not one
MAX_COUNT = 4096  # "8x" ... "1024 x": anything bigger is not a GPU count

# Words that name a vendor or say "GPU" without telling GPUs apart.
NOISE_WORDS = frozenset(
    {"nvidia", "geforce", "tesla", "amd", "instinct", "radeon", "intel", "habana", "graphics", "card", "cards"}
    | {"nvida", "nvdia", "nivida", "nvidea", "nvidai", "gefore", "gforce"}  # common misspellings
)
VARIANT_SUFFIXES = frozenset({"ti", "super", "xt", "xtx"})  # "4080" is not the "4080 super"
# A family name means the plain part, not its regional or laptop edition: "4090" is neither the
# China-market "4090 D" nor the "4090 Laptop GPU" (a laptop name never resolves to the desktop card),
# nor a memory-modified "4090 mod 48GB" (reached by its memory or the word "mod").
FAMILY_VARIANTS = VARIANT_SUFFIXES | {"d", "laptop", "mod"}
# "RTX 4090 mobile", "4090M", "4090 notebook": all name the laptop part.
# Laptop and "modded" words in Chinese, Korean and Japanese, read before non-ASCII text is dropped.
_CJK_LAPTOP = re.compile(r"笔记本|筆記本|筆電|笔电|移动版|移動版|노트북|모바일|ノートパソコン|ノートPC|ノート|モバイル", re.IGNORECASE)
_CJK_MOD = re.compile(r"魔改|改装版|改版|개조")
_MODDED = re.compile(r"\b(?:modded|modified|mods)\b")
_LAPTOP = re.compile(r"\b(?:mobile|notebook|laptop gpu|max q|(\d{4})m)\b")
VARIANT_MARKERS = VARIANT_SUFFIXES | {"d", "s", "a"}  # "4090 D", "MI300 A": a different part
GPU_WORDS = frozenset({"gpu", "gpus"})  # dropped unless first ("gpu_1x_a100" is a Lambda instance)
# GCP accelerator types (nvidia-tesla-a100 = the 40 GB part) are exact identifiers: kept as written.
GCP_ID = re.compile(r"nvidia(?:-[a-z0-9]+)+")
NON_ALNUM = re.compile(r"[^a-z0-9]+")
_PCIE = re.compile(r"\bpci (?:e|express)\b")
_SXM = re.compile(r"\bsxm\d\b")
_O_FOR_ZERO = re.compile(r"(?<=\d)o+(?=\d|\s|$)")  # "A10O", "h1OO", "rtx 4o90"
_SUPER = re.compile(r"\b(\d{4})s\b")  # "4080S" is the 4080 SUPER
_MEMORY = re.compile(r"\b(\d+)\s*(?:gb|gib|gi|g)\b")
_TOKENS = re.compile(r"[a-z]+|\d+")
MEM_TOKEN = re.compile(r"^(\d+)gb$")
COUNT_WORDS = {"single": 1, "one": 1, "dual": 2, "two": 2, "twin": 2, "quad": 4, "four": 4, "eight": 8, "octo": 8}
_COUNT_PREFIX = re.compile(r"^(\d{1,4})\s*x\s*(.+)$")
_COUNT_X_FIRST = re.compile(r"^x\s*(\d{1,4})\s+(.+)$")  # "x8 h100"
_COUNT_SUFFIX = re.compile(r"^(.+?)(?:\s+x\s*|(?<=[0-9a-z])x)(\d{1,4})$")  # "h100 x8", "80gx8", not "rtx 4090"
_COUNT_SUFFIX_X = re.compile(r"^(.+?)\s+(\d{1,4})\s*x$")  # "h100 8x", "l40s 48gb 4x"
_COUNT_BARE = re.compile(r"^(\d{1,2})\s+([a-z].*)$")
SYSTEM_WORDS = frozenset({"dgx", "hgx"})  # DGX/HGX H100, A100, B200: 8 GPUs (nvidia.com DGX datasheets)
_ABBREVIATIONS = {"q": "quadro"}  # vast.ai writes "Q RTX 6000" for the Quadro RTX 6000
MODEL_WORD = re.compile(r"[a-z]*\d{2,}[a-z]*")  # "mi250", "4090", "h100": names a model
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
    if GCP_ID.fullmatch(s):
        return s
    s = _CJK_LAPTOP.sub(" laptop ", _CJK_MOD.sub(" mod ", s))
    words = NON_ALNUM.sub(" ", s).split()
    words = [w for i, w in enumerate(words) if w not in NOISE_WORDS and (i == 0 or w not in GPU_WORDS)]
    s = " ".join(words)
    s = _PCIE.sub("pcie", s)
    s = _SXM.sub("sxm", s)
    s = _O_FOR_ZERO.sub(lambda m: "0" * len(m.group()), s)
    s = _MEMORY.sub(r"\1gb", s)
    s = _SUPER.sub(r"\1 super", s)
    s = _MODDED.sub("mod", s)
    s = _LAPTOP.sub(lambda m: f"{m.group(1)} laptop" if m.group(1) else "laptop", s)
    words = s.split()
    if "laptop" in words:  # "笔记本4090", "rtx 4060 8gb laptop": the laptop word goes right after the model, once
        words = _after_model([w for w in words if w != "laptop"], "laptop")
    return " ".join(words)


def _after_model(words: list[str], word: str) -> list[str]:
    """Insert `word` after the model number and its variant words (`5070 ti laptop`), else at the end."""
    i = next((i for i, w in enumerate(words) if re.fullmatch(r"[a-z]*\d{3,}[a-z]*", w) and not MEM_TOKEN.match(w)), None)
    if i is None:
        return [*words, word]
    j = i + 1
    while j < len(words) and words[j] in FAMILY_VARIANTS:
        j += 1
    return [*words[:j], word, *words[j:]]


def compact_key(normalised: str) -> str:
    """The normalised name without spaces: `rtx 4090` and `rtx4090` meet here."""
    return normalised.replace(" ", "")


def name_tokens(normalised: str) -> tuple[str, ...]:
    """Letter runs and digit runs, with memory kept whole: `a100 80gb` -> (a, 100, 80gb)."""
    out: list[str] = []
    for word in normalised.split():
        out.extend([word] if MEM_TOKEN.match(word) else _TOKENS.findall(word))
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
    tokens = [t for t in name_tokens(normalised) if not MEM_TOKEN.match(t)]
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


def gpu_readings(name: str, norm: str, spellings: Container[str], vocabulary: frozenset[str]) -> list[str]:
    """Ways to read the name, most literal first: as written, hyphens as spaces, plural `s` dropped,
    `Q RTX` as Quadro, a glued series word split off, numbers after the model (vCPU, RAM) dropped.

    `spellings` are the index's compact keys (`l40s` keeps its `s`); `vocabulary` its spelling tokens.
    """
    loose = normalise_gpu_name(name.replace("-", " ")) if GCP_ID.fullmatch(norm) else norm
    raw = name.replace("-", " ") if loose != norm else name
    folded = NON_ALNUM.sub(" ", unicodedata.normalize("NFKC", raw).casefold()).split()
    singular = normalise_gpu_name(" ".join(_singular(w, spellings) for w in folded))
    expanded = " ".join(_ABBREVIATIONS.get(w, w) for w in singular.split())
    unglued = " ".join(_unglue(w, vocabulary) for w in expanded.split())
    return list(dict.fromkeys((norm, loose, singular, expanded, unglued, drop_trailing_numbers(unglued))))


def _unglue(word: str, vocabulary: frozenset[str]) -> str:
    """`rtxa2000` -> `rtx a2000`: a series word (3+ letters) glued to a lettered model number."""
    m = re.fullmatch(r"([a-z]{3,})([a-z]+\d+[a-z]*)", word)
    return f"{m.group(1)} {m.group(2)}" if m and m.group(1) in vocabulary else word


def _singular(word: str, spellings: Container[str]) -> str:
    """`3090s`, `h100s` -> `3090`, `h100` unless the word with its `s` is a spelling (`l40s`)."""
    if re.fullmatch(r"[a-z]*\d+s", word) and word not in spellings:
        return word[:-1]
    return word


def drop_trailing_numbers(norm: str) -> str:
    """`4x rtx4090 43 181` -> `4x rtx4090`: bare numbers after a model word (vCPUs, RAM) say nothing."""
    words = norm.split()
    first = next((i for i, w in enumerate(words) if re.search(r"[a-z]\d|\d[a-z]", w) and not MEM_TOKEN.match(w)), None)
    if first is None:
        return norm
    return " ".join(w for i, w in enumerate(words) if i <= first or not w.isdigit())


def variant_like(word: str) -> bool:
    """A variant word or a misspelling of one (`supr`, `tii`, `nvll`), which must not be dropped."""
    return word in VARIANT_MARKERS or any(fuzz.ratio(word, v) >= VARIANT_TYPO_CUTOFF for v in FUZZY_VARIANTS if len(v) > 1)


def split_count(norm: str) -> tuple[int, str] | None:
    """`2x 4090`, `8 x h100`, `h100 x8`, `h100 8x`, `dual 3090`, `4 a100`, `gpu 8gpu` -> (count, rest)."""
    words = norm.split()
    if len(words) > 1 and words[0] in COUNT_WORDS:
        return COUNT_WORDS[words[0]], " ".join(words[1:])
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
