"""The message catalog: one gettext domain, `messages`, one catalog per locale, read lazily from compiled .mo files.

Message ids are the stable keys the code uses (`fit.vram.short`); `en` holds the English text and every
other locale its translation, in `bot/locales/<locale>/LC_MESSAGES/messages.po` (what translators edit)
and `messages.mo` (what the app reads, one language at a time, with the standard library's gettext).
`messages.pot` is the template extracted with Babel from the code and the Jinja2 templates.
Extract, update, compile, fold old JSON, check: `python -m bot.locales --help` (README, "Languages").
"""

from __future__ import annotations

import gettext
import string
from collections.abc import Mapping
from pathlib import Path

LANGUAGES = ("en", "zh-Hans", "ko", "ja", "es", "de", "fr", "vi")
DEFAULT_LANGUAGE = "en"
# Babel locale identifiers for our language tags; also the catalog folders' names (zh_Hans, ko …).
BABEL_LOCALES = {"en": "en", "zh-Hans": "zh_Hans", "ko": "ko", "ja": "ja", "es": "es", "de": "de", "fr": "fr", "vi": "vi"}
DOMAIN = "messages"
LOCALES_DIR = Path(__file__).resolve().parent


def po_path(language: str) -> Path:
    """The translators' catalog of one supported language."""
    return LOCALES_DIR / BABEL_LOCALES[language] / "LC_MESSAGES" / f"{DOMAIN}.po"


def mo_path(language: str) -> Path:
    """The compiled catalog the app reads."""
    return po_path(language).with_suffix(".mo")


def placeholders(message: str) -> frozenset[str]:
    """The `{name}` fields a message uses (messages are str.format templates)."""
    return frozenset(name for _, name, _, _ in string.Formatter().parse(message) if name)


def read_messages(language: str) -> Mapping[str, str]:
    """Key → text of one supported language, parsed from its .mo by the standard library's gettext.

    GNUTranslations parses the whole file into `_catalog` (a dict, CPython's layout since Python 2);
    the lookups need a mapping (a key's presence is an answer too: `Messages.has`), so it is taken
    from there rather than by probing gettext() key by key. The header entry (msgid "") is left out.
    """
    with mo_path(language).open("rb") as fp:
        translations = gettext.GNUTranslations(fp)
    parsed: dict[object, str] = getattr(translations, "_catalog")
    return {key: text for key, text in parsed.items() if isinstance(key, str) and key}
