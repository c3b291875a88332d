"""The instruction count's bookkeeping: which callgrind dumps are the measured requests (the count itself runs
under Valgrind for minutes: `python -m bot.bench.instructions`, docs/BENCHMARKS.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.bench import instructions


def _dump(directory: Path, name: str, total: int) -> None:
    # the head of a real callgrind dump (valgrind 3.19), with its totals line
    (directory / name).write_text(f"# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npart: 1\n"
                                  f"events: Ir\nsummary: {total}\n\nfl=x\nfn=y\n0 {total}\ntotals: {total}\n",
                                  encoding="utf-8")


def test_the_last_dumps_in_numeric_order_are_the_requests(tmp_path: Path) -> None:
    for number, total in ((1, 475), (2, 475), (3, 900), (10, 7000), (11, 12000)):
        _dump(tmp_path, f"cg.out.{number}", total)
    _dump(tmp_path, "cg.out", 0)  # written at exit, without a number: never a request
    # 10 sorts after 3 (numbers, not text); the two start-up dumps before the three requests are dropped
    assert instructions.read_counts(tmp_path, "cg.out", 3) == [900, 7000, 12000]
    assert instructions.read_counts(tmp_path, "cg.out", 5) == [475, 475, 900, 7000, 12000]


def test_too_few_dumps_is_an_error_not_a_short_list(tmp_path: Path) -> None:
    _dump(tmp_path, "cg.out.1", 100)
    with pytest.raises(SystemExit, match="expected 2 callgrind dumps, found 1"):
        instructions.read_counts(tmp_path, "cg.out", 2)


def test_without_valgrind_it_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(instructions.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="valgrind is not installed"):
        instructions.count(limit=1)
