"""Message lookup per language (the gettext catalog in bot/locales): placeholders, language choice."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from bot.locales import BABEL_LOCALES, DEFAULT_LANGUAGE, LANGUAGES, placeholders, read_messages
from bot.render.filters import escape_mrkdwn

__all__ = ["BABEL_LOCALES", "DEFAULT_LANGUAGE", "LANGUAGES", "Messages", "load_catalog", "normalise_language",
           "placeholders"]

log = logging.getLogger(__name__)

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
    """The key → message mapping for one supported language, read from its compiled catalog on first use."""
    if language not in LANGUAGES:
        raise ValueError(f"unsupported language {language!r}; expected one of {', '.join(LANGUAGES)}")
    return read_messages(language)


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
        return self.raw(key).format(**{name: escape_mrkdwn(v) for name, v in params.items()})  # it takes str()

    def plain(self, key: str, **params: object) -> str:
        """A plain_text message (headers, buttons, terminal): values inserted as they are."""
        return self.raw(key).format(**{name: str(v) for name, v in params.items()})

    def compose(self, key: str, **parts: str) -> str:
        """A mrkdwn message around parts that are already mrkdwn (each escaped where it was made)."""
        return self.raw(key).format(**parts)
