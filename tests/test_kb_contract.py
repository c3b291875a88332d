"""Contract tests for the knowledge-base data: every language, every placeholder, every link, every catalog id."""

from __future__ import annotations

import csv
import json
import re
import shutil
from dataclasses import fields
from pathlib import Path

import pytest

from knowledge.kb import get_entry
from knowledge.kb_data import KB_DIR, LANGUAGES, MIN_PHRASINGS, PLACEHOLDER, KbDataError, load_kb
from rules.types import GpuSpec, ModelSpec, Provider

DATA_DIR = Path(__file__).parents[1] / "knowledge" / "data"
MIN_ENTRIES = 42
MAX_ANSWER_CHARS = 900  # "short (2-5 sentences)"; CJK answers are shorter in characters


def _catalog_ids(name: str) -> set[str]:
    with (DATA_DIR / name).open(encoding="utf-8") as fh:
        return {row["id"] for row in csv.DictReader(fh)}


@pytest.fixture(scope="module")
def kb():  # type: ignore[no-untyped-def]
    return load_kb()


def test_enough_entries_with_unique_ids(kb) -> None:  # type: ignore[no-untyped-def]
    assert len(kb.entries) >= MIN_ENTRIES
    raw_ids = [e["id"] for p in (KB_DIR / "entries").glob("*.json") for e in json.loads(p.read_text("utf-8"))]
    assert len(raw_ids) == len(set(raw_ids)) == len(kb.entries)


def test_every_entry_has_every_language(kb) -> None:  # type: ignore[no-untyped-def]
    for entry in kb.entries.values():
        assert set(entry.texts) == set(LANGUAGES), entry.id
        for lang, text in entry.texts.items():
            assert text.title.strip() and text.answer.strip(), (entry.id, lang)
            assert len(text.phrasings) >= MIN_PHRASINGS, (entry.id, lang)
            assert len(text.answer) <= MAX_ANSWER_CHARS, (entry.id, lang, len(text.answer))


def test_placeholders_are_defined_and_used_alike_in_every_language(kb) -> None:  # type: ignore[no-untyped-def]
    for entry in kb.entries.values():
        defined = {f.name for f in entry.facts}
        english = set(PLACEHOLDER.findall(entry.texts["en"].answer))
        for lang, text in entry.texts.items():
            used = set(PLACEHOLDER.findall(text.answer))
            assert used <= defined, (entry.id, lang, used - defined)
            assert used == english, (entry.id, lang, used ^ english)
            assert "{" not in PLACEHOLDER.sub("", text.answer), (entry.id, lang, "stray brace")


def test_related_ids_exist_and_are_not_self(kb) -> None:  # type: ignore[no-untyped-def]
    for entry in kb.entries.values():
        assert entry.related, entry.id
        for rid in entry.related:
            assert rid in kb.entries and rid != entry.id, (entry.id, rid)


def test_facts_point_at_real_catalog_rows_and_fields(kb) -> None:  # type: ignore[no-untyped-def]
    ids = {"gpu": _catalog_ids("gpus.csv"), "model": _catalog_ids("models.csv"), "provider": _catalog_ids("providers.csv")}
    field_names = {"gpu": {f.name for f in fields(GpuSpec)}, "model": {f.name for f in fields(ModelSpec)},
                   "provider": {f.name for f in fields(Provider)}}
    for entry in kb.entries.values():
        for fact in entry.facts:
            if fact.kind == "value":
                labels = kb.field_labels.get(fact.field, {})
                assert set(labels) == set(LANGUAGES) and all(labels.values()), (entry.id, fact.name)
                continue
            assert fact.ref_id in ids[fact.kind], (entry.id, fact.name, fact.ref_id)
            assert fact.field in field_names[fact.kind], (entry.id, fact.name, fact.field)
        for gpu_id in entry.gpus:
            assert gpu_id in ids["gpu"], (entry.id, gpu_id)


def _fold(text: str) -> str:
    return text.casefold().replace("-", " ")


def test_glossary_terms_used_consistently(kb) -> None:  # type: ignore[no-untyped-def]
    """An entry's key terms appear in each language's title or answer in the glossary's preferred form."""
    for entry in kb.entries.values():
        for term in entry.terms:
            for lang, text in entry.texts.items():
                preferred = kb.terms[term].preferred[lang]
                assert _fold(preferred) in _fold(f"{text.title} {text.answer}"), (entry.id, lang, term, preferred)


def test_gpu_aspect_templates_cover_every_language(kb) -> None:  # type: ignore[no-untyped-def]
    for aspect, variants in kb.aspects.items():
        for variant, by_lang in variants.items():
            assert set(by_lang) == set(LANGUAGES), (aspect, variant)


def test_sources_are_urls(kb) -> None:  # type: ignore[no-untyped-def]
    for entry in kb.entries.values():
        for source in entry.sources:
            assert re.match(r"https?://", source.url), (entry.id, source.url)


def test_every_entry_renders_with_current_catalog_numbers(kb, snapshot) -> None:  # type: ignore[no-untyped-def]
    for entry_id in kb.entries:
        for lang in LANGUAGES:
            answer = get_entry(entry_id, lang, snapshot)
            assert "{" not in answer.text, (entry_id, lang)
            assert all(value != "?" for _, value in answer.facts), (entry_id, lang, answer.facts)
            assert len(answer.related) == len(kb.entries[entry_id].related)


def test_numbers_come_from_the_catalog(snapshot) -> None:  # type: ignore[no-untyped-def]
    """The 4090 answer states the catalog's link and bandwidth, not a copy typed into the entry."""
    gpu = snapshot.gpus["rtx-4090"]
    answer = get_entry("nvlink.rtx4090-none", "en", snapshot)
    assert gpu.scaleup_link in answer.text
    assert f"{gpu.scaleup_bw_gbs:,.0f} GB/s" in answer.text
    h100 = snapshot.gpus["h100-sxm-80gb"]
    assert f"{h100.scaleup_bw_gbs:,.0f} GB/s" in answer.text


def test_broken_data_stops_loading_with_file_and_entry(tmp_path: Path) -> None:
    bad = tmp_path / "kb"
    shutil.copytree(KB_DIR, bad)
    path = bad / "entries" / "interconnect.json"
    data = json.loads(path.read_text("utf-8"))
    data[0]["related"] = ["no.such-entry"]
    path.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    with pytest.raises(KbDataError, match=r"interconnect\.json: nvlink\.vs-pcie: related ids not found"):
        load_kb(bad)


def test_missing_language_stops_loading(tmp_path: Path) -> None:
    bad = tmp_path / "kb"
    shutil.copytree(KB_DIR, bad)
    path = bad / "entries" / "gpus.json"
    data = json.loads(path.read_text("utf-8"))
    del data[0]["text"]["vi"]
    path.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    with pytest.raises(KbDataError, match="missing language vi"):
        load_kb(bad)
