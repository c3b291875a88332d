"""A card named in the plural ("on H100s") leaves the count open; a name that ends in S stays a name ("L40S")."""

from __future__ import annotations

from typing import Any

import pytest

from bot.parse import parse


@pytest.mark.parametrize(("text", "gpu"), [
    ("full fine-tune llama 3.1 8b on H100s", "h100-sxm-80gb"),
    ("train on 4090s", "rtx-4090"),
    ("serve on H200s", "h200"),
])
def test_a_plural_card_leaves_the_count_open(text: str, gpu: str, snapshot: Any) -> None:
    ask = parse(text, snapshot=snapshot)
    assert [g.gpu_id for g in ask.gpus] == [gpu] and ask.gpu_count is None


@pytest.mark.parametrize(("text", "gpu"), [("run llama 3 8b on my l40s", "l40s"), ("fine-tune on h100", "h100-sxm-80gb")])
def test_a_name_ending_in_s_and_a_singular_are_one_card(text: str, gpu: str, snapshot: Any) -> None:
    ask = parse(text, snapshot=snapshot)
    assert [g.gpu_id for g in ask.gpus] == [gpu] and ask.gpu_count == 1


def test_fastest_on_plural_cards_grows_the_plan(snapshot: Any) -> None:
    """'fastest way to full fine-tune llama 3.1 8b on H100s, 1B tokens' was one H100 for 42.6 h (the plural read
    as one card); the count is open, so the fastest plan grows to more H100s."""
    from datetime import UTC, datetime

    from bot.answer.pipeline import answer

    reply = answer("fastest way to full fine-tune llama 3.1 8b on H100s, 1B tokens", snapshot=snapshot,
                   now=datetime(2026, 11, 26, tzinfo=UTC))
    assert reply.verdict is not None and reply.verdict.options[0].gpu_id == "h100-sxm-80gb"
    assert reply.verdict.options[0].count > 1
