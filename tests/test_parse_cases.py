"""The parse case table: real-style requests in eight languages and the fields each must yield.

Expected values are what the text says, written by hand: sizes as stated ("7B" -> 7, checked to
within 15% of a preset's exact count), budgets in the currency written (converted here with the
lexicon's dated rates), GPUs as catalog ids ("?a100" = must be ambiguous, "!x" = must be unknown).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bot.parse import Ask, parse
from bot.parse.vocabulary import load_vocabulary
from test_parse import catalog_snapshot  # noqa: F401  (fixture)

CASES = Path(__file__).parent / "cases" / "parse_cases.jsonl"
PARAMS_TOLERANCE = 0.15  # "7B" names a 6.74B preset; "70B" a 70.55B one
MONEY_TOLERANCE = Decimal("0.01")


def load_cases(path: Path = CASES) -> list[dict[str, Any]]:
    cases = []
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            case = json.loads(line)
            case["id"] = f"{case['lang']}-{line_no}"
            cases.append(case)
    return cases


def _usd(pair: list[Any]) -> Decimal:
    amount, code = pair
    return Decimal(str(amount)) * load_vocabulary().usd_per_unit[code]


def _gpu_label(ask: Ask) -> list[str]:
    out = []
    for g in ask.gpus:
        if g.status == "found":
            out.append(str(g.gpu_id))
        else:
            out.append(("?" if g.status == "ambiguous" else "!") + g.query)
    return out


def check_field(ask: Ask, field: str, want: Any) -> bool:
    """Whether one expected field holds; each rule says how loosely a number may match.

    An expected `null` means the text does not say it (e.g. "training takes 10 hours" is no deadline).
    """
    if want is None:
        return _got(ask, field) in (None, [])
    if field == "params_b":
        return ask.params_b is not None and abs(ask.params_b - want) <= PARAMS_TOLERANCE * want
    if field == "model":
        return (ask.model.model_id if ask.model else None) == want
    if field == "gpus":
        got = _gpu_label(ask)
        return len(got) == len(want) and all(
            g[0] == w[0] and w[1:] in g[1:] if w[0] in "?!" else g == w for g, w in zip(got, want)
        )
    if field in ("budget_total", "budget_per_hour"):
        got = ask.budget.usd_total if field == "budget_total" else ask.budget.usd_per_hour
        return got is not None and abs(got - _usd(want)) <= max(MONEY_TOLERANCE, _usd(want) * Decimal("0.005"))
    if field == "qualitative":
        return ask.budget.qualitative == want
    if field == "clarify":
        kinds = [kind for kind, _ in ask.clarifications]
        return all(k in kinds for k in want)
    if field == "dataset_tokens":
        return ask.dataset_tokens is not None and abs(ask.dataset_tokens - want) <= 0.01 * want
    if field in ("deadline_hours", "epochs"):
        value = getattr(ask, field)
        return value is not None and abs(value - want) < 1e-6
    return getattr(ask, field) == want


def run_cases(
    snapshot: Any, path: Path = CASES
) -> tuple[list[str], Counter[str], Counter[str], Counter[str], Counter[str]]:
    failures: list[str] = []
    lang_ok, lang_all, field_ok, field_all = Counter[str](), Counter[str](), Counter[str](), Counter[str]()
    for case in load_cases(path):
        ask = parse(case["text"], snapshot=snapshot)
        expect = {"language": case["lang"], **case["expect"]}
        wrong = [f for f, want in expect.items() if not check_field(ask, f, want)]
        for f in expect:
            field_all[f] += 1
            field_ok[f] += f not in wrong
        lang_all[case["lang"]] += 1
        lang_ok[case["lang"]] += not wrong
        if wrong:
            got = {f: _got(ask, f) for f in wrong}
            failures.append(f"{case['id']}: {case['text'][:70]!r} wrong {got} want {{{', '.join(f'{f}: {expect[f]}' for f in wrong)}}}")
    return failures, lang_ok, lang_all, field_ok, field_all


def _got(ask: Ask, field: str) -> Any:
    if field == "gpus":
        return _gpu_label(ask)
    if field == "model":
        return ask.model.model_id if ask.model else None
    if field == "budget_total":
        return ask.budget.usd_total
    if field == "budget_per_hour":
        return ask.budget.usd_per_hour
    if field == "qualitative":
        return ask.budget.qualitative
    if field == "clarify":
        return ask.clarifications
    return getattr(ask, field)


def print_accuracy(title: str, failures: list[str], lang_ok: Counter[str], lang_all: Counter[str],
                   field_ok: Counter[str], field_all: Counter[str]) -> None:
    print(f"\n{title} by language (cases with every field right):")
    for lang in sorted(lang_all):
        print(f"  {lang:8} {lang_ok[lang]:4}/{lang_all[lang]:<4} {100 * lang_ok[lang] / lang_all[lang]:5.1f}%")
    print(f"{title} by field:")
    for f in sorted(field_all):
        print(f"  {f:16} {field_ok[f]:4}/{field_all[f]:<4} {100 * field_ok[f] / field_all[f]:5.1f}%")
    for line in failures:
        print("  FAIL", line)


def test_case_table_has_enough_real_requests() -> None:
    cases = load_cases()
    langs = Counter(c["lang"] for c in cases)
    assert len(cases) >= 260
    for lang in ("en", "zh-Hans", "zh-Hant", "ko", "ja", "es", "de", "fr", "vi"):
        assert langs[lang] >= 10, f"only {langs[lang]} cases in {lang}"


def test_case_table(catalog_snapshot: Any, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    failures, lang_ok, lang_all, field_ok, field_all = run_cases(catalog_snapshot)
    with capsys.disabled():
        print_accuracy("parse accuracy", failures, lang_ok, lang_all, field_ok, field_all)
    assert not failures, f"{len(failures)} cases misread (listed above)"


def _percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def test_parse_benchmark(catalog_snapshot: Any, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    """Prints p50/p99 per request over the case table (a benchmark, not a timing assertion).

    Times are CPU time of this thread (time.thread_time_ns), so waiting for the CPU on a shared
    machine is not counted; cache and core contention still is. "steady" takes each request's
    fastest of 5 runs; "raw" is every run. "cold lookups" clears the memo of catalog lookups
    before each request (a name nobody asked before), one run each.
    """
    import os

    from bot.parse.lookup import clear_memo

    texts = [c["text"] for c in load_cases()]
    for text in texts:  # warm caches and compiled patterns
        parse(text, snapshot=catalog_snapshot)
    raw: list[float] = []
    steady: list[float] = []
    for text in texts:
        runs = []
        for _ in range(5):
            start = time.thread_time_ns()
            parse(text, snapshot=catalog_snapshot)
            runs.append((time.thread_time_ns() - start) / 1e6)
        raw += runs
        steady.append(min(runs))
    cold: list[float] = []
    for text in texts:
        clear_memo()
        start = time.thread_time_ns()
        parse(text, snapshot=catalog_snapshot)
        cold.append((time.thread_time_ns() - start) / 1e6)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    with capsys.disabled():
        for name, values in (("steady", steady), ("raw", raw), ("cold lookups", cold)):
            p50, p99 = _percentiles(values)
            print(f"\nparse benchmark ({name}, CPU time, {len(values)} parses, {os.cpu_count()} CPUs, load {load:.1f}): "
                  f"p50 {p50:.3f} ms, p99 {p99:.3f} ms, max {max(values):.3f} ms", end="")
        print()
