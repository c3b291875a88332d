"""The Slack shell's notices (bot/slack/notices.json): every language has every key, the same placeholders,
and its own words."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from bot.render.messages import LANGUAGES, placeholders

CATALOGS = json.loads((resources.files("bot.slack") / "notices.json").read_text(encoding="utf-8"))
OTHER = [lang for lang in LANGUAGES if lang != "en"]


@pytest.mark.parametrize("lang", OTHER)
def test_every_notice_in_every_language_with_the_same_placeholders(lang: str) -> None:
    english, other = CATALOGS["en"], CATALOGS[lang]
    assert sorted(set(english) ^ set(other)) == []
    wrong = {k: (sorted(placeholders(v)), sorted(placeholders(other[k]))) for k, v in english.items()
             if placeholders(v) != placeholders(other[k])}
    assert wrong == {}


@pytest.mark.parametrize("lang", OTHER)
def test_the_language_notices_are_translated(lang: str) -> None:
    english, other = CATALOGS["en"], CATALOGS[lang]
    same = [k for k in english if k.startswith("lang.") and other[k] == english[k]]
    assert same == []
