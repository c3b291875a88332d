"""What a serving card says must hold for the model asked about: no context the model cannot read, no launch
line an engine cannot run.

Limits from the models' configs (knowledge/data/models.csv cites them): Whisper's decoder reads 448 tokens
(max_target_positions), Llama 3 8B 8,192 (max_position_embeddings), Llama 3.1 8B 131,072.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.answer.pipeline import answer

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def _codes(reply: Any) -> dict[str, Any]:
    return {f.code: f for f in reply.verdict.findings}


def test_whisper_gets_no_llm_launch_line_and_no_context_growth(snapshot: Any) -> None:
    reply = answer("transcribe 1000 hours of audio with whisper large v3, which gpu", snapshot=snapshot, now=NOW)
    assert reply.verdict is not None and reply.verdict.command is None
    codes = _codes(reply)
    assert "command.speech" in codes and "serving.context_growth" not in codes
    text = reply.terminal()
    assert "llama-server" not in text and "at 128k" not in text and "whisper.cpp or faster-whisper" in text


def test_context_growth_stops_at_the_models_longest_context(snapshot: Any) -> None:
    """Llama 3 8B reads 8,192 tokens: memory at 32k and 128k would describe a context no engine accepts."""
    numbers = _codes(answer("Can I serve Llama 3 8B on my T4?", snapshot=snapshot, now=NOW))[
        "serving.context_growth"].numbers
    assert "needed_gib_4k" in numbers and "needed_gib_32k" not in numbers and "needed_gib_128k" not in numbers
    longer = _codes(answer("run llama 3.1 8b on a 4090", snapshot=snapshot, now=NOW))["serving.context_growth"].numbers
    assert {"needed_gib_4k", "needed_gib_32k", "needed_gib_128k"} <= set(numbers) | set(longer)
    assert longer["needed_gib_4k"] < longer["needed_gib_32k"] < longer["needed_gib_128k"]


def test_the_short_form_is_worded_without_the_missing_steps(snapshot: Any) -> None:
    text = answer("Can I serve Llama 3 8B on my T4?", snapshot=snapshot, now=NOW).terminal()
    line = next(line for line in text.splitlines() if "No context given" in line)
    assert "at 32k" not in line and "fp8 KV cache saves" in line
