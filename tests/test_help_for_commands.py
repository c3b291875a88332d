"""Asking in words for what a command sets up (a price alert, a digest) gets that command's syntax first."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.answer.pipeline import answer

NOW = datetime(2026, 11, 26, tzinfo=UTC)


@pytest.mark.parametrize(("text", "lang", "command"), [
    ("alert me when H100 drops below $2", "en", "/gpu alert h100 < 2"),
    ("H100が2ドルを切ったら教えて", "ja", "/gpu alert h100 < 2"),
    ("subscribe this channel to a weekly price digest", "en", "/gpu digest weekly mon 09:00"),
    ("每周一给这个频道发GPU价格摘要", "zh-Hans", "/gpu digest weekly mon 09:00"),
])
def test_the_command_that_does_it_is_shown(text: str, lang: str, command: str, snapshot: Any) -> None:
    reply = answer(text, snapshot=snapshot, now=NOW)
    assert reply.kind == "help" and reply.language == lang
    sections = [b["text"]["text"] for b in reply.blocks if b["type"] == "section"]
    assert command in sections[0]  # first, before the general introduction


def test_plain_help_has_no_command_section(snapshot: Any) -> None:
    reply = answer("help", snapshot=snapshot, now=NOW)
    assert "/gpu alert h100" not in str(reply.blocks)
