"""In-process answers over the bundled corpus: parse, resolve, evaluate the catalog, render."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from typing import TYPE_CHECKING

from bot.bench.result import AnswerTimes

if TYPE_CHECKING:
    from knowledge.snapshot import Snapshot

log = logging.getLogger(__name__)
NOW = datetime(2025, 6, 3, 12, 0, tzinfo=UTC)  # a fixed clock: the same cards on every run


@dataclass(frozen=True, slots=True)
class Request:
    lang: str
    text: str


def load_corpus() -> tuple[Request, ...]:
    """The mixed-language corpus shipped with the package (real phrasings from the parse and KB cases)."""
    raw = resources.files("bot.bench").joinpath("corpus.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in raw.splitlines() if line.strip()]
    return tuple(Request(str(r["lang"]), str(r["text"])) for r in rows)


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (the value at rank ceil(pct/100 · n)); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * pct // 100))
    return ordered[int(min(rank, len(ordered))) - 1]


def time_answers(snapshot: Snapshot, corpus: tuple[Request, ...], *, rounds: int = 1) -> AnswerTimes:
    """One warm-up pass, then `rounds` timed passes: p50/p99 ms per request, and the card kinds seen."""
    from bot.answer.pipeline import answer

    kinds: dict[str, int] = {}
    for request in corpus:
        kind = answer(request.text, snapshot=snapshot, now=NOW).kind
        kinds[kind] = kinds.get(kind, 0) + 1
    times: list[float] = []
    cpu: list[float] = []
    for _ in range(rounds):
        for request in corpus:
            started, cpu_started = time.perf_counter(), time.thread_time()
            answer(request.text, snapshot=snapshot, now=NOW)
            cpu.append((time.thread_time() - cpu_started) * 1000)
            times.append((time.perf_counter() - started) * 1000)
    return {
        "p50": round(percentile(times, 50), 3),
        "p99": round(percentile(times, 99), 3),
        "max": round(max(times), 3),
        "cpu_p50": round(percentile(cpu, 50), 3),
        "cpu_p99": round(percentile(cpu, 99), 3),
        "requests": len(times),
        "offers": snapshot.offer_count,
        "kinds": dict(sorted(kinds.items())),
    }


def slowest(snapshot: Snapshot, corpus: tuple[Request, ...], count: int = 5) -> list[tuple[float, str]]:
    """The `count` slowest requests (ms, text), best of three tries each."""
    from bot.answer.pipeline import answer

    best: list[tuple[float, str]] = []
    for request in corpus:
        tries = []
        for _ in range(3):
            started = time.perf_counter()
            answer(request.text, snapshot=snapshot, now=NOW)
            tries.append((time.perf_counter() - started) * 1000)
        best.append((round(min(tries), 2), request.text))
    return sorted(best, reverse=True)[:count]
