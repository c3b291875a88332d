"""Comparing GPUs for a serving or running workload: tokens/s and $ per million output tokens, not "per job".

Arithmetic for the 50-user case, from Llama 3.1 70B's config (80 layers, 8 KV heads, head dim 128, 70.6e9
parameters): KV cache 2 x 80 x 8 x 128 x 2 B = 320 KiB a token, so 50 users at 4,096 tokens hold 62.5 GiB.
FP8 weights (65.7 GiB) + that = 128.2 GiB: over the 72 and 126.9 GiB vLLM claims of one 80 GB H100 and one
141 GB H200 (0.9 of each). 4-bit weights (~37 GiB) + 62.5 = ~100 GiB: two H100s or one H200. The H200's own
plan is that one card in 4-bit, so both are compared in 4-bit, the most precise format that costs neither
more cards.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
import json

from bot.answer.pipeline import answer

NOW = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)


def _text(reply: Any) -> str:
    return json.dumps(reply.blocks, ensure_ascii=False)


def test_serving_comparison_decides_on_tokens_and_their_price(snapshot: Any) -> None:
    reply = answer("H100 vs H200 for serving llama 3.1 70b to 50 users", snapshot=snapshot, now=NOW, lang="en")
    assert reply.kind == "comparison"
    text = _text(reply)
    assert "per job" not in text and "no time or price" not in text
    assert text.count("per million output tokens") >= 3  # both fit lines and the verdict's reason
    assert "tokens/s" in text
    # compared in one format, the H200 on one card and the H100 on two (see the arithmetic above)
    assert "H100 SXM 80GB*: fits on 2× GPU in AWQ 4-bit" in text and "H200 SXM 141GB*: fits on 1× GPU in AWQ 4-bit" in text


def test_running_comparison_in_another_language(snapshot: Any) -> None:
    reply = answer("4090 vs 3090 to run llama 3.1 8b", snapshot=snapshot, now=NOW, lang="ja")
    text = _text(reply)
    assert "トークン/秒" in text and "100 万トークンあたり" in text and "ジョブあたり" not in text
    # the 4090 reads memory faster (1,008 vs 936 GB/s, NVIDIA specs): decode is bandwidth-bound, so it wins on speed
    assert "GeForce RTX 4090* —" in text and "出力トークン/秒が" in text


def test_cards_compared_in_one_format_without_more_cards(snapshot: Any) -> None:
    """Llama 3.1 8B in 16 bits is 8.03e9 x 2 B = 15.0 GiB: over a T4's usable memory, so the T4 runs it in 8-bit
    on its one card, and the A100 is compared in 8-bit too rather than the T4 in 16 bits on two cards."""
    reply = answer("T4 vs A100 80GB to run llama 3.1 8b", snapshot=snapshot, now=NOW, lang="en")
    text = _text(reply)
    assert text.count("fits on 1× GPU in 8-bit") == 2 and "BF16" not in text.split("Fit for this job")[1]


def test_a_training_comparison_still_costs_jobs(snapshot: Any) -> None:
    reply = answer("4090 vs 3090 for LoRA on llama 3.1 8b", snapshot=snapshot, now=NOW, lang="en")
    text = _text(reply)
    assert "per job" in text and "per million output tokens" not in text
