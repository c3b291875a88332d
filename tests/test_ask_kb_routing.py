"""Issue 9's own "why" questions, through the whole pipeline (`answer`), reach the knowledge card.

The parser reads some of them as `advise` (they mention fine-tuning or training but no model), so
routing must consult the knowledge base before asking for a model size. A question with a model or
size is still a recommendation.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.answer.pipeline import answer
from knowledge.kb import get_entry

NOW = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)

# The examples in issue 9's text, with the entry a person would expect to be answered by.
ISSUE_EXAMPLES = [
    ("Are spot instances safe for fine-tuning?", "cost.spot-checkpointing"),
    ("NVIDIA or AMD for training?", "vendor.amd-rocm"),
    ("Why does billing granularity matter?", "cost.billing-granularity"),
    ("Should I buy or rent?", "cost.buy-vs-rent"),
    ("Do I need several GPUs to fine-tune?", "training.multi-gpu-needed"),
    ("Can two RTX A6000 with an NVLink bridge share memory as 96 GB?", "nvlink.bridge-no-pooling"),
]


@pytest.mark.parametrize(("question", "entry_id"), ISSUE_EXAMPLES)
def test_issue_examples_get_their_knowledge_answer(snapshot: Any, question: str, entry_id: str) -> None:
    reply = answer(question, snapshot=snapshot, now=NOW)
    assert reply.kind == "knowledge", f"{question!r} got a {reply.kind} card"
    assert get_entry(entry_id, reply.language, snapshot).title in str(reply.blocks)


def test_a_question_with_a_model_is_still_a_recommendation(snapshot: Any) -> None:
    reply = answer("Are spot instances OK to fine-tune Llama 3 8B with QLoRA?", snapshot=snapshot, now=NOW)
    assert reply.kind == "recommendation"


def test_an_unclear_question_without_a_model_still_asks(snapshot: Any) -> None:
    """Nothing the knowledge base is sure of: the model-size clarification, not a guessed entry."""
    reply = answer("which gpu should i get", snapshot=snapshot, now=NOW)
    assert reply.kind in ("clarification", "help")
