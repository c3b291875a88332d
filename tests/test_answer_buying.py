""""Which GPU should I buy for local LLMs?": a running question with no model, size or card that asks what to buy
(or gives a total budget) is answered with a buying ladder (bot.answer.buying), not with a model size to pick first
nor with the buy-or-rent essay.

Expected fits are arithmetic on published figures, not the card's own output: Llama 3 70B in GGUF Q4_K_M is
39.60 GiB of weights (llama.cpp's quantize table, tests/cases/serving_memory.jsonl gguf-size-llama3-70b-q4_k_m),
so no card under 40 GiB of usable memory holds a dense 70B model; a budget buys only cards whose price (street
price where recorded, else list price: knowledge/data/purchase_prices.csv, the catalog) is within it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.answer.buying import buying_rows
from bot.answer.pipeline import answer

NOW = datetime(2026, 11, 26, tzinfo=UTC)

QUESTIONS = [
    "which gpu should I buy for local LLMs?",
    "best GPU under $1000 for running local models",
    "买什么显卡跑本地大模型",
    "welche Grafikkarte soll ich für lokale LLMs kaufen?",
    "로컬 LLM용으로 어떤 GPU를 사야 하나요?",
    "¿Qué GPU compro para correr LLMs en local?",
    "Quelle carte graphique acheter pour faire tourner des LLM en local ?",
    "Nên mua GPU nào để chạy LLM cục bộ?",
    "ローカルLLM用にどのGPUを買うべき？",
]


@pytest.mark.parametrize("text", QUESTIONS)
def test_a_buying_question_without_a_model_gets_the_ladder(text: str, snapshot: Any) -> None:
    reply = answer(text, snapshot=snapshot, now=NOW)
    assert reply.kind == "buying", (text, reply.kind)
    table = next(b["text"]["text"] for b in reply.blocks if b.get("type") == "section" and "```" in b["text"]["text"])
    assert len(table.split("```")[1].strip().splitlines()) >= 3


@pytest.mark.parametrize("text", [
    "should I buy or rent a GPU?",  # the buy-or-rent question itself
    "which GPU should I buy for fine-tuning?",  # training: a model size first
    "which GPU should I buy to run Llama 3 70B?",  # a model: its own answer
    "is a 3090 worth buying for local LLMs?",  # a card: what it runs, or buy-or-rent for it
])
def test_other_buying_questions_keep_their_answers(text: str, snapshot: Any) -> None:
    assert answer(text, snapshot=snapshot, now=NOW).kind != "buying", text


def test_each_step_costs_more_and_runs_a_larger_model(snapshot: Any) -> None:
    rows = buying_rows(snapshot, None)
    assert len(rows) >= 4
    for cheaper, dearer in zip(rows, rows[1:], strict=False):
        assert cheaper.usd <= dearer.usd and cheaper.params_b < dearer.params_b
    for row in rows:
        assert row.needed_gib <= row.has_gib and row.tokens_per_s > 0
        assert row.price_basis in ("street", "new") and row.price_when  # every price says when it was
        gpu = snapshot.gpus[row.gpu_id]
        assert gpu.segment in ("consumer", "workstation") and not gpu.laptop


def test_no_card_under_40_gib_holds_a_dense_70b_model(snapshot: Any) -> None:
    for row in buying_rows(snapshot, None):
        model = snapshot.models[row.model_id]
        if model.params_b >= 70 and model.active_params_b == model.params_b:
            assert row.has_gib >= 39.6, row


def test_a_budget_buys_only_cards_within_it(snapshot: Any) -> None:
    rows = buying_rows(snapshot, 1000.0)
    assert rows and all(r.usd <= 1000.0 for r in rows)
    assert not buying_rows(snapshot, 50.0)  # no card sells for $50: the card says so
    reply = answer("best GPU under $50 to run local LLMs", snapshot=snapshot, now=NOW)
    assert reply.kind == "buying" and "$50" in reply.terminal()


def test_ask_json_carries_the_ladder(snapshot: Any) -> None:
    """`ask --json` adds `buying` beside `parsed` (README: the ask --json contract)."""
    from bot.cli.ask import answer_json

    reply = answer("which gpu should I buy for local LLMs?", snapshot=snapshot, now=NOW)
    out = answer_json(reply, snapshot)
    rows = out["buying"]
    assert isinstance(rows, list) and rows and out["result"] is None
    assert set(rows[0]) == {"gpu", "vram_gb", "usd", "price_basis", "price_date", "model", "name", "params_b",
                            "precision", "needed_gib", "has_gib", "output_tokens_per_s_per_user", "context_tokens"}


def test_a_card_whose_name_does_not_say_its_memory_gets_it_in_the_table() -> None:
    """"GeForce RTX 2080" holds the digit 8 but not "8 GB": the table adds its memory; "Arc B580 12GB" says it."""
    from bot.render.cards import render_card
    from bot.render.views import BuyingRow, BuyingView

    rows = (BuyingRow("rtx-2080", "GeForce RTX 2080", 8.0, 699.0, "new", "2018", "llama-3.1-8b", "Llama 3.1 8B",
                      8.03, "gguf-q4_k_m", 6.0, 7.6, 60.0, 4096),
            BuyingRow("arc-b580", "Arc B580 12GB", 12.0, 249.0, "new", "2024", "qwen3-14b", "Qwen3 14B", 14.8,
                      "gguf-q4_k_m", 9.9, 11.4, 37.6, 4096))
    text = render_card("buying", BuyingView(rows, None, {}), "en").blocks[2]["text"]["text"]
    assert "GeForce RTX 2080 (8 GB)" in text and "Arc B580 12GB " in text and "Arc B580 12GB (" not in text
