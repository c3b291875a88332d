"""Where the time goes when a budget is missed: cProfile over a callable, top functions by own time."""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable
from pathlib import Path

from bot.bench.result import ProfileRow

_ROOT = str(Path(__file__).resolve().parents[2])


def _where(filename: str, line: int, name: str) -> str:
    short = filename.removeprefix(_ROOT + "/") if filename.startswith(_ROOT) else Path(filename).name
    return f"{short}:{line}({name})"


def _rows(work: Callable[[], object]) -> list[ProfileRow]:
    """Run `work` under cProfile: one row per function with calls, own and cumulative milliseconds."""
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        work()
    finally:
        profiler.disable()
    stats = pstats.Stats(profiler)
    return [
        ProfileRow(where=_where(filename, line, name), calls=calls,
                   own_ms=round(own_s * 1000, 1), cumulative_ms=round(cumulative_s * 1000, 1))
        for (filename, line, name), (_, calls, own_s, cumulative_s, _) in stats.stats.items()  # type: ignore[attr-defined]  # typeshed omits Stats.stats, the table pstats prints from
    ]


def profile(work: Callable[[], object], *, top: int = 12) -> list[ProfileRow]:
    """The `top` functions by own time, with cumulative time and calls."""
    return sorted(_rows(work), key=lambda r: r["own_ms"], reverse=True)[:top]


def cumulative(work: Callable[[], object], *, prefix: tuple[str, ...] = ("bot/", "rules/", "knowledge/"),
               top: int = 12) -> list[ProfileRow]:
    """Like `profile`, ranked by cumulative time and limited to the project's own functions."""
    own = [r for r in _rows(work)
           if r["where"].startswith(prefix) and not r["where"].startswith(("bot/bench/", "bot/cli/bench.py"))]
    return sorted(own, key=lambda r: r["cumulative_ms"], reverse=True)[:top]
