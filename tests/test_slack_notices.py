"""The language notices (`lang.*`, shown by `/gpu lang`): translated in every language, not English left in.

That every key exists in every locale with English's placeholders is the catalog contract
(tests/test_locales_catalog.py); this checks the words themselves."""

from __future__ import annotations

import pytest

from bot.render.messages import LANGUAGES, load_catalog, placeholders

OTHER = [lang for lang in LANGUAGES if lang != "en"]
LANG_KEYS = sorted(k for k in load_catalog("en") if k.startswith("lang."))


def test_the_language_notices_exist() -> None:
    assert {"lang.set", "lang.invalid", "lang.choices", "lang.auto.detect"} <= set(LANG_KEYS)


@pytest.mark.parametrize("lang", OTHER)
def test_the_language_notices_are_translated(lang: str) -> None:
    english, other = load_catalog("en"), load_catalog(lang)
    same = [k for k in LANG_KEYS if other[k] == english[k]]
    assert same == []
    assert {k: placeholders(other[k]) for k in LANG_KEYS} == {k: placeholders(english[k]) for k in LANG_KEYS}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_share_button_has_one_label_wherever_it_is_shown(lang: str) -> None:
    """The card's own share button (btn.share) and the one the Slack shell adds (share.button) are the same
    button: one label in every language (the issue saw "Share to channel" beside "Share in channel")."""
    catalog = load_catalog(lang)
    assert catalog["btn.share"] == catalog["share.button"]
