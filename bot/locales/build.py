"""The catalog's workflow with Babel: extract the template, update and compile the catalogs, fold old JSON, check.

Used by `python -m bot.locales` (a developer's command; the app itself only reads .mo files) and by the
contract test, so both apply the same rules. Only a source checkout can extract (babel.cfg is at its root).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

from bot.locales import BABEL_LOCALES, DEFAULT_LANGUAGE, DOMAIN, LANGUAGES, LOCALES_DIR, mo_path, placeholders, po_path

BOT_DIR = LOCALES_DIR.parent
ROOT = BOT_DIR.parent
BABEL_CFG = ROOT / "babel.cfg"
POT_PATH = LOCALES_DIR / f"{DOMAIN}.pot"
COMMENT_TAGS = ("TRANSLATORS:",)
ENGLISH_NOTE = "English: "
PROJECT = "gpu-advisor"
WIDTH = 100  # wide lines keep one message on one line more often: smaller diffs
# Keys removed on purpose (nothing used them when the JSON catalogs were folded in, issue 21): `fold`
# does not bring them back from an old JSON file.
RETIRED = frozenset({
    "tier_name.consumer", "tier_name.workstation", "tier_name.datacenter", "tier_name.frontier",
    "rec.tier", "row.group.specs", "value.not_supported",
})


# --- reading and writing ------------------------------------------------------------------------------

def read_catalog(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as fp:
        return read_po(fp, locale=locale, domain=DOMAIN)


def write_catalog(catalog: Catalog, path: Path, *, template: bool = False) -> None:
    """A .po/.pot sorted by key, without source locations in the .po (they churn with every edit of the code)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=WIDTH, sort_output=True, no_location=not template, include_lineno=False,
             ignore_obsolete=True)
    path.write_bytes(buffer.getvalue())


def compiled(catalog: Catalog) -> bytes:
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    return buffer.getvalue()


def messages_of(catalog: Catalog) -> dict[str, str]:
    """Key → text of a catalog (the header, plural and obsolete entries left out)."""
    return {str(m.id): str(m.string) for m in catalog if m.id and isinstance(m.id, str)}


def new_catalog(language: str) -> Catalog:
    return Catalog(locale=BABEL_LOCALES[language], domain=DOMAIN, project=PROJECT, version="1",
                   charset="utf-8", fuzzy=False)


def load_po(language: str, directory: Path | None = None) -> Catalog:
    """One language's .po (an empty catalog when there is none yet)."""
    path = _po(language, directory)
    return read_catalog(path, BABEL_LOCALES[language]) if path.exists() else new_catalog(language)


def _po(language: str, directory: Path | None) -> Path:
    return po_path(language) if directory is None else directory / BABEL_LOCALES[language] / "LC_MESSAGES" / f"{DOMAIN}.po"


# --- extract ------------------------------------------------------------------------------------------

def extract_keys(source: Path = BOT_DIR, config: Path = BABEL_CFG) -> dict[str, list[tuple[str, list[str]]]]:
    """Every key the code and templates look up, with where (file) and the translators' comments."""
    with config.open(encoding="utf-8") as fp:
        method_map, options_map = parse_mapping_cfg(fp, str(config))  # type: ignore[no-untyped-call]  # Babel leaves it untyped
    found: dict[str, list[tuple[str, list[str]]]] = {}
    for filename, _, message, comments, _ in extract_from_dir(
        str(source), method_map, options_map, comment_tags=COMMENT_TAGS, strip_comment_tags=True
    ):
        if isinstance(message, str) and message:
            found.setdefault(message, []).append((f"{source.name}/{filename}", list(comments)))
    return found


