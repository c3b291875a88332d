"""Which language a question is written in, when it tells (a decision of the answering layer, not of Slack)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.render.messages import normalise_language

if TYPE_CHECKING:
    from knowledge.snapshot import Snapshot

_WORD = re.compile(r"\b[a-z']+\b")  # whole words: the "a" of "a100" is not English


def question_language(text: str, snapshot: Snapshot | None = None) -> str | None:
    """The language the question is written in, or None when it does not tell ("h100 price").

    Names (GPUs, models, engines, clouds; the catalog's when a snapshot is given) are not read:
    "Command R plus" alone tells nothing. The parser's detector answers English when nothing else
    matches; only real English words (its stopword list) make English the question's language.
    """
    from bot.parse.language import detect_language
    from bot.parse.names import without_names
    from bot.parse.text import clean_text
    from bot.parse.vocabulary import load_vocabulary

    vocabulary = load_vocabulary()
    words = without_names(clean_text(text)[0], snapshot)
    found = detect_language(words, vocabulary)
    if found != "en":
        return normalise_language(found)
    english = vocabulary.stopwords["en"]
    return "en" if any(word in english for word in _WORD.findall(words)) else None
