"""Language is read from script and function words, never from names (issue 21 item 2).

Every GPU, model and provider spelling the catalog holds, and every product name of the lexicon, is
put into a short question in each of the eight languages; the question's language must come out,
whatever words the name carries ("Command R plus" is not French, "Flux schnell" is not German,
"Gemma 2 9b it" is not English). A name alone tells no language at all.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from bot.answer.language import question_language
from bot.parse import parse
from knowledge.load import DATA_DIR, read_rows
from knowledge.tables import GpuAliasBase, GpuBase, ModelAliasBase, ModelPresetBase, ProviderBase

# Short questions: the fewer function words, the more a name's own words could outweigh them.
FRAMES = {
    "en": "is {} enough for this?",
    "zh-Hans": "{}够用吗？",
    "ko": "{}로 충분한가요?",
    "ja": "{}で足りますか？",
    "es": "¿me sirve {} para esto?",
    "de": "reicht {} dafür?",
    "fr": "est-ce que {} suffit ?",
    "vi": "{} có đủ không?",
}


def _catalog_names() -> list[str]:
    """The spellings as the reviewed files write them (not as the index normalises them)."""
    names: list[str] = []
    for _, gpu in read_rows(DATA_DIR / "gpus.csv", GpuBase):
        names += [gpu.id, gpu.name]
    names += [row.alias for _, row in read_rows(DATA_DIR / "gpu_aliases.csv", GpuAliasBase)]
    for _, model in read_rows(DATA_DIR / "models.csv", ModelPresetBase):
        names += [model.id, model.name, *([model.hf_id] if model.hf_id else [])]
    names += [row.alias for _, row in read_rows(DATA_DIR / "model_aliases.csv", ModelAliasBase)]
    for _, provider in read_rows(DATA_DIR / "providers.csv", ProviderBase):
        names += [provider.id, provider.name]
    return list(dict.fromkeys(names))


def _product_names() -> list[str]:
    text = resources.files("bot.parse").joinpath("lexicon/names.json").read_text(encoding="utf-8")
    return list(json.loads(text)["names"])


@pytest.fixture(scope="module")
def catalog_snapshot() -> Any:
    """The catalog from the reviewed CSV files (no database), as the parse tests build it."""
    from score_requests import load_snapshot

    return load_snapshot()


CATALOG_NAMES = _catalog_names()
PRODUCT_NAMES = _product_names()


def test_the_name_lists_are_the_catalog() -> None:
    """Guards the tests below against an empty list (they would pass over nothing)."""
    assert len(CATALOG_NAMES) > 900 and len(PRODUCT_NAMES) > 50
    assert {"rtx-4090", "h100-sxm-80gb", "llama-3.1-70b", "aws"} <= set(CATALOG_NAMES)


@pytest.mark.parametrize("lang", list(FRAMES))
def test_every_catalog_name_in_every_language_frame(lang: str, catalog_snapshot: Any) -> None:
    wrong = {
        name: found
        for name in CATALOG_NAMES
        if (found := question_language(FRAMES[lang].format(name), catalog_snapshot)) != lang
    }
    assert not wrong, f"{len(wrong)} of {len(CATALOG_NAMES)} names change the language: {dict(list(wrong.items())[:20])}"


@pytest.mark.parametrize("lang", list(FRAMES))
def test_every_product_name_in_every_language_frame(lang: str) -> None:
    """Engines, clouds and models the catalog lacks are names too, with or without a snapshot."""
    wrong = {
        name: found for name in PRODUCT_NAMES if (found := question_language(FRAMES[lang].format(name))) != lang
    }
    assert not wrong, f"{len(wrong)} of {len(PRODUCT_NAMES)} names change the language: {wrong}"


def test_a_name_alone_tells_no_language(catalog_snapshot: Any) -> None:
    told = {
        name: found
        for name in CATALOG_NAMES + PRODUCT_NAMES
        if (found := question_language(name, catalog_snapshot)) is not None
    }
    assert not told, f"{len(told)} names read as a language: {dict(list(told.items())[:20])}"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Command R plus", "en"),  # the parser's default when nothing tells
        ("how much VRAM for Command R plus?", "en"),
        ("wie viel Speicher braucht Command R plus?", "de"),
        ("Flux schnell on a 4090, is that enough?", "en"),
        ("Gemma 2 9b it sur une RTX 4090 ?", "fr"),
        ("Mistral Large 2 en dos H100, ¿es suficiente?", "es"),
        ("Mixtral 8x7B auf zwei RTX 3090 in 4 Bit", "de"),
        ("Gemma 2B trên T4", "vi"),
        ("Còn nếu dùng 8-bit thì sao?", "vi"),
    ],
)
def test_the_parser_reads_the_language_around_the_names(text: str, language: str, catalog_snapshot: Any) -> None:
    assert parse(text, snapshot=catalog_snapshot).language == language