def build_template(keys: Mapping[str, list[tuple[str, list[str]]]], english: Mapping[str, str]) -> Catalog:
    """The .pot: each key with its files, translators' comments and its English text as a comment.

    No python-brace-format flag: Babel sets or drops that flag from the msgid, and a key has no braces,
    so it would be dropped on every read (and GNU msgfmt -c would compare the placeholders with the key).
    The English comment shows translators the placeholders; `catalog_problems` checks them.
    """
    template = Catalog(domain=DOMAIN, project=PROJECT, version="1", charset="utf-8", fuzzy=False)
    for key, places in keys.items():
        comments = [c for _, found in places for c in found]
        text = english.get(key)
        if text is not None:
            lines = text.split("\n")
            comments += [ENGLISH_NOTE + lines[0], *lines[1:]]
        template.add(key, "", locations=sorted({(file, 0) for file, _ in places}),
                     auto_comments=list(dict.fromkeys(comments)))
    return template


def extract() -> Catalog:
    """`extract`: write bot/locales/messages.pot from the code and the templates.

    An unchanged template keeps its creation date, so extracting twice (or `update` after it) rewrites no
    header line in the nine files.
    """
    template = build_template(extract_keys(), messages_of(load_po(DEFAULT_LANGUAGE)))
    if POT_PATH.exists():
        before = POT_PATH.read_bytes()
        template.creation_date = read_catalog(POT_PATH).creation_date
        write_catalog(template, POT_PATH, template=True)
        if POT_PATH.read_bytes() != before:
            template.creation_date = datetime.now(UTC)
    write_catalog(template, POT_PATH, template=True)
    return template


# --- update and compile -------------------------------------------------------------------------------

def update(template: Catalog | None = None) -> None:
    """`update`: bring every .po to the .pot's keys (new keys empty, dropped keys removed), then compile."""
    template = template or read_catalog(POT_PATH)
    for language in LANGUAGES:
        catalog = load_po(language)
        catalog.update(template, no_fuzzy_matching=True, update_header_comment=False)
        write_catalog(catalog, po_path(language))
    compile_all()


def compile_all() -> None:
    """`compile`: every .po to its .mo (fuzzy entries are left out, as gettext does)."""
    for language in LANGUAGES:
        mo_path(language).write_bytes(compiled(load_po(language)))


# --- fold: keys from the old JSON catalogs ------------------------------------------------------------

@dataclass
class FoldReport:
    """What a fold did, per language: keys added, keys whose text differs (replaced only when asked)."""

    added: dict[str, list[str]] = field(default_factory=dict)
    differing: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    replaced: bool = False
    retired: set[str] = field(default_factory=set)

    def lines(self) -> list[str]:
        out = [f"{lang}: added {len(keys)}: {', '.join(keys)}" for lang, keys in self.added.items() if keys]
        if self.retired:
            out.append(f"not added (retired): {', '.join(sorted(self.retired))}")
        verb = "replaced" if self.replaced else "kept the catalog's text (pass --replace to take the file's)"
        for lang, diffs in self.differing.items():
            out += [f"{lang}: {key}: {verb}\n  catalog: {old!r}\n  file:    {new!r}" for key, old, new in diffs]
        return out or ["nothing new"]


