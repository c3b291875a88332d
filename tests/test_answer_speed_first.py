"""A question about speed ("how many tokens/s does a 4090 get ...") is answered with the rate first, then the fit;
a can-I question keeps the fit first. The card reorders two lines; the figures are the same."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.parse.serving import asks_speed

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def _order(text: str, snapshot: Any) -> tuple[int, int]:
    from bot.answer.pipeline import answer

    lines = answer(text, snapshot=snapshot, now=NOW).terminal().splitlines()
    rate = next(i for i, line in enumerate(lines) if "tokens/s" in line)
    fit = next(i for i, line in enumerate(lines) if line.startswith("✅"))
    return rate, fit


def test_how_fast_leads_with_the_rate(snapshot: Any) -> None:
    rate, fit = _order("how many tokens/s does a 4090 get with llama 3 8b?", snapshot)
    assert rate < fit


def test_can_i_leads_with_the_fit(snapshot: Any) -> None:
    rate, fit = _order("can I run llama 3 8b on my 4090", snapshot)
    assert fit < rate


@pytest.mark.parametrize("text", ["how fast is qwen 7b on a 3090", "4090跑Llama 3 8B速度怎么样", "wie schnell läuft Llama 3 8B auf einer 4090",
                                  "¿qué velocidad tiene Llama 3 8B en una 4090?", "4090でLlama 3 8Bはどのくらいの速さ？",
                                  "4090에서 Llama 3 8B 속도는?", "quelle vitesse pour Llama 3 8B sur une 4090 ?",
                                  "Llama 3 8B trên 4090 tốc độ bao nhiêu?"])
def test_speed_questions_in_eight_languages(text: str) -> None:
    assert asks_speed(text)


@pytest.mark.parametrize("text", ["can I run llama 3 8b on my 4090", "serve llama 3 8b to 50 users at 30 tokens/s each"])
def test_a_fit_question_or_a_target_is_not_a_speed_question(text: str) -> None:
    assert not asks_speed(text)
