"""Text filters for cards: Slack mrkdwn escaping, safe clipping, text bars, sparklines, column padding."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

ELLIPSIS = "…"
# Bidi overrides/isolates can flip how following text reads; other C0/C1 controls mean nothing in a card.
_HOSTILE_CONTROLS = re.compile(r"[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]")
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# What escape_mrkdwn changes: the characters it escapes and those strip_controls drops.
_TO_ESCAPE = re.compile(r"[&<>\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]")
_BAR_FULL, _BAR_HALF, _BAR_EMPTY = "█", "▌", "░"
_SPARK_LEVELS = "▁▂▃▄▅▆▇█"
# Characters that must not be left dangling at a cut: joiners and variation selectors.
_JOINERS = {"\u200d", "\ufe0e", "\ufe0f"}


def strip_controls(text: str) -> str:
    """Drop control and bidi-override characters (newline and tab stay)."""
    return _HOSTILE_CONTROLS.sub("", text)


def clip(text: str, limit: int) -> str:
    """Cut `text` to at most `limit` characters, ending with an ellipsis, never mid-combining sequence."""
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)]
    while cut and (cut[-1] in _JOINERS or unicodedata.combining(cut[-1]) or _is_high_surrogate(cut[-1])):
        cut = cut[:-1]
    return cut + ELLIPSIS


def _is_high_surrogate(char: str) -> bool:
    return "\ud800" <= char <= "\udbff"


def escape_mrkdwn(text: object, limit: int | None = None) -> str:
    """Escape `&`, `<`, `>` so Slack shows the text as typed (no mentions, no links), clipped to `limit`.

    The limit counts the escaped length, so an escaped entity is never cut in half.
    """
    text = str(text)
    if _TO_ESCAPE.search(text) is None:  # most values (numbers, names): one scan instead of four
        escaped = text
    else:
        text = strip_controls(text)
        escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # & first: no double escape
    if limit is None or len(escaped) <= limit:
        return escaped
    out: list[str] = []
    used = 0
    for char in text:
        piece = _ESCAPES.get(char, char)
        if used + len(piece) > limit - 1:
            break
        out.append(piece)
        used += len(piece)
    return clip("".join(out) + "xx", used + 1)


def text_bar(value: float, scale: float, width: int = 20) -> str:
    """A horizontal bar: `value` out of `scale` over `width` cells, in half-cell steps (█ ▌ ░)."""
    if scale <= 0 or value <= 0:
        return _BAR_EMPTY * width
    halves = min(round(value / scale * width * 2), width * 2)
    if halves == 0:
        halves = 1  # a non-zero value is always visible
    full, half = divmod(halves, 2)
    return _BAR_FULL * full + _BAR_HALF * half + _BAR_EMPTY * (width - full - half)


def sparkline(values: Sequence[float | None]) -> str:
    """One character per value on ▁..█ between the series min and max; a gap (None) is a space."""
    present = [v for v in values if v is not None]
    if not present:
        return ""
    low, high = min(present), max(present)
    span = high - low
    chars = []
    for value in values:
        if value is None:
            chars.append(" ")
        elif span == 0:
            chars.append(_SPARK_LEVELS[3])
        else:
            chars.append(_SPARK_LEVELS[round((value - low) / span * (len(_SPARK_LEVELS) - 1))])
    return "".join(chars)


def display_width(text: str) -> int:
    """Terminal/monospace columns: East Asian wide and fullwidth characters take two."""
    if text.isascii():
        return len(text)  # no ASCII character is combining, a joiner, wide or fullwidth
    return _cell_width(text) if len(text) <= 64 else _wide_width(text)


@lru_cache(maxsize=4096)
def _cell_width(text: str) -> int:
    """Cached for short texts: table cells repeat across cards (GPU names, prices, localized units)."""
    return _wide_width(text)


def _wide_width(text: str) -> int:
    width = 0
    for char in text:
        if unicodedata.combining(char) or char in _JOINERS:
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def pad(text: str, width: int, align: str = "left") -> str:
    """Pad to `width` display columns (wide characters counted as two)."""
    gap = " " * max(width - display_width(text), 0)
    return gap + text if align == "right" else text + gap


def format_table(rows: Sequence[Sequence[str]], first_align: str = "left") -> str:
    """Align a table of cells into monospace columns separated by two spaces (no trailing spaces)."""
    if not rows:
        return ""
    cell_widths = [[display_width(cell) for cell in row] for row in rows]  # measured once, used twice
    columns = max(len(row) for row in rows)
    widths = [max(row[i] if i < len(row) else 0 for row in cell_widths) for i in range(columns)]
    lines = []
    for row, row_widths in zip(rows, cell_widths):
        cells = [_padded(cell, width, widths[i], first_align if i == 0 else "left")
                 for i, (cell, width) in enumerate(zip(row, row_widths))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _padded(text: str, text_width: int, width: int, align: str) -> str:
    """`pad` for a cell whose display width is known."""
    gap = " " * max(width - text_width, 0)
    return gap + text if align == "right" else text + gap


_BOLD = re.compile(r"(?<![\w*])\*([^*\n]+)\*(?![\w*])")


def mrkdwn_to_plain(text: str) -> str:
    """Slack mrkdwn as terminal text: code fences and bold markers dropped, entities unescaped."""
    text = text.replace("```", "")
    text = _BOLD.sub(r"\1", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def fact_line(fact: tuple[str, str]) -> str:
    """A knowledge entry's fact as a bullet: "• *label*: value" (each side escaped and clipped)."""
    label, value = fact
    return "• *" + escape_mrkdwn(label, 200) + "*: " + escape_mrkdwn(value, 200)


def source_ref(source: tuple[str, str]) -> str:
    """A knowledge entry's source: its title and its address (escaped, clipped; Slack links the address)."""
    title, url = source
    return escape_mrkdwn(title, 120) + " " + escape_mrkdwn(url, 300)


def bracket(label: str) -> str:
    return f"[{label}]"
