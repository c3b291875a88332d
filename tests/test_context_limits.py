"""A context longer than the model reads is capped and said so; "1M context" is 1,048,576 tokens; "0 users" is refused.

Llama 3.1 8B's config.json has max_position_embeddings 131072; Qwen2.5-7B-Instruct-1M's 1010000.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.answer.pipeline import answer
from bot.parse import parse

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def _finding(reply: Any, code: str) -> Any:
    assert reply.verdict is not None
    return next((f for f in reply.verdict.findings if f.code == code), None)


def test_a_context_over_the_models_maximum_is_capped_and_said(snapshot: Any) -> None:
    reply = answer("run llama 3.1 8b with 512k context", snapshot=snapshot, now=NOW, lang="en")
    capped = _finding(reply, "serving.context_capped")
    assert capped is not None
    assert capped.numbers["asked_context_tokens"] == 512 * 1024 and capped.numbers["max_context_tokens"] == 131072
    assert reply.verdict.assumptions["context_tokens"] == 131072
    assert "reads at most 131,072 tokens" in str(reply.blocks)


def test_a_context_within_the_maximum_is_kept(snapshot: Any) -> None:
    reply = answer("run llama 3.1 8b with 32k context", snapshot=snapshot, now=NOW, lang="en")
    assert _finding(reply, "serving.context_capped") is None
    assert reply.verdict.assumptions["context_tokens"] == 32 * 1024


def test_m_is_a_million_tokens_as_k_is_a_thousand(snapshot: Any) -> None:
    ask = parse("run llama 3.1 8b with 10M context", snapshot=snapshot)
    assert ask.context_tokens == 10 * 1024 * 1024
    assert "'M' read as 1,048,576" in ask.assumed.get("seq_len", "") + ask.assumed.get("context_tokens", "")


def test_zero_users_is_refused_not_replaced(snapshot: Any) -> None:
    ask = parse("serve llama 8b to 0 users", snapshot=snapshot)
    assert ask.concurrency is None and any("0 users" in note for note in ask.ignored)
