"""The whole pipeline: a question in each language → a card in that language; buttons; follow-ups; failures."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.answer.pipeline import answer, apply_action
from bot.answer.reply import Reply
from bot.render.limits import check_message

NOW = datetime(2025, 6, 3, 9, 0, tzinfo=UTC)
QUESTIONS = [
    ("en", "fine-tune 13B with QLoRA on a budget"),
    ("zh-Hans", "用QLoRA微调Qwen2.5-14B，预算有限，用什么卡？"),
    ("ko", "예산이 적어요. 13B 모델을 QLoRA로 파인튜닝하려면 어떤 GPU가 좋을까요?"),
    ("ja", "QLoRAで13Bをファインチューニングしたい"),
    ("es", "quiero hacer fine-tuning de un modelo de 13B con QLoRA, presupuesto bajo"),
    ("de", "Ich möchte ein 13B-Modell mit QLoRA feinabstimmen, kleines Budget"),
    ("fr", "je veux faire un fine-tuning d'un modèle 13B avec QLoRA, petit budget"),
    ("vi", "tôi muốn tinh chỉnh mô hình 13B bằng QLoRA, ngân sách thấp"),
]


def buttons(reply: Reply) -> dict[str, str]:
    return {e["action_id"]: e["value"] for b in reply.blocks if b["type"] == "actions" for e in b["elements"]}


@pytest.mark.parametrize(("lang", "question"), QUESTIONS, ids=[q[0] for q in QUESTIONS])
def test_question_in_each_language_gets_a_recommendation_in_that_language(snapshot: Any, lang: str,
                                                                          question: str) -> None:
    reply = answer(question, snapshot=snapshot, now=NOW)
    assert (reply.language, reply.kind) == (lang, "recommendation")
    assert check_message(reply.message()) == []
    assert "QLoRA" in reply.blocks[0]["text"]["text"]  # the header names the method it evaluated
    assert "█" in json.dumps(reply.message(), ensure_ascii=False)  # the memory bars


def test_lang_forces_the_reply_language(snapshot: Any) -> None:
    assert answer("price 4090", snapshot=snapshot, lang="ko", now=NOW).language == "ko"


@pytest.mark.parametrize(("question", "kind"), [
    ("compare H100 vs H200 vs MI300X", "comparison"), ("price 4090", "price"), ("specs L40S", "specs"),
    ("help", "help"), ("", "help"), ("lora on a100 for llama 3.1 8b", "clarification"),
])
def test_intents_route_to_their_card(snapshot: Any, question: str, kind: str) -> None:
    reply = answer(question, snapshot=snapshot, now=NOW)
    assert reply.kind == kind
    assert check_message(reply.message()) == []


def test_what_if_buttons_change_the_request(snapshot: Any) -> None:
    first = answer("fine-tune llama 3.1 8b with lora", snapshot=snapshot, now=NOW)
    values = buttons(first)
    assert {"whatif.method.qlora", "whatif.method.full", "whatif.gpus.more", "whatif.spot", "share"} <= set(values)
    assert all(len(v) <= 2000 for v in values.values())
    qlora = apply_action("whatif.method.qlora", values["whatif.method.qlora"], snapshot=snapshot, lang="en", now=NOW)
    assert qlora.kind == "recommendation" and "QLoRA" in qlora.blocks[0]["text"]["text"]
    more = apply_action("whatif.gpus.more", values["whatif.gpus.more"], snapshot=snapshot, lang="en", now=NOW)
    assert more.state is not None and more.state["w"]["gpus"] >= 2
    shared = apply_action("share", values["share"], snapshot=snapshot, lang="de", now=NOW)
    assert shared.kind == "recommendation" and shared.language == "de"


def test_compare_top_two(snapshot: Any) -> None:
    first = answer("fine-tune llama 3.1 8b with lora", snapshot=snapshot, now=NOW)
    value = buttons(first)["compare.top2"]
    reply = apply_action("compare.top2", value, snapshot=snapshot, lang="ja", now=NOW)
    assert (reply.kind, reply.language) == ("comparison", "ja")
    assert any("✅" in json.dumps(b, ensure_ascii=False) for b in reply.blocks)  # the fit verdict is there


def test_gpu_pick_answers_with_the_picked_gpu(snapshot: Any) -> None:
    ask = answer("lora on a100 for llama 3.1 8b", snapshot=snapshot, now=NOW)
    picks = {k: v for k, v in buttons(ask).items() if k.startswith("gpu.pick")}
    assert len(picks) >= 2
    action, value = sorted(picks.items())[0]
    reply = apply_action(action, value, snapshot=snapshot, lang="en", now=NOW)
    picked = json.loads(value)["pick"]
    assert reply.kind == "recommendation"
    assert reply.state is not None and reply.state["w"]["gpu"] == picked


@pytest.mark.parametrize("value", ["not json", "[]", '{"v": 1, "w": {"gpus": "many"}}', "x" * 3000])
def test_foreign_or_stale_button_gets_the_out_of_date_card(snapshot: Any, value: str) -> None:
    reply = apply_action("whatif.spot", value, snapshot=snapshot, lang="fr", now=NOW)
    assert (reply.kind, reply.language) == ("error", "fr")
    assert "carte" in reply.blocks[0]["text"]["text"]


def test_unknown_action_is_refused_politely(snapshot: Any) -> None:
    reply = apply_action("drop.tables", "{}", snapshot=snapshot, lang="en", now=NOW)
    assert reply.kind == "error"


def test_follow_up_refines_the_previous_request(snapshot: Any) -> None:
    first = answer("fine-tune llama 3.1 8b with qlora", snapshot=snapshot, now=NOW)
    follow = answer("and with 4 GPUs?", snapshot=snapshot, now=NOW, state=first.state)
    assert follow.kind == "recommendation"
    assert follow.state is not None and follow.state["w"]["model"] == "llama-3.1-8b"
    assert follow.state["w"]["method"] == "qlora"


def test_a_failing_component_gives_an_error_card_in_the_users_language(snapshot: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import bot.answer.routes as routes

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(routes, "route_ask", boom)
    reply = answer("QLoRAで13Bをファインチューニングしたい", snapshot=snapshot, now=NOW)
    assert (reply.kind, reply.language) == ("error", "ja")
    assert "secret" not in json.dumps(reply.message()) and "RuntimeError" not in json.dumps(reply.message())


@pytest.mark.parametrize("text", ["<!channel> fine-tune 7B <@U123>", "x" * 10_000, "\x00\x1b[31m", "🔥" * 3000])
def test_hostile_questions_get_a_clean_card(snapshot: Any, text: str) -> None:
    reply = answer(text, snapshot=snapshot, now=NOW)
    assert check_message(reply.message()) == []
    assert "<!channel>" not in reply.text and "<@U123>" not in json.dumps(reply.message())
