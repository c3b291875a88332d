"""Buying GPU hours is renting; getting a card is buying it (the words people use for each)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.parse import parse

RENTING = [
    "where can I buy H100 hours cheaply?",
    "buy A100 GPU hours",
    "cheapest place to buy H100-hours",
    "comprar horas de H100 barato",
    "acheter des heures de H100",
    "wo kann ich günstig H100-Stunden kaufen?",
    "buy hours on an H100",
    "buy 8 H100s for 100 hours",
    "where to buy 4 A100s for 3 days cheaply",
]
BUYING = [
    "is it worth it to get a 4090?",
    "should I get a 4090?",
    "is a 4090 worth getting?",
    "should I buy a 4090, I'd use it 10 hours a day",  # usage hours of an owned card: buy vs rent
    "买4090还是按小时租",  # buy, or rent by the hour: both weighed
    "nên mua 4090 bây giờ không",  # "bây giờ" is "now", not hours
    "4090を買って長時間使う価値はある？",  # 長時間: a long time
    "is a 3090 worth buying?",
    "should I buy a 4090 for 3 years of side projects?",
]


@pytest.mark.parametrize("text", RENTING)
def test_hours_of_a_named_gpu_are_rented_and_priced(text: str, snapshot: Any) -> None:
    assert parse(text, snapshot=snapshot).intent == "price"


@pytest.mark.parametrize("text", BUYING)
def test_getting_a_named_card_weighs_buying_against_renting(text: str, snapshot: Any) -> None:
    assert parse(text, snapshot=snapshot).intent == "explain"


def test_getting_a_card_for_a_job_is_advice(snapshot: Any) -> None:
    assert parse("should I get a 4090 for fine-tuning llama 8b?", snapshot=snapshot).intent == "advise"
