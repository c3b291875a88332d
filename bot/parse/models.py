"""Model mentions: Hugging Face ids, family names with versions and sizes, resolved by the catalog."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.parse.ask import ModelMention
from bot.parse.lookup import resolve_model
from bot.parse.sizes import SizeMention

if TYPE_CHECKING:
    from knowledge.snapshot import Snapshot

MAX_MODEL_QUERIES = 6  # resolver calls per message, to keep parsing under a millisecond
_FAMILIES = (
    "llama", "codellama", "code llama", "tinyllama", "vicuna", "alpaca", "qwen", "qwq", "mistral",
    "mixtral", "ministral", "codestral", "gemma", "phi", "deepseek", "yi", "baichuan", "chatglm",
    "glm", "falcon", "internlm", "command-r", "command r", "olmo", "gpt-j", "gpt-neox", "gpt-oss",
    "gpt2", "gpt-2", "bloom", "flan-t5", "t5", "starcoder", "starcoder2", "solar", "exaone",
    "sdxl", "stable diffusion", "sd", "flux", "whisper", "bert", "roberta", "kimi", "minimax",
    "granite", "smollm", "nemotron", "aya", "jamba", "dbrx", "grok", "pythia", "orca", "zephyr",
    "openchat", "hermes", "llava", "pixtral", "hunyuan", "cogvideo",
)
_TAIL = (
    r"(?:[\s\-_.]?(?:v?\d+(?:\.\d+)*(?:x\d+)?[bm]?|instruct|chat|base|coder|math|vl|it|hf|r1|distill"
    r"|moe|large|medium|small|mini|pro|dev|schnell|xl|turbo|nemo|next|a\d+b|qwen|llama))"
)
_HF_ID = r"(?<![a-z0-9._/-])([a-z0-9][a-z0-9_.-]{1,40}/[a-z0-9][a-z0-9_.-]{1,80})"


@dataclass(frozen=True, slots=True)
class ModelFound:
    """The model named (if any), its size, what was assumed, and what needs asking."""

    mention: ModelMention | None = None
    family: str | None = None  # named without a size we could use ("llamas")
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
        if match.status == "found" and match.model_id is not None and match.model_id in snapshot.models:
            return ModelFound(_mention(snapshot, match.model_id))
        if match.status == "ambiguous" and ambiguous is None:
            ambiguous = (query, tuple(match.candidates))
    if ambiguous is not None:
        picked = _pick(ambiguous[1], size, family_word, snapshot)
        if picked is not None:
            others = ", ".join(c for c in ambiguous[1] if c != picked)
            note = f"'{ambiguous[0]}' read as {snapshot.models[picked].name} (also possible: {others})"
            return ModelFound(_mention(snapshot, picked), assumed={"model": note})
    if families:
        fam = families[0][0]
        return ModelFound(ModelMention(None, families[0][1], size.params_b if size else None), fam)
    return ModelFound()


def _pick(candidates: tuple[str, ...], size: SizeMention | None, family: str, snapshot: Snapshot) -> str | None:
    """The newest preset of the family at the stated size (catalog order is oldest first).

    Without a size the question is "which model", so nothing is picked.
    """
    if size is None:
        return None
    fitting = [
        m for m in candidates
        if m in snapshot.models and abs(snapshot.models[m].params_b - size.params_b) <= 0.15 * size.params_b
    ]
    own = [m for m in fitting if m.startswith(family.replace(" ", "-"))]
    chosen = own or fitting
    return chosen[-1] if chosen else None


def _mention(snapshot: Snapshot, model_id: str) -> ModelMention:
    model = snapshot.models[model_id]
    return ModelMention(model.id, model.name, model.params_b)


def _size_text(params_b: float) -> str:
    return f"{params_b:g}b" if params_b >= 1 else f"{params_b * 1000:g}m"
