"""The DESIGN §8 budgets and which of them a bench result meets."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.bench.result import BudgetRow


@dataclass(frozen=True, slots=True)
class Budget:
    name: str
    what: str
    limit: float
    unit: str
    path: tuple[str, ...]  # where the measured value sits in the result


# DESIGN §8 as raised by issue 20.
ANSWER_P99_MS = 2.0
BUDGETS = (
    Budget("answer_10k", "answer p99, 10,000 offers", ANSWER_P99_MS, "ms", ("answer_ms", "p99")),
    Budget("answer_100k", "answer p99, 100,000 offers (1.5x)", 1.5 * ANSWER_P99_MS, "ms", ("answer_ms_100k", "p99")),
    Budget("http_c50", "HTTP ack p99, 50 clients", 25.0, "ms", ("http", "c50", "p99_ms")),
    Budget("digest_100k", "digest, 100,000 observations", 1.0, "s", ("digest_100k_s",)),
    Budget("digest_1m", "digest, 1,000,000 observations", 1.0, "s", ("digest_1m_s",)),
    Budget("start", "start to first answer (CLI)", 0.6, "s", ("start_s",)),
    Budget("start_http", "start to accepting (HTTP server)", 0.6, "s", ("start_http_s",)),
    Budget("rss", "peak resident memory", 150.0, "MB", ("rss_mb",)),
    # accepted - answered + doubled over every backend of the SIGKILL run: 0 = nothing lost, nothing doubled.
    Budget("queue_kill9", "kill -9 mid-burst: lost + doubled", 0.0, "answers", ("queue", "kill9", "lost_or_doubled")),
)


def measured(result: Mapping[str, object], path: tuple[str, ...]) -> float | None:
    value: object = result
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return float(value) if isinstance(value, int | float) else None


def judge(result: Mapping[str, object]) -> list[BudgetRow]:
    """One row per budget: measured value, limit, and "pass", "miss" or "not measured"."""
    rows: list[BudgetRow] = []
    for budget in BUDGETS:
        value = measured(result, budget.path)
        verdict = "not measured" if value is None else "pass" if value <= budget.limit else "miss"
        rows.append(BudgetRow(budget=budget.name, what=budget.what, value=value, limit=budget.limit,
                              unit=budget.unit, verdict=verdict))
    return rows
