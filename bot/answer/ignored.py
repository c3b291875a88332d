"""The card's "I ignored: ..." items in the reader's language: parser notes localised, other items as written."""

from __future__ import annotations

from collections.abc import Iterable

from babel.numbers import format_decimal

from bot.parse.notes import PREFIX, Note
from bot.render.formats import Formatter
from bot.render.messages import BABEL_LOCALES, Messages


def localized_ignored(items: Iterable[str], language: str) -> tuple[str, ...]:
    """Each `Note` (an absurd size, a count below one, a budget of zero, a past deadline) in `language`.

    Other items (a config key not understood, text past the length limit) stay as the parser wrote them.
    Values are inserted unescaped: the card's `common.ignored` message escapes the whole list once.
    """
    messages = Messages.for_language(language)
    locale = BABEL_LOCALES.get(messages.language, "en")
    f = Formatter(messages)
    out = []
    for item in items:
        if isinstance(item, Note) and messages.has(PREFIX + item.key):
            limits = {name: f.money(value, cents=False) if name.endswith("_usd") else format_decimal(value, locale=locale)
                      for name, value in item.limits.items()}
            out.append(messages.plain(PREFIX + item.key, given=item.given, **limits))
        else:
            out.append(str(item))
    return tuple(out)

