""""What can I run on my 4090?": a running question on named hardware with no model is answered with what that
hardware holds (bot.answer.capacity), not with a model size to pick first.

Expected fits are arithmetic on published figures, not the card's own output: weights = parameters x bits per
weight / 8 (GGUF Q4_K_M ~4.85 bits incl. scales, llama.cpp's quantize table; MXFP4 4.25 bits for gpt-oss's
expert weights, OpenAI's model card), usable memory = the card's GB x (1 - the 5 % headroom) on a discrete
GPU, 75 % of a 64 GB Mac's unified memory that macOS lets the GPU wire (knowledge/data/SOURCES.md).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.answer.pipeline import answer, apply_action
from bot.answer.capacity import LADDER

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def _rows(text: str, snapshot: Any) -> dict[str, tuple[str, str]]:
    """model name -> (mark, precision) from the card's table, read from the blocks Slack gets."""
    reply = answer(text, snapshot=snapshot, now=NOW)
    assert reply.kind == "capacity", reply.terminal()
    table = next(b["text"]["text"] for b in reply.blocks if b.get("type") == "section" and "```" in b["text"]["text"])
    rows = {}
    for line in table.split("```")[1].splitlines():
        for model_id in LADDER:
            name = snapshot.models[model_id].name
            if line.startswith(name + " "):
                cells = line[len(name):].split()
                rows[model_id] = (cells[0], " ".join(cells[1:3]) if cells[1] == "GGUF" else cells[1])
    return rows


@pytest.mark.parametrize("text", [
    "what can I run on a 4060 ti 16gb?", "which LLMs fit on a 3090?", "what's the biggest model I can run on my 4090?",
    "我的4090能跑什么模型", "4090でどんなモデルが動かせる？", "4090으로 어떤 모델을 돌릴 수 있나요?",
    "welche Modelle kann ich auf meiner 4090 laufen lassen?", "¿qué modelos puedo correr en una 4090?",
    "quels modèles puis-je faire tourner sur une 4090 ?", "mô hình nào chạy được trên 4090?",
])
def test_what_can_i_run_is_answered_with_what_the_card_holds(text: str, snapshot: Any) -> None:
    reply = answer(text, snapshot=snapshot, now=NOW)
    assert reply.kind == "capacity", (text, reply.kind)
    assert len(_rows(text, snapshot)) == len(LADDER)


def test_a_4090_holds_32b_at_4_bit_and_not_70b(snapshot: Any) -> None:
    """24 GB x 0.95 = 22.8 GiB usable. Llama 3.1 8B in BF16: 8.03e9 x 2 B = 15.0 GiB, fits. Qwen3 32B in Q4_K_M:
    32.8e9 x 4.85 / 8 = 18.5 GiB + 1 GiB of KV at 4k (64 layers x 8 KV heads x 128 x 2 x 2 B x 4,096), fits.
    Llama 3.3 70B even in Q4_K_M: 70.55e9 x 4.85 / 8 = 39.8 GiB, does not (offload only). DeepSeek-R1, 671B:
    ~380 GiB at 4-bit."""
    rows = _rows("what can I run on my 4090?", snapshot)
    assert rows["llama-3.1-8b"] == ("✓", "BF16")
    assert rows["qwen3-32b"] == ("✓", "GGUF Q4_K_M")
    assert rows["llama-3.3-70b"][0] in ("⚠", "✗")
    assert rows["deepseek-r1"][0] in ("⚠", "✗")
    text = answer("what can I run on my 4090?", snapshot=snapshot, now=NOW).terminal()
    assert "Largest that fits in its memory: Qwen3 32B" in text


def test_an_h100_holds_gpt_oss_120b_but_not_deepseek_r1(snapshot: Any) -> None:
    """gpt-oss-120b: 116.8B parameters, the MoE experts in MXFP4 (4.25 bits) and the rest in BF16, ~61 GiB: "fits
    into a single 80 GB GPU" (OpenAI's gpt-oss model card). DeepSeek-R1: 671B, ~380 GiB even in 4-bit."""
    rows = _rows("what can I run on an H100?", snapshot)
    assert rows["gpt-oss-120b"] == ("✓", "MXFP4")
    assert rows["deepseek-r1"][0] == "✗"  # a paged serving engine: no offload
    assert rows["qwen3-235b-a22b"][0] == "✗"  # 235B x ~4.25-4.85 bits > 72.6 GiB usable


