"""Speech models: Whisper large-v3 is its own preset, and transcribing with it is running it, not training."""

from __future__ import annotations

from typing import Any

import pytest

from bot.parse import parse

RUNNING = [
    ("what GPU for whisper large v3 transcription?", "whisper-large-v3"),
    ("which card to transcribe podcasts with whisper-large-v3-turbo", "whisper-large-v3-turbo"),
    ("用什么显卡跑 whisper large v3 语音识别", "whisper-large-v3"),
    ("Whisper large-v3 で文字起こしするならどの GPU？", "whisper-large-v3"),
    ("welche GPU für Whisper large-v3 Transkription?", "whisper-large-v3"),
    ("openai/whisper-large-v3 on a T4", "whisper-large-v3"),
]


@pytest.mark.parametrize(("text", "model"), RUNNING)
def test_transcribing_with_whisper_is_running_it(text: str, model: str, snapshot: Any) -> None:
    ask = parse(text, snapshot=snapshot)
    assert ask.model is not None and ask.model.model_id == model and ask.method == "running"


def test_training_whisper_stays_training(snapshot: Any) -> None:
    ask = parse("fine-tune whisper large v3 with LoRA", snapshot=snapshot)
    assert ask.model is not None and ask.model.model_id == "whisper-large-v3" and ask.method == "lora"


def test_the_v3_presets_carry_their_published_shapes(snapshot: Any) -> None:
    # openai/whisper-large-v3(-turbo) config.json: 32 encoder layers; 32 decoder layers (turbo: 4); d_model 1280
    v3, turbo = snapshot.models["whisper-large-v3"], snapshot.models["whisper-large-v3-turbo"]
    assert (v3.layers, v3.hidden_size, v3.params_b) == (64, 1280, 1.55)
    assert (turbo.layers, turbo.hidden_size, turbo.params_b) == (36, 1280, 0.809)
