"""Message catalogs per language (bot/locales/<lang>.json): lookup, placeholders, language choice."""

from __future__ import annotations

import json
import logging
import string
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from bot.render.filters import escape_mrkdwn

log = logging.getLogger(__name__)

LANGUAGES = ("en", "zh-Hans", "ko", "ja", "es", "de", "fr", "vi")
DEFAULT_LANGUAGE = "en"
LOCALES_DIR = Path(__file__).resolve().parent.parent / "locales"
# Babel locale identifiers for our language tags.
BABEL_LOCALES = {"en": "en", "zh-Hans": "zh_Hans", "ko": "ko", "ja": "ja", "es": "es", "de": "de", "fr": "fr", "vi": "vi"}
_ALIASES = {"zh": "zh-Hans", "zh-cn": "zh-Hans", "zh-hans": "zh-Hans", "zh-sg": "zh-Hans", "zh-hant": "zh-Hans",
            "zh-tw": "zh-Hans", "zh-hk": "zh-Hans"}


def normalise_language(tag: str | None) -> str:
    """Map a language tag ("ko-KR", "zh_CN", "ES", Slack's "es-LA") to a supported one, else English."""
    if not tag:
        return DEFAULT_LANGUAGE
    key = str(tag).strip().replace("_", "-").lower()
    if key in _ALIASES:
        return _ALIASES[key]
    for language in LANGUAGES:
        if key == language.lower():
            return language
    base = key.split("-", 1)[0]
    if base in _ALIASES:
        return _ALIASES[base]
    return base if base in LANGUAGES else DEFAULT_LANGUAGE


@lru_cache(maxsize=None)
def load_catalog(language: str) -> Mapping[str, str]:
    """The key → message mapping for one supported language, read from the package data."""
    if language not in LANGUAGES:
        raise ValueError(f"unsupported language {language!r}; expected one of {', '.join(LANGUAGES)}")
    path = LOCALES_DIR / f"{language}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ValueError(f"bot/locales/{language}.json: expected an object of string messages")
    return data


def placeholders(message: str) -> frozenset[str]:
    """The `{name}` fields a message uses."""
    return frozenset(name for _, name, _, _ in string.Formatter().parse(message) if name)


@dataclass(frozen=True, slots=True)
class Messages:
    """One language's catalog with formatting; `text` escapes values for mrkdwn, `plain` does not."""

    language: str
    catalog: Mapping[str, str]

    @classmethod
    def for_language(cls, language: str | None) -> Messages:
        tag = normalise_language(language)
        return cls(tag, load_catalog(tag))

    def has(self, key: str) -> bool:
        return key in self.catalog

    def raw(self, key: str) -> str:
        """The message itself; a missing key falls back to English and is logged (the contract test forbids it)."""
        found = self.catalog.get(key)
        if found is None:
            log.warning("message %r missing in %s", key, self.language)
            found = load_catalog(DEFAULT_LANGUAGE).get(key, key)
        return found

    def text(self, key: str, **params: object) -> str:
        """A mrkdwn message; every parameter value is escaped so user text can never ping or link."""
        return self.raw(key).format(**{name: escape_mrkdwn(str(v)) for name, v in params.items()})

    def plain(self, key: str, **params: object) -> str:
        """A plain_text message (headers, buttons, terminal): values inserted as they are."""
        return self.raw(key).format(**{name: str(v) for name, v in params.items()})

    def compose(self, key: str, **parts: str) -> str:
        """A mrkdwn message around parts that are already mrkdwn (each escaped where it was made)."""
        return self.raw(key).format(**parts)