def test_a_64_gb_mac_holds_70b_at_4_bit(snapshot: Any) -> None:
    """macOS lets the GPU wire 75 % of 64 GB = 48 GiB: 70B in Q4_K_M (39.8 GiB + cache) fits; gpt-oss-120b (~61 GiB)
    does not, and a Mac has no other RAM to offload to."""
    rows = _rows("what can I run on a mac with 64gb?", snapshot)
    assert rows["llama-3.3-70b"] == ("✓", "GGUF Q4_K_M")
    assert rows["gpt-oss-120b"][0] == "✗"


def test_a_picked_model_gets_its_whole_running_answer_on_that_card(snapshot: Any) -> None:
    reply = answer("what can I run on my 4090?", snapshot=snapshot, now=NOW)
    actions = next(b for b in reply.blocks if b.get("type") == "actions")
    first = actions["elements"][0]
    assert first["text"]["text"] == snapshot.models["qwen3-32b"].name  # the largest that fits comes first
    import json
    picked = apply_action(first["action_id"], json.loads(first["value"]), snapshot=snapshot, lang="en", now=NOW)
    assert picked.kind == "serving"
    assert picked.verdict is not None and picked.verdict.pinned is not None
    assert (picked.verdict.pinned.gpu, picked.verdict.pinned.count) == ("rtx-4090", 1)
    assert picked.verdict.workload.model is not None and picked.verdict.workload.model.id == "qwen3-32b"


def test_two_cards_are_counted(snapshot: Any) -> None:
    """2x 24 GB: Llama 3.3 70B in Q4_K_M (39.8 GiB + cache) splits over 45.6 GiB usable."""
    reply = answer("what LLMs can I run on 2x 3090?", snapshot=snapshot, now=NOW)
    assert reply.kind == "capacity" and "2× GeForce RTX 3090" in reply.terminal()
    assert _rows("what LLMs can I run on 2x 3090?", snapshot)["llama-3.3-70b"][0] == "✓"


def test_a_named_model_is_not_a_capacity_question(snapshot: Any) -> None:
    assert answer("can I run llama 3 8b on my 4090", snapshot=snapshot, now=NOW).kind == "serving"
    assert answer("LoRA llama 3 8b on my 4090", snapshot=snapshot, now=NOW).kind == "recommendation"


def _training_cells(text: str, snapshot: Any) -> dict[str, list[str]]:
    """model name -> the full / LoRA / QLoRA cells' marks, from the card's table."""
    reply = answer(text, snapshot=snapshot, now=NOW)
    assert reply.kind == "capacity", reply.terminal()
    table = next(b["text"]["text"] for b in reply.blocks if b.get("type") == "section" and "```" in b["text"]["text"])
    out = {}
    for line in table.split("```")[1].splitlines()[1:]:
        marks = [c for c in line.split() if c in ("✓", "⚠", "✗")]
        name = line.split("  ")[0].strip()
        out[name] = marks
    return out


@pytest.mark.parametrize("text", ["what can i fine-tune on my 4090?", "which model should I fine-tune on my 4090?",
                                  "我的4090能微调什么模型", "4090で何がファインチューニングできる？",
                                  "4090으로 어떤 모델을 파인튜닝할 수 있나요?", "was kann ich auf meiner 4090 feintunen?",
                                  "¿qué modelos puedo ajustar en una 4090?", "quels modèles puis-je affiner sur une 4090 ?",
                                  "mô hình nào có thể tinh chỉnh trên 4090?"])
def test_what_can_i_fine_tune_gets_the_training_capacity(text: str, snapshot: Any) -> None:
    assert answer(text, snapshot=snapshot, now=NOW).kind == "capacity", text


def test_a_4090_fine_tunes_8b_with_lora_and_needs_qlora_beyond(snapshot: Any) -> None:
    """24 GB x 0.95 = 22.8 GiB usable. Llama 3.1 8B LoRA: 8.03e9 x 2 B = 15.0 GiB of frozen BF16 weights plus
    adapters and activations, fits. Qwen3 14B LoRA: 14.8e9 x 2 B = 27.6 GiB of weights alone, cannot; in NF4
    (4.127 bits) they are 7.1 GiB, QLoRA fits. Qwen3 32B even in NF4 is 15.8 GiB of weights plus 16-bit
    embeddings and head, activations and the CUDA context: over. Llama 3.3 70B in NF4 is 34 GiB: no method."""
    cells = _training_cells("what can i fine-tune on my 4090?", snapshot)
    assert cells["Llama 3.1 8B"][1] == "✓"
    assert cells["Qwen3 14B"][1] == "✗" and cells["Qwen3 14B"][2] == "✓"
    assert cells["Llama 3.3 70B Instruct"] == ["✗", "✗", "✗"]


