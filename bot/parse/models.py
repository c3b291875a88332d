"""Model mentions: Hugging Face ids, family names with versions and sizes, resolved by the catalog."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rapidfuzz import fuzz

from bot.parse.ask import ModelMention
from knowledge.resolve_models import normalise_model_name
from knowledge.resolve_readings import compact_key
from bot.parse.lookup import resolve_model
from bot.parse.sizes import SizeMention

if TYPE_CHECKING:
    from knowledge.snapshot import Snapshot

MAX_MODEL_QUERIES = 6  # resolver calls per message, to keep parsing under a millisecond
MAX_CANDIDATES = 3  # closest presets offered for a model the catalog lacks
CLOSEST_CUTOFF = 60.0  # rapidfuzz ratio (0-100) below which a preset is not offered as close
# Other names of a family ("千问3 32B" is Qwen3 32B) and DeepSeek-R1 named as "R1" ("8卡H20部署R1").
_ALIASES = (
    (re.compile(r"通义千问|通義千問|千问|千問"), "qwen"),
    (re.compile(r"(?<!deepseek.)(?<![a-z0-9_-])r1(?![a-z0-9_.-])"), "deepseek-r1"),
)
_FAMILIES = (
    "llama", "codellama", "code llama", "tinyllama", "vicuna", "alpaca", "qwen", "qwq", "mistral",
    "mixtral", "ministral", "codestral", "gemma", "phi", "deepseek", "yi", "baichuan", "chatglm",
    "glm", "falcon", "internlm", "command-r", "command r", "olmo", "gpt-j", "gpt-neox", "gpt-oss",
    "gpt2", "gpt-2", "bloom", "flan-t5", "t5", "starcoder", "starcoder2", "solar", "exaone",
    "sdxl", "stable diffusion", "sd", "flux", "whisper", "bert", "roberta", "kimi", "minimax",
    "granite", "smollm", "nemotron", "aya", "jamba", "dbrx", "grok", "pythia", "orca", "zephyr",
    "openchat", "hermes", "llava", "pixtral", "hunyuan", "cogvideo", "vistral", "swallow", "elyza", "hyperclova",
    "seallm", "sea-lion", "typhoon", "sarvam", "plamo", "kanana",
)
_TAIL = (
    r"(?:[\s\-_.]?(?:v?\d+(?:\.\d+)*(?:x\d+)?(?:[bm]|(?!\s?-?bits?|비트|ビット|比特|位))|instruct|chat|base|coder|math|vl|it|hf|r1|distill"
    r"|moe|large|medium|small|mini|pro|dev|schnell|xl|turbo|nemotron|nemo|next|a\d+b|qwen|llama|thinking"
    r"|k\d+|m\d+(?:\.\d+)?))"  # Kimi K2, MiniMax M2
)
_HF_ID = r"(?<![a-z0-9._/-])([a-z0-9][a-z0-9_.-]{1,40}/[a-z0-9][a-z0-9_.-]{1,80})"


@dataclass(frozen=True, slots=True)
class ModelFound:
    """The model named (if any), its size, what was assumed, and what needs asking."""

    mention: ModelMention | None = None
    family: str | None = None  # named without a size we could use ("llamas")
    unknown: str | None = None  # a model name the catalog lacks ("EXAONE 3.5"): ask for its size
    assumed: dict[str, str] = field(default_factory=dict)


@functools.lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    families = "|".join(re.escape(f) for f in sorted(_FAMILIES, key=len, reverse=True))
    family = re.compile(rf"(?<![a-z])({families})(?:s(?![a-z]))?({_TAIL}{{0,5}})(?![a-z])(?![\s_-]?factory)(?!\.cpp)")
    return family, re.compile(_HF_ID)


def find_model(
    text: str, sizes: list[SizeMention], snapshot: Snapshot, config_query: str | None = None
) -> ModelFound:
    """Resolve the first model the text names; a bare size is left to `params_b`."""
    family_re, hf_re = _patterns()
    text = _aliased(text)
    queries: list[str] = [config_query] if config_query else []
    if "/" in text:  # a Hugging Face id is org/name
        queries += [m.group(1) for m in hf_re.finditer(text) if "." not in m.group(1).split("/")[0]]
    families: list[tuple[str, str]] = []
    for m in family_re.finditer(text):
        families.append((m.group(1), (m.group(1) + m.group(2)).strip(" -_.")))
    size = sizes[0] if sizes else None
    for fam, span in families:
        queries.append(span)
        if size is not None and not re.search(r"\d[bm]\b", span):
            queries.append(f"{span} {_size_text(size.params_b)}")
    ambiguous: tuple[str, tuple[str, ...]] | None = None
    family_word = families[0][0] if families else ""
    for query in queries[:MAX_MODEL_QUERIES]:
        match = resolve_model(snapshot.model_index, query)
        if match.status == "found" and match.model_id is not None and match.model_id in snapshot.models \
                and _trusted(query, match.model_id, family_word, snapshot):
            return ModelFound(_mention(snapshot, match.model_id))
        if match.status == "ambiguous" and ambiguous is None:
            ambiguous = (query, tuple(match.candidates))
    if ambiguous is not None:
        picked = _pick(ambiguous[1], size, family_word, snapshot)
        if picked is not None:
            others = ", ".join(c for c in ambiguous[1] if c != picked)
            note = f"'{ambiguous[0]}' read as {snapshot.models[picked].name} (also possible: {others})"
            return ModelFound(_mention(snapshot, picked), assumed={"model": note})
    if families and size is not None:  # "qwen 7b", "llama 3b": too vague for the resolver, not for the family
        picked = _pick(_family_presets(families[0][0], snapshot), size, families[0][0], snapshot)
        if picked is not None:
            note = f"'{families[0][1]}' read as {snapshot.models[picked].name} (the family's newest release at that size)"
            return ModelFound(_mention(snapshot, picked), assumed={"model": note})
    if families:
        return _not_in_catalog(families[0][0], families[0][1], size, snapshot)
    hub = [q for q in queries if "/" in q and q != config_query]
    if hub:  # a Hugging Face id the catalog lacks
        return _not_in_catalog("", hub[0], size, snapshot)
    return ModelFound()


def _not_in_catalog(family: str, name: str, size: SizeMention | None, snapshot: Snapshot) -> ModelFound:
    """A model the catalog does not hold: a size written in the text wins ("my EXAONE 3.5 7.8B"); without one,
    a family the catalog holds is asked for its size ("llama"), and a model it does not know at all
    ("Vistral", "Mistral Small") is asked for its parameter count with the closest presets offered."""
    if size is not None:
        note = f"'{name}' is not in the catalog: sized as the {_size_text(size.params_b).upper()} written"
        return ModelFound(ModelMention(None, name, size.params_b), family or None, assumed={"model": note})
    known = _family_presets(family, snapshot)
    if known and name.strip() == family:
        return ModelFound(ModelMention(None, name, None, known[:MAX_CANDIDATES]), family)
    closest = known[:MAX_CANDIDATES] or _closest(name, snapshot)
    return ModelFound(ModelMention(None, name, None, closest), family or None, unknown=name)


def _family_presets(family: str, snapshot: Snapshot) -> tuple[str, ...]:
    """Catalog presets of a family word, newest first ("qwen" -> qwen3-..., qwen2.5-...)."""
    key = family.replace(" ", "-")
    return tuple(m for m in reversed(list(snapshot.models)) if m.startswith(key)) if key else ()


def _closest(name: str, snapshot: Snapshot) -> tuple[str, ...]:
    """The presets whose id or name is nearest to an unknown name (rapidfuzz ratio; a Hub org dropped)."""
    query = name.rsplit("/", 1)[-1]
    best: dict[str, float] = {}
    for model in snapshot.models.values():
        for spelling in (model.id, model.name.casefold()):
            score = fuzz.ratio(query, spelling, score_cutoff=CLOSEST_CUTOFF)
            best[model.id] = max(best.get(model.id, 0.0), score)
    ranked = sorted((m for m, s in best.items() if s), key=lambda m: -best[m])
    return tuple(ranked[:MAX_CANDIDATES])


def _trusted(query: str, model_id: str, family: str, snapshot: Snapshot) -> bool:
    """A near spelling of a family the catalog does not hold is another model ("Vistral 7B" is not Mistral 7B):
    such a match counts only when the catalog spells it so (an id, name or alias)."""
    if not family or _family_presets(family, snapshot) or model_id.startswith(family.replace(" ", "-")):
        return True
    return compact_key(normalise_model_name(query)) in snapshot.model_index.exact


def _aliased(text: str) -> str:
    for pattern, name in _ALIASES:
        text = pattern.sub(name, text) if pattern.search(text) else text
    return text


def _pick(candidates: tuple[str, ...], size: SizeMention | None, family: str, snapshot: Snapshot) -> str | None:
    """The newest preset of the family at the stated size (catalog order is oldest first).

    Without a size the question is "which model", so nothing is picked.
    """
    if size is None:
        return None
    # Named by the size first ("qwen 1.5b" is Qwen2.5 1.5B, not Qwen3 1.7B; "llama 1b" is Llama 3.2 1B though it
    # has 1.24 B parameters), else within 15 % of it.
    nominal = _size_text(size.params_b)
    known = [m for m in candidates if m in snapshot.models]
    fitting = [m for m in known if nominal in m.split("-")] or [
        m for m in known if abs(snapshot.models[m].params_b - size.params_b) <= 0.15 * size.params_b]
    key = family.replace(" ", "-")
    own = [m for m in fitting if m.startswith(key)]
    # The family's own releases before its derivatives: "llama 70b" is Llama 3.3 70B, not Nemotron 70B
    # (an id with a word beyond the family, versions and the size is someone's fine-tune of it).
    plain = [m for m in own if all(_VERSION_OR_SIZE.fullmatch(t) for t in m[len(key):].strip("-").split("-") if t)]
    if plain:  # the newest release by its version number (catalog rows were not added in release order)
        return max(enumerate(plain), key=lambda im: (_version(im[1][len(key):]), im[0]))[1]
    chosen = own or fitting
    return chosen[-1] if chosen else None


def _version(rest: str) -> float:
    """The release number an id carries after its family ("-3.3-70b" 3.3, "1.5-72b" 1.5, "-v3" 3); -1 without."""
    first = rest.strip("-").split("-")[0].lstrip("v")
    try:
        return float(first) if not first.endswith(("b", "m")) else -1.0
    except ValueError:
        return -1.0


_VERSION_OR_SIZE = re.compile(r"v?[\d.]+[bm]?|\d+x\d+b")


def _mention(snapshot: Snapshot, model_id: str) -> ModelMention:
    model = snapshot.models[model_id]
    return ModelMention(model.id, model.name, model.params_b)


def _size_text(params_b: float) -> str:
    return f"{params_b:g}b" if params_b >= 1 else f"{params_b * 1000:g}m"


def model_name_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` (normalised) names a model by family, other name or Hugging Face id, tail words included
    ("gemma 2 9b it", "flux schnell", "qwen/qwen2.5-7b-instruct"); positions refer to `text` itself."""
    family_re, hf_re = _patterns()
    spans = [m.span() for m in family_re.finditer(text)]
    if "/" in text:
        spans += [m.span(1) for m in hf_re.finditer(text)]
    spans += [m.span() for pattern, _ in _ALIASES for m in pattern.finditer(text)]
    return spans
