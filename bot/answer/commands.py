"""`/gpu` subcommands: which one was typed, which words are the user's own language, the language choice.

The Slack listener only reads the payload and calls these; every choice about the command lives here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.render.messages import LANGUAGES, normalise_language

CommandKind = Literal["lang", "digest", "alert", "ask"]
AUTO = "auto"  # `/gpu lang auto`: forget the override, detect again
LANGUAGE_CHOICES = LANGUAGES  # what `/gpu lang` offers, in this order
DIGEST_SUBCOMMANDS = frozenset({"digest", "alert"})
# Command words are syntax, not the user's language: `/gpu price 4090` from a Japanese user is
# Japanese. Digest, alert and lang arguments are all syntax ("daily 9:00"), so only the user's language counts.
SYNTAX_WORDS = frozenset({"compare", "price", "specs", "help"})
ALL_SYNTAX = frozenset({"lang", *DIGEST_SUBCOMMANDS})
NOT_SHARED = frozenset({"help", "error", "clarification"})  # cards that make no sense in a channel


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """One `/gpu` text read: its kind, the text after the subcommand word, and the words that tell the language."""

    kind: CommandKind
    text: str  # the whole text ("help" when empty), what an `ask` answers
    rest: str  # after the subcommand word
    own_words: str  # the user's own words, for language detection ("" when all of it is syntax)


def read_command(text: str) -> SlashCommand:
    """`lang`, `digest` and `alert` are subcommands; anything else (compare, price, free text) is a question."""
    subcommand, _, rest = text.partition(" ")
    word = subcommand.lower()
    own_words = "" if word in ALL_SYNTAX else rest if word in SYNTAX_WORDS else text
    kind: CommandKind = word if word in ALL_SYNTAX else "ask"  # type: ignore[assignment]
    return SlashCommand(kind, text or "help", rest, own_words)


def shareable(card_kind: str) -> bool:
    """Whether an answer of this card kind gets a "share to channel" button (help, errors, questions back do not)."""
    return card_kind not in NOT_SHARED


@dataclass(frozen=True, slots=True)
class LanguageChoice:
    """`/gpu lang X`: a supported tag to keep, `auto` to clear the override, or neither (show the choices)."""

    tag: str | None
    auto: bool
    choices: tuple[str, ...] = LANGUAGES


def choose_language(given: str) -> LanguageChoice:
    wanted = given.strip().lower()
    if wanted == AUTO:
        return LanguageChoice(None, True)
    tag = normalise_language(wanted) if wanted else None
    if tag is None or (tag == "en" and not wanted.startswith("en")):
        return LanguageChoice(None, False)  # normalise_language falls back to English: only "en…" means English
    return LanguageChoice(tag, False)


@dataclass(frozen=True, slots=True)
class LanguageSetting:
    """What a user's replies are in: their `/gpu lang` choice (None = automatic) and their Slack language."""

    override: str | None
    slack: str  # the Slack locale's language, else the workspace default


@dataclass(frozen=True, slots=True)
class LanguageNotice:
    """What `/gpu lang …` answers: in which language, which notice keys (joined as paragraphs), their values.

    `store` is the override to save (None = nothing changes); `clear` forgets the override.
    """

    language: str
    keys: tuple[str, ...]
    params: dict[str, str]
    store: str | None = None
    clear: bool = False


def answer_language_command(given: str, setting: LanguageSetting) -> LanguageNotice:
    """`/gpu lang ko` keeps Korean; `/gpu lang auto` clears the choice and says what it detects from;
    `/gpu lang` shows the current setting and the choices; an unknown word says so and lists them."""
    choice = choose_language(given)
    if choice.tag is not None:
        return LanguageNotice(choice.tag, ("lang.set",), {"language": choice.tag}, store=choice.tag)
    if choice.auto:
        return LanguageNotice(setting.slack, ("lang.auto.detect",), {"language": setting.slack}, clear=True)
    current = setting.override or setting.slack
    if not given.strip():
        if setting.override is not None:
            shown = LanguageNotice(current, ("lang.current.override", "lang.choices"),
                                   {"language": setting.override, "slack": setting.slack})
        else:
            shown = LanguageNotice(current, ("lang.current.auto", "lang.choices"), {"language": setting.slack})
        return shown
    return LanguageNotice(current, ("lang.invalid",), {"given": given.strip()})