def test_a_training_question_about_a_card_without_a_capacity_word_stays_knowledge(snapshot: Any) -> None:
    """'fine-tune on two 4090s: is PCIe too slow?' is about the link, answered by the knowledge base."""
    assert answer("fine-tune on two 4090s without NVLink, is PCIe too slow?", snapshot=snapshot,
                  now=NOW).kind != "capacity"


def test_ask_json_carries_each_models_verdict(snapshot: Any) -> None:
    from bot.cli.ask import answer_json

    reply = answer("what can I run on my 4090?", snapshot=snapshot, now=NOW)
    out = answer_json(reply, snapshot)
    assert out["result"] is None and out["parsed"] is not None
    rows = {r["model"]: r for r in out["capacity"]}  # type: ignore[union-attr]
    assert set(rows) == {m for m in LADDER if m in snapshot.models}
    assert rows["llama-3.1-8b"]["fits"] is True and rows["llama-3.1-8b"]["offload_gib"] == 0.0
    seventy = rows["llama-3.3-70b"]
    assert seventy["fits"] is False and seventy["needed_gib"] > seventy["has_gib"] == 22.8


@pytest.mark.parametrize("text", [
    "is a 5090 worth it for local llms?", "is the 4090 good for local AI?", "lohnt sich eine 5090 für lokale LLMs?",
    "¿vale la pena una 5090 para modelos locales?", "une 5090 pour des LLM locaux, ça vaut le coup ?",
    "5090はローカルAIに向いてる？", "5090 로컬 AI용으로 괜찮나요?", "5090 chạy AI local có tốt không?",
])
def test_local_ai_on_a_named_card_is_what_it_runs(text: str, snapshot: Any) -> None:
    """'Worth it for local LLMs' names no model: what the card runs answers it, not a choice of knowledge entries."""
    assert answer(text, snapshot=snapshot, now=NOW).kind == "capacity", text


@pytest.mark.parametrize(("text", "memory"), [("what can I run with 12GB of VRAM?", 12.0),
                                              ("what LLM can I run on 8gb vram", 8.0)])
def test_a_card_described_by_its_memory_reads_as_a_desktop_card(text: str, memory: float, snapshot: Any) -> None:
    """'12 GB of VRAM' with no other word is a desktop card: read as the slowest consumer card of that memory
    (not a 2014 Tesla K80, whose server engine and formats a desktop user would not run), and the card says so."""
    reply = answer(text, snapshot=snapshot, now=NOW)
    assert reply.kind == "capacity"
    assert reply.ask is not None
    stand_in = reply.ask.gpus[0].candidates[0]
    gpu = snapshot.gpus[stand_in]
    assert gpu.segment == "consumer" and abs(gpu.vram_gb - memory) < 0.6
    consumer = [g for g in snapshot.gpus.values()  # a card: not a Mac, whose GPU gets only a share of its memory
                if g.segment == "consumer" and abs(g.vram_gb - memory) < 0.6 and not g.laptop and not g.modified
                and not g.unified_memory]
    assert gpu.memory_bandwidth_gbs == min(g.memory_bandwidth_gbs for g in consumer)
    assert f"read as {gpu.name}: the slowest of the {len(consumer)} such cards" in reply.terminal()


@pytest.mark.parametrize("text", ["biggest model for 8x H100?", "8张H100能跑的最大的模型是什么",
                                  "which models fit on a 3090?"])
def test_a_biggest_or_which_model_question_is_about_the_hardware(text: str, snapshot: Any) -> None:
    """'Biggest model', 'which models' name no training: what the hardware runs (it was sized as an 8B LoRA)."""
    reply = answer(text, snapshot=snapshot, now=NOW)
    assert reply.kind == "capacity", (text, reply.kind)
    assert reply.ask is not None and reply.ask.method == "running"
