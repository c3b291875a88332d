"""A "how many" phrase next to a named GPU leaves the count open (the engine then answers with the fewest cards
that hold the model); a GPU named without a count, not asked about, is one card. A phrase longer than the
window around the GPU ("bao nhiêu card 3090", 14 characters ending right before the GPU) still counts."""

from __future__ import annotations

from typing import Any

import pytest

from bot.parse import parse

ASKED = [
    ("en", "how many 3090 cards to run Qwen2.5 72B?"),
    ("zh-Hans", "跑Qwen2.5 72B需要几张3090？"),
    ("ko", "Qwen2.5 72B 돌리려면 3090 몇 장 필요해요?"),
    ("ja", "Qwen2.5 72Bを動かすには3090が何枚必要？"),
    ("es", "¿Cuántas 3090 necesito para correr Qwen2.5 72B?"),
    ("de", "Wie viele 3090 brauche ich für Qwen2.5 72B?"),
    ("fr", "Combien de 3090 pour faire tourner Qwen2.5 72B ?"),
    ("vi", "Cần bao nhiêu card 3090 để chạy Qwen2.5 72B?"),
]


@pytest.mark.parametrize(("language", "question"), ASKED, ids=[lang for lang, _ in ASKED])
def test_the_count_is_the_question(snapshot: Any, language: str, question: str) -> None:
    ask = parse(question, snapshot=snapshot)
    assert [g.gpu_id for g in ask.gpus] == ["rtx-3090"]
    assert ask.gpu_count is None, f"{question!r}: count {ask.gpu_count} ({ask.assumed.get('gpu_count')})"


@pytest.mark.parametrize("question", ["can I run Qwen2.5 72B on my 3090?", "3090 của tôi chạy được Qwen2.5 72B không?",
                                      "我的3090能跑Qwen2.5 72B吗"])
def test_a_named_card_without_a_count_is_one(snapshot: Any, question: str) -> None:
    assert parse(question, snapshot=snapshot).gpu_count == 1
