"""The message catalog's contract (issue 21 item 3): what Babel extracts from the code and the templates is the
template, every locale holds exactly its keys, translated, with English's placeholders, the compiled .mo files
are those of the .po files, an installed package carries them, and old-shape JSON folds in."""

from __future__ import annotations

import fnmatch
import json
import tomllib
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog

from bot.locales import BABEL_LOCALES, DEFAULT_LANGUAGE, LANGUAGES, LOCALES_DIR, read_messages
from bot.locales import build
from bot.render.messages import Messages, load_catalog

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def extracted() -> dict[str, list[tuple[str, list[str]]]]:
    return build.extract_keys()


@pytest.fixture(scope="module")
def catalogs() -> dict[str, Catalog]:
    return {language: build.load_po(language) for language in LANGUAGES}


def test_extraction_finds_the_code_templates_and_marked_keys(extracted) -> None:  # type: ignore[no-untyped-def]
    """One key of each kind, read where it is used: a Python lookup, a template's t(), a key built at run time."""
    where = {key: {file for file, _ in places} for key, places in extracted.items()}
    assert "bot/render/advice.py" in where["rec.verdict_none"]  # f.messages.text("rec.verdict_none")
    assert "bot/templates/blocks/digest.json.j2" in where["digest.header"]  # p("digest.header")
    assert "bot/slack/notices.py" in where["share.button"]  # plain_notice(language, "share.button")
    assert "bot/digest/commands.py" in where["problem.timezone"]  # CommandProblem("problem.timezone", …)
    assert where["arch.hopper"] == {"bot/locales/keys.py"}  # f"arch.{family}": marked with N_


def test_the_template_is_what_babel_extracts(extracted) -> None:  # type: ignore[no-untyped-def]
    template = set(build.messages_of(build.read_catalog(build.POT_PATH)))
    assert sorted(set(extracted) - template) == [], "run: python -m bot.locales extract"
    assert sorted(template - set(extracted)) == [], "run: python -m bot.locales extract"


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_locale_has_every_message_translated_with_englishs_placeholders(
    language: str, extracted, catalogs  # type: ignore[no-untyped-def]
) -> None:
    assert build.catalog_problems(extracted, {DEFAULT_LANGUAGE: catalogs[DEFAULT_LANGUAGE],
                                              language: catalogs[language]}) == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_compiled_catalog_is_the_po(language: str, catalogs) -> None:  # type: ignore[no-untyped-def]
    """The app reads the .mo: it must say exactly what translators wrote (python -m bot.locales compile)."""
    assert dict(read_messages(language)) == build.messages_of(catalogs[language])


def _broken(catalogs: dict[str, Catalog], language: str, key: str, text: str | None, *, fuzzy: bool = False) -> dict[str, Catalog]:
    """A copy of one language's catalog with one message changed (None: removed)."""
    copy = build.new_catalog(language)
    for message in catalogs[language]:
        if message.id and message.id != key:
            copy.add(message.id, message.string)
    if text is not None:
        copy.add(key, text, flags=["fuzzy"] if fuzzy else [])
    return {DEFAULT_LANGUAGE: catalogs[DEFAULT_LANGUAGE], language: copy}


@pytest.mark.parametrize(
    ("key", "text", "fuzzy", "problem"),
    [
        ("digest.header", None, False, "de: missing digest.header"),
        ("unit.hours", "", False, "de: unit.hours is empty"),
        ("unit.hours", "{stunden} h", False, "de: unit.hours has placeholders ['stunden'], English ['hours']"),
        ("unit.hours", "{hours} h", True, "de: unit.hours is fuzzy"),
        ("unit.hours", "{hours h", False, "de: unit.hours does not format"),  # a stray brace
        ("zz.nobody.uses", "Text", False, "de: not in the code or bot/locales/keys.py: zz.nobody.uses"),
    ],
    ids=["missing", "empty", "placeholder", "fuzzy", "brace", "unused"],
)
def test_each_break_of_the_contract_is_named(extracted, catalogs, key, text, fuzzy, problem) -> None:  # type: ignore[no-untyped-def]
    problems = build.catalog_problems(extracted, _broken(catalogs, "de", key, text, fuzzy=fuzzy))
    assert any(p.startswith(problem) for p in problems), problems


