"""Threads and unknown names: a follow-up changes the thread's request; a model nobody knows is asked about."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.answer.pipeline import answer
from bot.render.limits import check_message

NOW = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)


def test_a_follow_up_changes_only_what_it_says(snapshot: Any) -> None:
    first = answer("serve Llama 3.1 8B to 20 users at 8k context", snapshot=snapshot, now=NOW)
    assert first.state is not None
    follow = answer("and with 4-bit?", snapshot=snapshot, now=NOW, state=first.state)
    assert follow.ask is not None and follow.ask.follow_up
    assert follow.kind == first.kind != "help"
    assert follow.state is not None
    workload = follow.state["w"]
    # the thread's model, users and context are kept; the follow-up adds the weight format it named
    assert workload["model"] == "llama-3.1-8b" and workload["quantization"] == "int4"
    assert workload["concurrency"] == 20 and workload["context_tokens"] == 8192


def test_a_follow_up_without_a_thread_is_not_a_recommendation_out_of_nothing(snapshot: Any) -> None:
    reply = answer("and with 4-bit?", snapshot=snapshot, now=NOW)
    assert reply.kind not in ("recommendation", "serving") and reply.verdict is None


def test_an_unknown_model_is_asked_about_with_the_closest_presets(snapshot: Any) -> None:
    reply = answer("serve Qwen3-Coder-Nextgen to 10 users", snapshot=snapshot, now=NOW)
    assert reply.kind == "clarification" and check_message(reply.message()) == []
    labels = [e["text"]["text"] for b in reply.blocks if b["type"] == "actions" for e in b["elements"]]
    action_ids = [e["action_id"] for b in reply.blocks if b["type"] == "actions" for e in b["elements"]]
    assert labels and all(a.startswith("model.pick.") for a in action_ids)
    assert all(label in {m.name for m in snapshot.models.values()} for label in labels)  # real presets
    assert all("Qwen" in label for label in labels)  # the closest known: the family named
    assert "parameters" in reply.text or "parameters" in str(reply.blocks)
