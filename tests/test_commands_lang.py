"""`/gpu lang …` decided in the answering layer: which notice, in which language, what is stored."""

from __future__ import annotations

import pytest

from bot.answer.commands import LanguageSetting, answer_language_command

AUTOMATIC = LanguageSetting(override=None, slack="ja")
CHOSEN = LanguageSetting(override="de", slack="ja")


def test_lang_alone_shows_the_setting_and_the_choices_and_changes_nothing() -> None:
    shown = answer_language_command("  ", AUTOMATIC)
    assert shown.keys == ("lang.current.auto", "lang.choices")
    assert (shown.language, shown.params["language"], shown.store, shown.clear) == ("ja", "ja", None, False)


def test_lang_alone_with_an_override_names_it_and_the_slack_language_behind_it() -> None:
    shown = answer_language_command("", CHOSEN)
    assert shown.keys == ("lang.current.override", "lang.choices")
    assert shown.language == "de" and shown.params == {"language": "de", "slack": "ja"}
    assert shown.store is None and not shown.clear


def test_lang_auto_clears_and_answers_in_the_slack_language_not_the_cleared_one() -> None:
    auto = answer_language_command("AUTO", CHOSEN)
    assert auto.clear and auto.store is None
    assert auto.keys == ("lang.auto.detect",) and auto.language == "ja" and auto.params == {"language": "ja"}


@pytest.mark.parametrize(("given", "tag"), [("ko", "ko"), ("zh", "zh-Hans"), ("en-GB", "en"), ("vi", "vi")])
def test_lang_with_a_language_stores_it_and_confirms_in_it(given: str, tag: str) -> None:
    chosen = answer_language_command(given, AUTOMATIC)
    assert (chosen.store, chosen.language, chosen.keys) == (tag, tag, ("lang.set",))


def test_lang_with_an_unknown_word_says_so_in_the_current_language() -> None:
    bad = answer_language_command("klingon", CHOSEN)
    assert bad.keys == ("lang.invalid",) and bad.language == "de" and bad.params == {"given": "klingon"}
    assert bad.store is None and not bad.clear
