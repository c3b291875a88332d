""""How much VRAM does Llama 3 70B need?" asks about running the model unless a training word says otherwise; the
card opens with the whole model's weights per format and the KV cache per user.

Expected figures are arithmetic on the model's config (meta-llama/Meta-Llama-3-70B config.json: 80 layers,
8 KV heads of 128, hidden 8192, vocabulary 128,256, untied head; 70.55B parameters): BF16 weights 70.55e9 x 2 B =
131.4 GiB; 4-bit at group 128 (4.156 bits, the head in 16 bits) ~37 GiB; KV per token 2 x 80 x 8 x 128 x 2 B =
320 KiB, x 4,096 tokens = 1.25 GiB.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.parse import parse

NOW = datetime(2026, 11, 26, tzinfo=UTC)


@pytest.mark.parametrize("text", [
    "how much vram do I need for llama 3 70b?", "Llama 3 70B需要多少显存", "Llama 3 70Bに必要なメモリは？",
    "Llama 3 70B 메모리 얼마나 필요해요?", "wie viel VRAM braucht Llama 3 70B?", "¿cuánta VRAM necesita Llama 3 70B?",
    "combien de VRAM pour Llama 3 70B ?", "Llama 3 70B cần bao nhiêu VRAM?",
])
def test_a_memory_question_without_a_training_word_is_about_running(text: str, snapshot: Any) -> None:
    ask = parse(text, snapshot=snapshot)
    assert ask.method == "running", (text, ask.method)
    assert "running" in ask.assumed["method"]


@pytest.mark.parametrize("text", ["how much vram to fine-tune llama 3 70b", "Llama 3 70B LoRA微调需要多少显存",
                                  "how much memory to train a 7B model from scratch on 100B tokens"])
def test_a_training_word_keeps_the_training_method(text: str, snapshot: Any) -> None:
    assert parse(text, snapshot=snapshot).method not in ("running", "serving")


def test_the_card_gives_the_whole_models_memory_per_format(snapshot: Any) -> None:
    from bot.answer.pipeline import answer

    text = answer("how much vram do I need for llama 3 70b?", snapshot=snapshot, now=NOW).terminal()
    assert "How much memory Llama 3 70B takes: its weights 131.4 GiB in BF16" in text
    assert "37.0 GiB in 4-bit" in text
    assert "the KV cache adds 1.2 GiB per user at 4,096 tokens" in text
    assert "How much VRAM to train" not in text  # the knowledge entry on training memory is not this question


def test_a_serving_plan_over_pcie_speaks_of_tensor_parallelism(snapshot: Any) -> None:
    from bot.answer.pipeline import answer

    reply = answer("serve llama 3 70b on 4x rtx a4000", snapshot=snapshot, now=NOW)
    codes = {f.code for o in reply.verdict.options for f in o.findings} if reply.verdict else set()
    assert "link.pcie_tp" in codes and "link.pcie_many" not in codes


def test_a_generic_what_beside_a_workload_pulls_no_knowledge_entry(snapshot: Any) -> None:
    """'what's the cheapest GPU ... per second' is a which-GPU question: the billing-granularity entry (matched on
    'per second') is not shown under it; a real why question still gets its entry."""
    from bot.answer.pipeline import answer

    text = answer("what's the cheapest gpu to serve llama 3.1 8b at 10 requests per second", snapshot=snapshot,
                  now=NOW).terminal()
    assert "billing granularity" not in text.lower()
    why = answer("fine-tune llama 3 8b on 2x 4090, why does nvlink matter?", snapshot=snapshot, now=NOW).terminal()
    assert "NVLink" in why.split("Memory per GPU")[0]
