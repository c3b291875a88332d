"""Running without a GPU is not sized (the product sizes GPUs): the card says so instead of passing over it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.parse import parse

SAID = [
    ("llama 3.1 8b inference on cpu only?", "on cpu only"),
    ("run qwen 7b without a gpu", "without a gpu"),
    ("纯CPU跑Qwen2.5-7B可以吗", "纯CPU"),
    ("GPUなしでLlama 3 8Bを動かせますか", "GPUなし"),
    ("CPU만으로 Llama 3 8B 실행", "CPU만"),
    ("Llama 3 8B ohne GPU laufen lassen", "ohne GPU"),
    ("correr Llama 3 8B sin GPU", "sin GPU"),
    ("faire tourner Llama 3 8B sans GPU", "sans GPU"),
    ("chạy Llama 3 8B không có GPU", "không có GPU"),
]


@pytest.mark.parametrize(("text", "quoted"), SAID)
def test_a_cpu_only_request_is_said_not_dropped(text: str, quoted: str, snapshot: Any) -> None:
    notes = [n for n in parse(text, snapshot=snapshot).ignored if getattr(n, "key", "") == "cpu_only"]
    assert len(notes) == 1 and notes[0].given == quoted


@pytest.mark.parametrize("text", ["fine-tune llama 3 8b with cpu offload", "deepspeed zero3 offload to cpu",
                                  "how many cpus do I need for data loading"])
def test_cpu_offload_and_cpu_counts_are_not_cpu_only(text: str, snapshot: Any) -> None:
    assert not any(getattr(n, "key", "") == "cpu_only" for n in parse(text, snapshot=snapshot).ignored)


def test_the_card_says_it_in_the_readers_language(snapshot: Any) -> None:
    from bot.answer.pipeline import answer

    reply = answer("纯CPU跑Qwen2.5-7B可以吗", snapshot=snapshot, now=datetime(2026, 11, 26, tzinfo=UTC))
    assert reply.language == "zh-Hans" and "这里只估算 GPU" in reply.terminal()


@pytest.mark.parametrize(("text", "quoted"), [
    ("run qwen3 8b on iphone", "on iphone"), ("在手机上跑qwen3 4b", "手机"), ("Llama 3.2 3B auf meinem Handy", "auf meinem handy"),
    ("スマホでLlama 3.2 1Bを動かしたい", "スマホ"), ("휴대폰에서 Llama 3.2 1B 돌릴 수 있나요?", "휴대폰"),
])
def test_a_phone_is_said_not_dropped(text: str, quoted: str, snapshot: Any) -> None:
    """Phones are not in the catalog: the card says the request was read for GPUs and Macs, quoting the words."""
    notes = [n for n in parse(text, snapshot=snapshot).ignored if getattr(n, "key", "") == "phone"]
    assert len(notes) == 1 and quoted in str(notes[0]).lower()


def test_a_phone_number_or_a_phone_word_elsewhere_is_no_phone(snapshot: Any) -> None:
    assert not [n for n in parse("fine-tune llama 3 8b on a 4090 for a smartphonelike app", snapshot=snapshot).ignored
                if getattr(n, "key", "") == "phone"]
