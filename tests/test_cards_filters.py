"""Card text filters: mrkdwn escaping, safe clipping, bars, sparklines, wide-character tables."""

from __future__ import annotations

import pytest

from bot.render.filters import (
    clip, display_width, escape_mrkdwn, format_table, mrkdwn_to_plain, sparkline, strip_controls, text_bar,
)


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("<!channel>", "&lt;!channel&gt;"),
        ("<@U123>", "&lt;@U123&gt;"),
        ("<https://evil|click>", "&lt;https://evil|click&gt;"),
        ("R&D", "R&amp;D"),
        ("&amp;", "&amp;amp;"),  # already-escaped text is shown as typed, not decoded
        ("plain 4090", "plain 4090"),
    ],
)
def test_escape_mrkdwn_neutralises_slack_markup(raw: str, escaped: str) -> None:
    assert escape_mrkdwn(raw) == escaped


def test_escape_limit_counts_escaped_length_and_never_cuts_an_entity() -> None:
    out = escape_mrkdwn("&" * 100, limit=23)
    assert len(out) <= 23
    assert out.endswith("…")
    assert out[:-1] == "&amp;" * 4  # 20 chars + ellipsis; a fifth entity would not fit whole


def test_escape_drops_bidi_overrides_and_controls_but_keeps_rtl_letters() -> None:
    text = "שלום \u202eevil\u202c مرحبا\x00\x07"
    assert strip_controls(text) == "שלום evil مرحبا"
    assert escape_mrkdwn(text) == "שלום evil مرحبا"


def test_clip_keeps_emoji_sequences_whole() -> None:
    family = "👨\u200d👩\u200d👧"
    out = clip("ab" + family + "cd", 5)
    assert out.endswith("…") and len(out) <= 5
    assert not out[:-1].endswith("\u200d")


def test_clip_leaves_short_text_alone() -> None:
    assert clip("short", 10) == "short"


@pytest.mark.parametrize(
    ("value", "scale", "bar"),
    [
        (40, 80, "█████░░░░░"),
        (45, 80, "█████▌░░░░"),  # 5.625 cells → 11 half-cells
        (0.01, 80, "▌░░░░░░░░░"),  # a non-zero value is never invisible
        (0, 80, "░░░░░░░░░░"),
        (200, 80, "██████████"),  # over the scale is capped at full
    ],
)
def test_text_bar_half_cell_steps(value: float, scale: float, bar: str) -> None:
    assert text_bar(value, scale, width=10) == bar


def test_sparkline_spans_min_to_max_and_marks_gaps() -> None:
    assert sparkline([1, 2, 3, 4, 5, 6, 7, 8]) == "▁▂▃▄▅▆▇█"
    assert sparkline([2.0, None, 2.0]) == "▄ ▄"
    assert sparkline([]) == ""


def test_table_aligns_wide_characters_by_display_width() -> None:
    table = format_table([["显存", "80 GB"], ["VRAM", "48 GB"]])
    first, second = table.split("\n")
    assert display_width("显存") == 4
    assert display_width(first[: first.index("80")]) == display_width(second[: second.index("48")]) == 6


def test_mrkdwn_to_plain_unescapes_and_drops_markers() -> None:
    assert mrkdwn_to_plain("*Best* &lt;!x&gt; ```a```") == "Best <!x> a"
