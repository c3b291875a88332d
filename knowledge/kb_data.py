"""Load and validate the knowledge-base data files (entries, glossary, GPU fact sentences)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowledge.kb_text import TermPattern, compile_term

KB_DIR = Path(__file__).parent / "kb"
LANGUAGES: tuple[str, ...] = ("en", "zh-Hans", "ko", "ja", "es", "de", "fr", "vi")
FACT_KINDS: tuple[str, ...] = ("gpu", "model", "provider")
ASPECTS: tuple[str, ...] = ("link", "bf16", "fp8", "vram", "bandwidth", "mig", "tdp", "compute", "stack", "multinode",
                             "buy_rent")
GPU_WHEN: tuple[str, ...] = ("no_link", "has_link", "has_bridge", "no_bf16", "no_fp8", "has_fp8", "has_mig")
MIN_PHRASINGS = 3
PLACEHOLDER = re.compile(r"\{([a-z0-9_]+)\}")


class KbDataError(ValueError):
    """A knowledge-base data file breaks the schema; the message names file, entry and problem."""


@dataclass(frozen=True, slots=True)
class FactRef:
    """A number the answer rests on: a catalog field (gpu/model/provider) or a sourced constant."""

    name: str  # placeholder name used in answers, e.g. "h100_nvlink_gbs"
    kind: str  # "gpu" | "model" | "provider" | "value"
    ref_id: str  # catalog id ("" for a constant)
    field: str  # catalog field, or a glossary field label for a constant
    value: float | None = None  # constants only


@dataclass(frozen=True, slots=True)
class Source:
    title: str
    url: str


@dataclass(frozen=True, slots=True)
class EntryText:
    title: str
    answer: str
    phrasings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Entry:
    """One reviewed knowledge entry in every language."""

    id: str
    tags: tuple[str, ...]
    concepts: tuple[tuple[str, float], ...]  # glossary term id, weight
    keywords: tuple[str, ...]  # entry-specific surface forms, any language
    gpus: tuple[str, ...]  # catalog ids whose mention points here
    gpu_when: tuple[str, ...]  # GPU properties whose mention points here, e.g. "no_link"
    gpu_aspects: tuple[str, ...]  # fact sentences added for each GPU the question names
    terms: tuple[str, ...]  # glossary terms every answer must use in its language's preferred form
    facts: tuple[FactRef, ...]
    sources: tuple[Source, ...]
    related: tuple[str, ...]
    texts: Mapping[str, EntryText]
    file: str


@dataclass(frozen=True, slots=True)
class GlossaryTerm:
    preferred: Mapping[str, str]
    patterns: tuple[TermPattern, ...]


@dataclass(frozen=True, slots=True)
class KnowledgeBase:
    entries: Mapping[str, Entry]  # sorted by id
    terms: Mapping[str, GlossaryTerm]
    field_labels: Mapping[str, Mapping[str, str]]
    aspects: Mapping[str, Mapping[str, Mapping[str, str]]]  # aspect -> variant -> language -> template
    keyword_patterns: Mapping[str, tuple[TermPattern, ...]]  # entry id -> compiled keywords


def _fail(file: str, where: str, problem: str) -> KbDataError:
    return KbDataError(f"{file}: {where}: {problem}")


def _parse_fact(file: str, entry_id: str, name: str, raw: Mapping[str, Any]) -> FactRef:
    kinds = [k for k in FACT_KINDS if k in raw]
    if len(kinds) == 1 and isinstance(raw.get("field"), str):
        return FactRef(name=name, kind=kinds[0], ref_id=str(raw[kinds[0]]), field=raw["field"])
    if not kinds and isinstance(raw.get("value"), int | float) and isinstance(raw.get("field"), str):
        return FactRef(name=name, kind="value", ref_id="", field=raw["field"], value=float(raw["value"]))
    raise _fail(file, entry_id, f"fact {name!r} needs one of {FACT_KINDS} + field, or value + field")


def _parse_text(file: str, entry_id: str, lang: str, raw: Any) -> EntryText:
    if not isinstance(raw, dict):
        raise _fail(file, entry_id, f"missing language {lang}")
    title, answer = raw.get("title"), raw.get("answer")
    phrasings = raw.get("phrasings", [])
    if not (isinstance(title, str) and title.strip() and isinstance(answer, str) and answer.strip()):
        raise _fail(file, entry_id, f"{lang}: title and answer must be non-empty text")
    if len(phrasings) < MIN_PHRASINGS or not all(isinstance(p, str) and p.strip() for p in phrasings):
        raise _fail(file, entry_id, f"{lang}: needs at least {MIN_PHRASINGS} phrasings")
    return EntryText(title=title.strip(), answer=answer.strip(), phrasings=tuple(phrasings))


def _parse_entry(file: str, raw: Mapping[str, Any]) -> Entry:
    entry_id = raw.get("id")
    if not isinstance(entry_id, str) or not re.fullmatch(r"[a-z0-9]+\.[a-z0-9.\-]+", entry_id):
        raise _fail(file, str(entry_id), "id must look like 'topic.name'")
    texts = {lang: _parse_text(file, entry_id, lang, raw.get("text", {}).get(lang)) for lang in LANGUAGES}
    facts = tuple(_parse_fact(file, entry_id, n, f) for n, f in sorted(raw.get("facts", {}).items()))
    aspects = tuple(raw.get("gpu_aspects", ()))
    when = tuple(raw.get("gpu_when", ()))
    if bad := [a for a in aspects if a not in ASPECTS] + [w for w in when if w not in GPU_WHEN]:
        raise _fail(file, entry_id, f"unknown gpu_aspects/gpu_when {bad}")
    sources = tuple(Source(title=s["title"], url=s["url"]) for s in raw.get("sources", ()))
    if not sources:
        raise _fail(file, entry_id, "needs at least one source")
    return Entry(
        id=entry_id,
        tags=tuple(raw.get("tags", ())),
        concepts=tuple((c, float(w)) for c, w in sorted(raw.get("concepts", {}).items())),
        keywords=tuple(raw.get("keywords", ())),
        gpus=tuple(raw.get("gpus", ())),
        gpu_when=when,
        gpu_aspects=aspects,
        terms=tuple(raw.get("terms", ())),
        facts=facts,
        sources=sources,
        related=tuple(raw.get("related", ())),
        texts=texts,
        file=file,
    )


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise KbDataError(f"{path.name}:{exc.lineno}: {exc.msg}") from exc


def _check_links(entries: Mapping[str, Entry], terms: Mapping[str, GlossaryTerm]) -> None:
    """Related ids, glossary concepts and placeholders must all resolve; broken data stops loading."""
    for entry in entries.values():
        where = entry.id
        if missing := [r for r in entry.related if r not in entries]:
            raise _fail(entry.file, where, f"related ids not found: {missing}")
        if missing := [c for c, _ in entry.concepts if c not in terms] + [t for t in entry.terms if t not in terms]:
            raise _fail(entry.file, where, f"glossary terms not found: {missing}")
        names = {f.name for f in entry.facts}
        for lang, text in entry.texts.items():
            if undefined := set(PLACEHOLDER.findall(text.answer)) - names:
                raise _fail(entry.file, where, f"{lang}: placeholders without a fact: {sorted(undefined)}")


def load_glossary(path: Path) -> tuple[dict[str, GlossaryTerm], dict[str, Mapping[str, str]]]:
    raw = _read_json(path)
    terms = {
        term_id: GlossaryTerm(
            preferred=t["preferred"], patterns=tuple(compile_term(m) for m in t["match"])
        )
        for term_id, t in raw["terms"].items()
    }
    for term_id, term in terms.items():
        if missing := [lang for lang in LANGUAGES if not term.preferred.get(lang)]:
            raise _fail(path.name, term_id, f"preferred form missing for {missing}")
    return terms, raw["fields"]


@functools.cache
def load_kb(kb_dir: Path = KB_DIR) -> KnowledgeBase:
    """Read and validate every data file once; later calls return the same immutable value."""
    terms, field_labels = load_glossary(kb_dir / "glossary.json")
    entries: dict[str, Entry] = {}
    for path in sorted((kb_dir / "entries").glob("*.json")):
        raw = _read_json(path)
        for item in raw if isinstance(raw, list) else [raw]:
            entry = _parse_entry(path.name, item)
            if entry.id in entries:
                raise _fail(path.name, entry.id, f"duplicate id (also in {entries[entry.id].file})")
            entries[entry.id] = entry
    _check_links(entries, terms)
    aspects = _read_json(kb_dir / "gpu_aspects.json")["aspects"]
    return KnowledgeBase(
        entries=dict(sorted(entries.items())),
        terms=terms,
        field_labels=field_labels,
        aspects=aspects,
        keyword_patterns={e.id: tuple(compile_term(k) for k in e.keywords) for e in entries.values()},
    )