def json_messages(path: Path) -> dict[str, dict[str, str]]:
    """language → key → text from a file in one of the old shapes.

    `{"en": {key: text}, "de": {…}}` (bot/slack/notices.json), or `{key: text}` in a file named for its
    language (bot/locales/de.json, bot/digest/locales/zh-Hans.json).
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    if data and all(isinstance(v, dict) for v in data.values()):
        shaped = data
    elif path.stem in LANGUAGES:
        shaped = {path.stem: data}
    else:
        raise ValueError(f"{path}: a flat {{key: text}} file must be named for its language ({', '.join(LANGUAGES)})")
    out: dict[str, dict[str, str]] = {}
    for language, messages in shaped.items():
        if language not in LANGUAGES:
            raise ValueError(f"{path}: unknown language {language!r}")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in messages.items()):
            raise ValueError(f"{path}: {language}: expected string keys and texts")
        out[language] = dict(messages)
    return out


def fold(paths: Iterable[Path], *, replace: bool = False, directory: Path | None = None) -> FoldReport:
    """`fold`: put the keys of old-shape JSON files into the .po catalogs (and compile them).

    New keys are added (not the RETIRED ones); a key already there with another text is reported and
    left alone unless `replace`. Run `extract` afterwards so the .pot lists the keys the code now uses.
    """
    wanted: dict[str, dict[str, str]] = {}
    for path in paths:
        for language, messages in json_messages(path).items():
            wanted.setdefault(language, {}).update(messages)
    report = FoldReport(replaced=replace)
    for language, messages in wanted.items():
        catalog = load_po(language, directory)
        added, differing = [], []
        for key, text in messages.items():
            current = catalog.get(key)
            if key in RETIRED:
                report.retired.add(key)
            elif current is None:
                catalog.add(key, text)
                added.append(key)
            elif current.string != text:
                differing.append((key, str(current.string), text))
                if replace:
                    current.string = text
        report.added[language], report.differing[language] = added, differing
        if added or (replace and differing):
            catalog.revision_date = datetime.now(UTC)
            path = _po(language, directory)
            write_catalog(catalog, path)
            path.with_suffix(".mo").write_bytes(compiled(catalog))
    return report


# --- check --------------------------------------------------------------------------------------------

def catalog_problems(template_keys: Iterable[str], catalogs: Mapping[str, Catalog]) -> list[str]:
    """What breaks the contract: every locale has exactly the template's keys, each translated (not empty,
    not fuzzy), with English's placeholders, and formatting with str.format."""
    keys = set(template_keys)
    english = messages_of(catalogs[DEFAULT_LANGUAGE])
    problems: list[str] = []
    for language, catalog in catalogs.items():
        have = set(messages_of(catalog))
        problems += [f"{language}: missing {k}" for k in sorted(keys - have)]
        problems += [f"{language}: not in the code or bot/locales/keys.py: {k}" for k in sorted(have - keys)]
        for message in catalog:
            problems += _message_problems(language, message, english)
    return problems


def _message_problems(language: str, message: Message, english: Mapping[str, str]) -> list[str]:
    if not message.id or not isinstance(message.id, str) or not isinstance(message.string, str):
        return []
    key, text = message.id, message.string
    if not text.strip():
        return [f"{language}: {key} is empty"]
    out = [f"{language}: {key} is fuzzy"] if message.fuzzy else []
    try:
        names = placeholders(text)
        text.format(**{name: "x" for name in names})
    except (ValueError, IndexError, KeyError) as error:  # a stray brace, a positional {0}
        return [*out, f"{language}: {key} does not format: {error}"]
    try:
        english_names = placeholders(english.get(key, text))
    except ValueError:
        return out  # English itself is broken: said under "en"
    if names != english_names:
        out.append(f"{language}: {key} has placeholders {sorted(names)}, English {sorted(english_names)}")
    return out


def stale_compiled(catalogs: Mapping[str, Catalog], read: Mapping[str, Mapping[str, str]]) -> list[str]:
    """Languages whose compiled .mo does not hold exactly their .po's translated messages."""
    return [language for language, catalog in catalogs.items()
            if dict(read[language]) != {k: v for k, v in messages_of(catalog).items() if v and not catalog[k].fuzzy}]


def check() -> list[str]:
    """`check`: the extraction matches the .pot, and every catalog and .mo keeps the contract."""
    from bot.locales import read_messages

    extracted = set(extract_keys())
    pot = set(messages_of(read_catalog(POT_PATH)))
    problems = [f"messages.pot: missing {k} (run extract)" for k in sorted(extracted - pot)]
    problems += [f"messages.pot: no longer used {k} (run extract)" for k in sorted(pot - extracted)]
    catalogs = {language: load_po(language) for language in LANGUAGES}
    problems += catalog_problems(extracted, catalogs)
    read = {language: read_messages(language) for language in LANGUAGES}
    problems += [f"{language}: messages.mo is older than messages.po (run compile)"
                 for language in stale_compiled(catalogs, read)]
    return problems
