"""How many people an endpoint is for, as questions say it: '给50个人用', '20位同事', 'para 50 personas'."""

from __future__ import annotations

from typing import Any

import pytest

from bot.parse import parse

CASES = [
    ("用两张4090部署Qwen2.5-32B给50个人用，32k上下文", 50),
    ("部署Qwen2.5-7B，100个用户", 100),
    ("部署Qwen2.5-7B给20位同事用", 20),
    ("部署Llama 3.1 8B，给30名員工使用", 30),
    ("Qwen2.5-14B要同时给10个用户用", 10),
    # and in Spanish, French, German and Vietnamese
    ("servir Qwen2.5-32B para 50 personas a la vez", 50),
    ("servir Qwen2.5-32B pour 50 personnes en même temps", 50),
    ("Qwen2.5-32B für 50 Leute gleichzeitig bereitstellen", 50),
    ("Llama 3.1 8B für 40 Mitarbeiter bereitstellen", 40),
    ("triển khai Qwen2.5-7B cho 50 người", 50),
    # the people a team names by their job: developers, students, colleagues ...
    ("what gpu to serve qwen2.5-coder 32b for 20 developers", 20),
    ("serve llama 3 8b for 30 students", 30),
    ("servir Qwen2.5-Coder 32B para 20 desarrolladores", 20),
    ("héberger Qwen2.5-Coder 32B pour 20 développeurs", 20),
    ("Qwen2.5-Coder 32B für 20 Entwickler bereitstellen", 20),
    ("部署Qwen2.5-Coder 32B给20个开发者用", 20),
    ("Qwen2.5-Coder 32Bを開発者20名で使いたい", 20),
    ("ユーザー数50でLlama 3 8Bをサービング", 50),
    ("triển khai Qwen2.5-Coder 32B cho 20 lập trình viên", 20),
]


@pytest.mark.parametrize(("text", "users"), CASES)
def test_people_counted_are_concurrent_users(text: str, users: int, snapshot: Any) -> None:
    ask = parse(text, snapshot=snapshot)
    assert ask.method == "serving" and ask.concurrency == users


def test_the_fifty_are_provisioned_not_dropped(snapshot: Any) -> None:
    """50 users at 32k on two 4090s is a No: Qwen2.5-32B's KV cache alone (64 layers x 8 KV heads x 128 x 2 x 2 B =
    256 KiB a token, config.json) is 400 GiB for 50 x 32,768 tokens, against 2 x 24 GB."""
    from datetime import UTC, datetime

    from bot.answer.pipeline import answer

    reply = answer(CASES[0][0], snapshot=snapshot, now=datetime(2026, 11, 26, tzinfo=UTC))
    assert reply.verdict is not None and reply.verdict.pinned is not None
    assert reply.verdict.pinned.fits is False
    assert reply.verdict.pinned.needed_gib * 2 > 64 * 8 * 128 * 2 * 2 * 50 * 32768 / 2**30


def test_a_compound_word_is_not_a_head_count(snapshot: Any) -> None:
    assert parse("Llama 3.1 8B auf 2 Personen-PCs", snapshot=snapshot).concurrency is None


@pytest.mark.parametrize("text", ["a team of 20 engineers wants to fine-tune llama 3 8b",
                                  "we have 3 engineers and want to fine-tune llama 3 8b"])
def test_a_team_that_trains_is_not_an_endpoint(text: str, snapshot: Any) -> None:
    ask = parse(text, snapshot=snapshot)
    assert ask.method == "lora" and ask.concurrency is None
