"""The card asks for a dataset size only when a size would give the plan its time and cost."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.answer.pipeline import answer

NOW = datetime(2026, 11, 26, tzinfo=UTC)
ASK = "Tell me the dataset size"


def test_diffusion_training_is_not_asked_for_a_size_it_cannot_use(snapshot: Any) -> None:
    reply = answer("cheapest GPU for SDXL LoRA with 30 images", snapshot=snapshot, now=NOW, lang="en")
    assert reply.verdict is not None
    assert "time.not_estimated" in {f.code for f in reply.verdict.findings}
    assert ASK not in str(reply.blocks)


def test_an_llm_fine_tune_without_a_size_is_asked_for_one(snapshot: Any) -> None:
    reply = answer("LoRA fine-tune llama 3 8b", snapshot=snapshot, now=NOW, lang="en")
    assert ASK in str(reply.blocks)
    sized = answer("LoRA fine-tune llama 3 8b on 20M tokens", snapshot=snapshot, now=NOW, lang="en")
    assert ASK not in str(sized.blocks)
