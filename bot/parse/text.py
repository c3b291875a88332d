"""Cleaning a message before parsing: Slack markup, control characters, width and case folding."""

from __future__ import annotations

import re
import unicodedata

MAX_CHARS = 20_000  # longer messages are cut; the cut is reported in `ignored`

_SLACK_LINK = re.compile(r"<((?:https?|mailto):[^|>\s]*)(?:\|([^>]*))?>", re.IGNORECASE)
_SLACK_SPECIAL = re.compile(r"<[@#!][^>]*>")
_CODE_FENCE = re.compile(r"```[a-zA-Z]*")
# C0/C1 controls except tab and newline, zero-width and bidi marks, lone surrogates.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ud800-\udfff]"
)
# "2*4090", "8 * 7B": an asterisk between a number and a name or number is a multiplication sign ("x").
_TIMES = re.compile(r"(?<=\d)(\s?)\*(?=\s?[a-z0-9])")
_SPACES = re.compile(r"[ \t\u3000]+")


def strip_slack(text: str) -> str:
    """Remove Slack mentions/broadcasts; keep a link's label, or the URL itself when unlabelled.

    Slack's `&amp; &lt; &gt;` escapes are undone once, at the Slack boundary
    (`bot.slack.conversation.clean_text`); undoing them here again turned a typed `&lt;b&gt;` into `<b>`.
    """
    if "<" in text:  # both kinds of markup open with "<" (a plain question has none: no scan)
        text = _SLACK_LINK.sub(lambda m: f" {m.group(2) or m.group(1)} ", text)
        text = _SLACK_SPECIAL.sub(" ", text)
    return _CODE_FENCE.sub(" ", text) if "```" in text else text


def normalise(text: str) -> str:
    """NFKC (full-width digits and letters become ASCII) then casefold; the lexicon uses it too."""
    return unicodedata.normalize("NFKC", text).casefold().replace("\u00d7", "x")


def clean_text(text: object) -> tuple[str, bool]:
    """The text to parse (normalised) and whether it was cut at MAX_CHARS."""
    if not isinstance(text, str):
        return "", False
    cut = len(text) > MAX_CHARS
    text = text[:MAX_CHARS]
    text = _INVISIBLE.sub(" ", strip_slack(text))
    text = normalise(text)
    if "*" in text:
        text = _TIMES.sub(r"\1x", text)
    # NFKC can change length (ligatures); positions below refer to this string only.
    return _SPACES.sub(" ", text).strip(), cut