def test_a_po_edited_without_compiling_is_found(catalogs) -> None:  # type: ignore[no-untyped-def]
    edited = _broken(catalogs, "fr", "unit.hours", "{hours} heures")
    read = {language: read_messages(language) for language in edited}
    assert build.stale_compiled(edited, read) == ["fr"]
    assert build.stale_compiled({"fr": catalogs["fr"]}, read) == []


def test_an_installed_package_carries_the_catalog() -> None:
    """Every catalog file matches a package-data pattern of bot.locales in pyproject.toml (so a wheel has it)."""
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = settings["tool"]["setuptools"]["package-data"]["bot.locales"]
    files = [p.relative_to(LOCALES_DIR).as_posix() for p in LOCALES_DIR.rglob("messages.*")]
    assert len(files) == 1 + 2 * len(LANGUAGES)  # the .pot, and each locale's .po and .mo
    assert [f for f in files if not any(fnmatch.fnmatch(f, pattern) for pattern in patterns)] == []


def test_catalogs_load_lazily_one_language_at_a_time() -> None:
    load_catalog.cache_clear()
    try:
        assert Messages.for_language("ko").text("home.none") == "아직 없습니다."
        assert load_catalog.cache_info().currsize == 1
    finally:
        load_catalog.cache_clear()


def test_fold_adds_keys_from_the_old_json_shapes(tmp_path: Path) -> None:
    """At merge time, keys that other branches added to the old JSON files go into the .po catalogs."""
    catalogs = tmp_path / "locales"
    for language in ("en", "de"):  # a copy of two real catalogs
        target = catalogs / BABEL_LOCALES[language] / "LC_MESSAGES"
        target.mkdir(parents=True)
        (target / "messages.po").write_bytes(build.po_path(language).read_bytes())
    flat = tmp_path / "de.json"  # bot/locales/de.json's shape
    flat.write_text(json.dumps({"zz.new": "Neu: {gpu}", "unit.hours": "{hours} Stunden", "rec.tier": "Stufe"}),
                    encoding="utf-8")
    nested = tmp_path / "notices.json"  # bot/slack/notices.json's shape
    nested.write_text(json.dumps({"en": {"zz.new": "New: {gpu}"}, "de": {"zz.other": "Andere"}}), encoding="utf-8")

    report = build.fold([flat, nested], directory=catalogs)
    assert report.added == {"de": ["zz.new", "zz.other"], "en": ["zz.new"]}
    assert [d[0] for d in report.differing["de"]] == ["unit.hours"]  # reported, kept
    assert report.retired == {"rec.tier"}  # removed on purpose: not brought back
    de = build.messages_of(build.load_po("de", catalogs))
    assert (de["zz.new"], de["zz.other"], de["unit.hours"]) == ("Neu: {gpu}", "Andere", read_messages("de")["unit.hours"])
    mo = catalogs / "de" / "LC_MESSAGES" / "messages.mo"
    assert mo.exists() and b"Neu: {gpu}" in mo.read_bytes()  # compiled too

    build.fold([flat], directory=catalogs, replace=True)
    assert build.messages_of(build.load_po("de", catalogs))["unit.hours"] == "{hours} Stunden"


def test_fold_refuses_a_flat_file_not_named_for_a_language(tmp_path: Path) -> None:
    odd = tmp_path / "extra.json"
    odd.write_text(json.dumps({"zz.new": "New"}), encoding="utf-8")
    with pytest.raises(ValueError, match="must be named for its language"):
        build.fold([odd], directory=tmp_path)
