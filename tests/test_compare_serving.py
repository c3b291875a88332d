"""Comparing GPUs for a serving or running workload: tokens/s and $ per million output tokens, not "per job".

Arithmetic for the 50-user case, from Llama 3.1 70B's config (80 layers, 8 KV heads, head dim 128, 70.6e9
parameters): FP8 weights 70.6e9 B = 65.7 GiB; KV cache 2 x 80 x 8 x 128 x 2 B = 320 KiB a token, so 50 users at
4,096 tokens hold 62.5 GiB. 128 GiB do not fit one 80 GB H100 in FP8; they nearly fit one 141 GB H200.
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
    # one H200 holds what takes two H100s (see the arithmetic above)
    assert "H200 SXM 141GB* — fits on 1 vs 2 GPUs" in text


def test_running_comparison_in_another_language(snapshot: Any) -> None:
    reply = answer("4090 vs 3090 to run llama 3.1 8b", snapshot=snapshot, now=NOW, lang="ja")
    text = _text(reply)
    assert "トークン/秒" in text and "100 万トークンあたり" in text and "ジョブあたり" not in text
    # the 4090 reads memory faster (1,008 vs 936 GB/s, NVIDIA specs): decode is bandwidth-bound, so it wins on speed
    assert "GeForce RTX 4090* —" in text and "出力トークン/秒が" in text


def test_a_training_comparison_still_costs_jobs(snapshot: Any) -> None:
    reply = answer("4090 vs 3090 for LoRA on llama 3.1 8b", snapshot=snapshot, now=NOW, lang="en")
    text = _text(reply)
    assert "per job" in text and "per million output tokens" not in text
