"""Transcribing hours of audio with Whisper: each published run's time for that much audio.

Expected values are arithmetic on the published runs (bot/answer/transcription.py cites them): 150 minutes of
audio in 98 s (A100, Transformers batched with Flash Attention 2) is 91.8x real time, in 563 s (faster-whisper,
beam 1) 16.0x; 13 minutes in 54 s (V100S, faster-whisper) 14.4x, in 270 s (openai/whisper) 2.89x.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.answer.transcription import RUNS

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def test_the_real_time_factors_are_the_published_runs():
    assert [round(r.realtime, 2) for r in RUNS] == [
        round(9000 / 98, 2), round(9000 / 563, 2), round(780 / 54, 2), round(780 / 270, 2)]


@pytest.mark.parametrize(("text", "lang", "first"), [
    ("transcribe 1000 hours of audio with whisper large v3, which gpu and how long?", "en", "10.9 h at 92× real time"),
    ("用whisper large v3转写1000小时的音频要多久", "zh-Hans", "10.9 小时（实时速度的 92 倍）"),
    ("whisper large-v3で100時間の音声を文字起こししたい", "ja", "1.1 時間（実時間の 92 倍）"),
])
def test_hours_of_audio_open_the_card_with_each_runs_time(text: str, lang: str, first: str, snapshot: Any) -> None:
    """1000 h / 91.84 = 10.9 h; 100 h / 91.84 = 1.09 h."""
    from bot.answer.pipeline import answer

    reply = answer(text, snapshot=snapshot, now=NOW)
    assert reply.language == lang
    lines = [line for line in reply.terminal().splitlines() if line.strip()]
    assert lines[3].startswith("•") and first in lines[3]
    assert len([line for line in lines[3:8] if line.startswith("•")]) == 4


def test_hours_of_audio_are_parsed_only_for_a_speech_model_run(snapshot: Any) -> None:
    """A fine-tune keeps them as a note (no dataset size is read from audio yet); a language model gets a note."""
    from bot.parse import parse

    run = parse("transcribe 500 hours of audio with whisper large v3", snapshot=snapshot)
    assert run.audio_hours == 500 and not run.ignored and run.deadline_hours is None
    tune = parse("fine-tune whisper large v3 on 100 hours of audio", snapshot=snapshot)
    assert tune.audio_hours is None and tune.deadline_hours is None and "100 hours of audio" in tune.ignored[0]
    other = parse("Llama 3 8B on 30 minutes of video within 2 days", snapshot=snapshot)
    assert other.deadline_hours == 48 and other.audio_hours is None and "30 minutes of video" in other.ignored[0]
