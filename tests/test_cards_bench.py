"""Benchmark (printed, not asserted on speed): render time per card, whole-pipeline time, largest card vs limits.

Run: pytest tests/test_cards_bench.py -s -q
"""

from __future__ import annotations

import json
import platform
import statistics
import time
from datetime import UTC, datetime
from typing import Any

from bot.answer.pipeline import answer
from bot.render.cards import render_card
from bot.render.limits import MAX_BLOCKS, MAX_PAYLOAD_CHARS, MAX_SECTION_TEXT, check_message
from bot.render.messages import LANGUAGES
from test_cards_samples import card_samples

NOW = datetime(2025, 6, 3, tzinfo=UTC)


def _timed(fn: Any, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)


def _p99(times: list[float]) -> float:
    return times[min(len(times) - 1, int(len(times) * 0.99))]


def test_render_benchmark_and_largest_card() -> None:
    samples = card_samples()
    largest: tuple[int, str] = (0, "")
    per_kind: dict[str, list[float]] = {}
    for name, (kind, view, now) in samples.items():
        for lang in LANGUAGES:
            times = _timed(lambda: render_card(kind, view, lang, now=now), 20)
            per_kind.setdefault(kind, []).extend(times)
            message = render_card(kind, view, lang, now=now).message()
            size = len(json.dumps(message, ensure_ascii=False))
            largest = max(largest, (size, f"{name}.{lang} ({len(message['blocks'])} blocks, longest section "
                                          f"{_longest_section(message)} chars)"))
            assert check_message(message) == []
    print(f"\nmachine: {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    for kind, times in sorted(per_kind.items()):
        times.sort()
        print(f"render {kind:15s} median {statistics.median(times):6.2f} ms  p99 {_p99(times):6.2f} ms")
    print(f"largest card: {largest[1]}: {largest[0]} chars of JSON (our cap {MAX_PAYLOAD_CHARS}; "
          f"limits {MAX_BLOCKS} blocks, {MAX_SECTION_TEXT} chars per section)")


def _longest_section(message: dict[str, Any]) -> int:
    return max((len(b["text"]["text"]) for b in message["blocks"] if b["type"] == "section" and "text" in b),
               default=0)


def test_pipeline_benchmark(snapshot: Any) -> None:
    questions = ["fine-tune 13B with QLoRA on a budget", "用QLoRA微调Qwen2.5-14B，预算有限，用什么卡？",
                 "compare H100 vs H200 vs MI300X", "price 4090", "specs L40S"]
    for q in questions:  # warm caches (rule tables, KB, templates)
        answer(q, snapshot=snapshot, now=NOW)
    for q in questions:
        times = _timed(lambda: answer(q, snapshot=snapshot, now=NOW), 30)
        print(f"answer {q[:40]!r:44s} median {statistics.median(times):7.2f} ms  p99 {_p99(times):7.2f} ms"
              f"  ({snapshot.offer_count} offers, {len(snapshot.gpus)} GPUs)")
