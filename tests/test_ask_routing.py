"""Explain-intent routing: the knowledge card alone, plus a recommendation only when the question carries a workload.

Issue 9 item 3: "a question that also carries a workload gets both the answer and the recommendation".
A real workload is a model or a parameter count, plus a method or the person asking which GPU; a GPU,
a GPU count or a bare "training" is context for the answer, and must not run the whole-catalog engine.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.answer.pipeline import answer
from bot.parse import parse
from bot.answer.routes import asks_why, carries_workload

NOW = datetime(2025, 6, 3, 9, 0, tzinfo=UTC)

# Conceptual questions that name a GPU, a GPU count or "training", but no model or size.
NO_WORKLOAD = [
    "4090은 NVLink가 없는데 두 장으로 학습하면 많이 느려지나요?",
    "Die 4090 hat kein NVLink – wie schlimm ist das fürs Training mit zwei Karten?",
    "4090不支持nvlink，在训练深度学习模型时具体的表现是什么？",
    "How much VRAM do I need to train a model?",
    "Lohnt sich ein Intel Gaudi 2 statt einer H100 fürs Training?",
]
# Which-GPU questions that also ask why, and the entry (by id) whose answer must sit above the recommendation.
WORKLOAD_AND_WHY = [
    ("用QLoRA微调Qwen2.5-14B用什么卡？为什么QLoRA省显存？", "peft.qlora"),
    ("Which GPU to fine-tune Llama 3 8B with QLoRA? And why does QLoRA save memory?", "peft.qlora"),
]


def _engine_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("the whole-catalog evaluation ran for a question without a workload")

    monkeypatch.setattr("bot.answer.advice.evaluate", refuse)


@pytest.mark.parametrize("question", NO_WORKLOAD)
def test_explain_without_workload_gets_the_knowledge_card_and_no_engine_run(
        snapshot: Any, monkeypatch: pytest.MonkeyPatch, question: str) -> None:
    ask = parse(question, snapshot=snapshot)
    assert ask.intent == "explain" and not carries_workload(ask)
    _engine_forbidden(monkeypatch)
    reply = answer(question, snapshot=snapshot, now=NOW)
    assert reply.kind == "knowledge"
    assert reply.state is None  # no recommendation state to refine in a thread


def test_the_knowledge_answer_still_uses_the_named_gpus_catalog_facts(snapshot: Any) -> None:
    """The 4090 has no NVLink in the catalog; the answer says so without running the engine."""
    assert not snapshot.gpus["rtx-4090"].has_nvlink_class_link
    reply = answer("Die 4090 hat kein NVLink – wie schlimm ist das fürs Training mit zwei Karten?",
                   snapshot=snapshot, now=NOW)
    assert reply.kind == "knowledge"
    card = reply.terminal()
    assert "4090" in card and "PCIe" in card


@pytest.mark.parametrize(("question", "entry_id"), WORKLOAD_AND_WHY)
def test_workload_question_that_asks_why_gets_both(snapshot: Any, question: str, entry_id: str) -> None:
    from knowledge.kb import get_entry

    ask = parse(question, snapshot=snapshot)
    assert carries_workload(ask) and asks_why(ask)
    reply = answer(question, snapshot=snapshot, now=NOW)
    assert reply.kind == "recommendation"
    assert reply.state is not None and reply.state["w"]["method"] == "qlora"
    title = get_entry(entry_id, reply.language, snapshot).title
    assert title in str(reply.blocks)


def test_workload_question_without_why_gets_no_knowledge_section(snapshot: Any) -> None:
    from knowledge.kb import get_entry

    reply = answer("Which GPU to fine-tune Llama 3 8B with QLoRA?", snapshot=snapshot, now=NOW)
    assert reply.kind == "recommendation"
    assert get_entry("peft.qlora", "en", snapshot).title not in str(reply.blocks)


@pytest.mark.parametrize(("question", "expected"), [
    ("4090 두 장으로 학습할 때 NVLink 없으면 성능이 어떤가요", False),  # GPU + count + "training": context only
    ("Are spot instances safe for a 3 day training run?", False),
    ("fine-tune Llama 3 8B with QLoRA", True),  # model + method
    ("which GPU for a 13B model?", True),  # size + asking which GPU
    ("用QLoRA微调Qwen2.5-14B用什么卡？为什么QLoRA省显存？", True),
])
def test_carries_workload(snapshot: Any, question: str, expected: bool) -> None:
    assert carries_workload(parse(question, snapshot=snapshot)) is expected


def test_broken_knowledge_base_without_workload_gets_help_not_a_recommendation(
        snapshot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("kb down")

    monkeypatch.setattr("knowledge.kb.match", broken)
    reply = answer("How much VRAM do I need to train a model?", snapshot=snapshot, now=NOW)
    assert reply.kind == "help"
    reply = answer(WORKLOAD_AND_WHY[0][0], snapshot=snapshot, now=NOW)
    assert reply.kind == "recommendation"  # the recommendation survives without its knowledge section


@pytest.mark.parametrize("text", ["what's the best budget gpu for llama.cpp", "llama.cpp用のおすすめのグラボは？"])
def test_a_card_asked_for_an_inference_engine_is_advice_not_help(text: str, snapshot: Any) -> None:
    """No model and no knowledge entry, but a GPU asked for to run llama.cpp: the advice path (a running plan or
    the question which model), never the help card."""
    reply = answer(text, snapshot=snapshot, now=NOW)
    assert reply.kind in ("serving", "clarification")


def test_asking_what_an_engine_is_does_not_run_the_engine(snapshot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _engine_forbidden(monkeypatch)
    assert answer("what's llama.cpp", snapshot=snapshot, now=NOW).kind != "serving"
