"""Which language a question is written in, when it tells (a decision of the answering layer, not of Slack)."""

from __future__ import annotations

import re

from bot.render.messages import normalise_language

_WORD = re.compile(r"\b[a-z']+\b")  # whole words: the "a" of "a100" is not English


def question_language(text: str) -> str | None:
    """The language the question is written in, or None when it does not tell ("h100 price").

    The parser's detector answers English when nothing else matches; only real English words
    (its stopword list) make English the question's language rather than a default.
    """
    from bot.parse.language import detect_language
    from bot.parse.vocabulary import load_vocabulary

    vocabulary = load_vocabulary()
    found = detect_language(text, vocabulary)
    if found != "en":
        return normalise_language(found)
    english = vocabulary.stopwords["en"]
    return "en" if any(word in english for word in _WORD.findall(text.lower())) else None
