"""Issue 15's mechanisms on requests written for this table (not taken from the request corpus).

Each line of tests/cases/parse_requests.jsonl is a request in the words people use (counts after the
name, machines times GPUs, memory-only GPUs, RL and pretraining by context, follow-ups, serving numbers)
and the fields a careful reader takes from it. Fields as in parse_cases.jsonl, plus `gpu_classes`: the
[memory_gb, segment] of each GPU described by memory or class only, and `gpu_count_range`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.parse import Ask, parse
from test_parse import catalog_snapshot  # noqa: F401  (fixture)
from test_parse_cases import check_field, load_cases

CASES = Path(__file__).parent / "cases" / "parse_requests.jsonl"


def _classes(ask: Ask) -> list[list[Any]]:
    return [[g.memory_gb, g.segment] for g in ask.gpus if g.status == "class"]


def _right(ask: Ask, field: str, want: Any) -> bool:
    if field == "gpu_classes":
        return _classes(ask) == want
    if field == "gpu_count_range":
        return (list(ask.gpu_count_range) if ask.gpu_count_range else None) == want
    if field == "gpus":  # the named GPUs; memory-only ones are checked by gpu_classes
        named = Ask(ask.intent, ask.language, ask.text, gpus=tuple(g for g in ask.gpus if g.status != "class"))
        return check_field(named, field, want)
    if field in ("follow_up",):
        return getattr(ask, field) is want
    return check_field(ask, field, want)


def test_issue15_requests(catalog_snapshot: Any) -> None:  # noqa: F811
    cases = load_cases(CASES)
    assert len(cases) >= 50
    misses = []
    for case in cases:
        ask = parse(case["text"], snapshot=catalog_snapshot)
        wrong = {f: w for f, w in {"language": case["lang"], **case["expect"]}.items() if not _right(ask, f, w)}
        if wrong:
            misses.append(f"{case['id']}: {case['text'][:60]!r} want {wrong}")
    assert not misses, "\n".join(misses)
