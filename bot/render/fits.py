"""Fit lines for the comparison card: ✅ a plan with memory/time/cost, or ❌ the engine's reason."""

from __future__ import annotations

from collections.abc import Sequence

from bot.render.findings import reject_text
from bot.render.formats import Formatter
from bot.render.views import FitLine


def fit_lines(lines: Sequence[FitLine], f: Formatter) -> list[str]:
    out = []
    for line in lines:
        if line.count is not None:
            out.append(f.messages.text(
                "compare.fit.yes", gpu=line.gpu_name, count=line.count, memory=f.gib(line.memory_gib),
                hours=f.hours(line.hours), cost=f.money(line.cost_usd),
            ))
        else:
            reason = reject_text(line.reason_code or "other", line.reason_numbers or {}, f, gpu=line.gpu_name)
            out.append(f.messages.compose("compare.fit.no", reason=reason))
    return out
