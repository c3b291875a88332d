"""What the parser read but would not use: a note that is English text and also a message key.

An absurd size ("1e308B"), a count below one or beyond a plan ("-5 GPUs", "999999 H100"), a budget of
zero or less ("$-100") and a deadline in the past ("by yesterday") are not dropped in silence: each
becomes a `Note` in `Ask.ignored`. A Note *is* the English string that `parse --json` has always shown
(so every reader of `ignored` keeps working), and it also carries the message key and values under
which the card says it in the reader's language (`ignored.<key>` in bot/locales/*.json).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

MAX_QUOTED_CHARS = 40  # what the user wrote, as quoted back; a pasted wall of digits is cut
# The English of each note is the English card's message (one text for `parse --json` and the card).
LOCALE_EN = Path(__file__).resolve().parent.parent / "locales" / "en.json"
PREFIX = "ignored."


@functools.lru_cache(maxsize=1)
def english() -> Mapping[str, str]:
    """`ignored.<key>` messages of the English catalog, by key (read once, on first use)."""
    catalog = json.loads(LOCALE_EN.read_text(encoding="utf-8"))
    return MappingProxyType({k.removeprefix(PREFIX): v for k, v in catalog.items() if k.startswith(PREFIX)})


class Note(str):
    """An `ignored` item: the English sentence, plus `key`, the quoted text and the limit for its localised message.

    A str subclass on purpose: `Ask.ignored` is a tuple of strings that the JSON output, the tests and
    the cards already read; a Note goes everywhere a string goes. `given` is what the user wrote;
    `limits` are whole numbers (formatted per locale when the card says it).
    """

    key: str
    given: str
    limits: Mapping[str, int]

    def __new__(cls, key: str, *, given: str, **limits: int) -> Note:
        shown = quoted(given)
        # the English text (logs, `parse --json`): dollars written as English writes them, like Babel's "en"
        text = english()[key].format(given=shown, **{name: f"${value:,}" if name.endswith("_usd") else f"{value:,}"
                                                      for name, value in limits.items()})
        note = super().__new__(cls, text)
        note.key, note.given, note.limits = key, shown, MappingProxyType(dict(limits))
        return note

    def __reduce__(self) -> tuple[object, ...]:  # pickle/copy keep the key (a bare str would not)
        return (_rebuild, (self.key, self.given, dict(self.limits)))

    def as_written(self, raw: str) -> Note:
        """The same note quoting `raw`'s own spelling ("1e308B", not the parser's folded "1e308b")."""
        pattern = r"\s+".join(re.escape(part) for part in self.given.split())
        found = re.search(pattern, raw, re.IGNORECASE) if pattern else None
        if found is None or found.group(0) == self.given:
            return self
        return Note(self.key, given=found.group(0), **self.limits)


def _rebuild(key: str, given: str, limits: dict[str, int]) -> Note:
    return Note(key, given=given, **limits)


def quoted(text: str) -> str:
    """What the user wrote, trimmed and cut to a readable length."""
    text = " ".join(text.split())
    return text if len(text) <= MAX_QUOTED_CHARS else text[: MAX_QUOTED_CHARS - 1] + "…"
