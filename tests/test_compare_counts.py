""""2x 3090 vs 1x 4090 for running Llama 70B": each GPU is compared at the count the user gave it.

Arithmetic, not the card's output: Llama 3.3 70B in GGUF Q4_K_M is 70.55e9 x 4.85 / 8 = 39.8 GiB of weights,
more than one 24 GB card's 22.8 GiB usable, about 20 GiB per card over two.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.answer.pipeline import answer

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def _fit_lines(text: str, snapshot: Any) -> list[str]:
    out = answer(text, snapshot=snapshot, now=NOW).terminal().splitlines()
    start = next(i for i, line in enumerate(out) if line.startswith("Fit for this job"))
    return [line for line in out[start + 1:start + 3]]


def test_each_gpu_at_its_own_count(snapshot: Any) -> None:
    lines = _fit_lines("2x 3090 vs 1x 4090 for running llama 70b", snapshot)
    three, four = lines
    assert three.startswith("✅ GeForce RTX 3090: fits on 2× GPU")
    assert four.startswith("❌ GeForce RTX 4090: needs") and "on 1×" in four


def test_without_counts_each_gpu_gets_its_own_plan(snapshot: Any) -> None:
    lines = _fit_lines("3090 vs 4090 for running llama 70b", snapshot)
    assert all(line.startswith("✅") for line in lines)
