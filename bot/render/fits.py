"""The comparison card's decided parts in words: each GPU's fit (with the safety margin named), the verdict for
the workload, or, without one, what each GPU is best at."""

from __future__ import annotations

from collections.abc import Sequence

from bot.render.findings import format_number, precision_label, reject_text
from bot.render.formats import Formatter
from bot.render.views import ComparisonView, FitLine


def fit_lines(lines: Sequence[FitLine], f: Formatter) -> list[str]:
    out = []
    for line in lines:
        margin = _margin(line, f)
        if line.count is not None and line.tokens_per_s is not None:
            out.append(f.messages.text(
                "compare.fit.serving", gpu=line.gpu_name, count=line.count,
                precision=precision_label(line.precision or "", f), memory=f.gib(line.memory_gib),
                tokens=f.number(line.tokens_per_s),
                per_million=f.money(line.usd_per_million_tokens) if line.usd_per_million_tokens is not None else "—"))
            continue
        if line.count is not None:
            values = dict(gpu=line.gpu_name, count=line.count, memory=f.gib(line.memory_gib), hours=f.hours(line.hours),
                          cost=f.money(line.cost_usd))
            if margin is None:
                out.append(f.messages.text("compare.fit.yes", **values))
            elif line.gpu_share is not None:  # a Mac: the rest is what macOS keeps for itself, not a margin
                out.append(f.messages.text("compare.fit.yes.unified", **values, **margin,
                                           share=f.percent(line.gpu_share)))
            else:
                out.append(f.messages.text("compare.fit.yes.margin", **values, **margin))
            continue
        # a memory rejection names the usable memory and the safety margin itself (bot.render.findings.with_margin)
        reason = reject_text(line.reason_code or "other", line.reason_numbers or {}, f, gpu=line.gpu_name)
        out.append(f.messages.compose("compare.fit.no", reason=reason))
    return out


def _margin(line: FitLine, f: Formatter) -> dict[str, str] | None:
    """usable / margin / vram, when the plan's usable memory is known: the rest of the card is kept free."""
    if line.vram_gb is None or line.usable_gib is None or line.usable_gib >= line.vram_gb:
        return None
    return {"usable": f.gib(line.usable_gib), "margin": f.gib(line.vram_gb - line.usable_gib), "vram": f.gb(line.vram_gb)}


def workload_label(view: ComparisonView, f: Formatter) -> str:
    """"Llama 3.1 70B · LoRA": the compared workload with its method in the card's language."""
    if view.workload is None:
        return ""
    model, method = view.workload
    key = f"method.{method}"
    return f"{model} · {f.messages.plain(key)}" if method and f.messages.has(key) else model


def verdict_line(view: ComparisonView, f: Formatter) -> str:
    """"For Llama 3.1 70B · LoRA: H200 — fits on 1 vs 2 GPUs, 31 % cheaper per job (vs H100)"."""
    verdict = view.verdict
    if verdict is None:
        return ""
    names = {c.gpu.id: c.gpu.name for c in view.columns}
    workload = workload_label(view, f)
    if verdict.outcome == "none_fit" or verdict.winner is None:
        return f.messages.text("compare.verdict.none", workload=workload)
    if verdict.outcome == "only_fit" or verdict.runner_up is None:
        return f.messages.text("compare.verdict.only", workload=workload, gpu=names[verdict.winner],
                               count=verdict.numbers.get("count", 1))
    n = verdict.numbers
    reasons = []
    serving = {line.gpu_name: line.tokens_per_s for line in view.fit if line.tokens_per_s}
    for code in verdict.reasons:
        if code in ("fewer_gpus", "more_gpus"):
            reasons.append(f.messages.plain(f"compare.reason.{code}", count=n["count"], other_count=n["other_count"]))
        elif code == "cheaper" and serving:
            reasons.append(f.messages.plain("compare.reason.cheaper.serving", pct=f.percent(float(n["cheaper_pct"]) / 100)))
        elif code == "faster" and names[verdict.winner] in serving and names[verdict.runner_up] in serving:
            ratio = serving[names[verdict.winner]] / serving[names[verdict.runner_up]]
            if ratio >= 2:  # "11x the tokens/s", not "1,043% more"
                reasons.append(f.messages.plain("compare.reason.faster.serving_times", ratio=f.number(round(ratio))))
            else:
                reasons.append(f.messages.plain("compare.reason.faster.serving", pct=f.percent(round(ratio - 1, 2))))
        elif code in ("cheaper", "faster", "slower"):
            reasons.append(f.messages.plain(f"compare.reason.{code}", pct=f.percent(float(n[f"{code}_pct"]) / 100)))
        else:
            reasons.append(f.messages.plain(f"compare.reason.{code}"))
    return f.messages.text("compare.verdict.pick", workload=workload, gpu=names[verdict.winner],
                           other=names[verdict.runner_up], reasons=f.messages.plain("common.list_sep").join(reasons))


def strength_lines(view: ComparisonView, f: Formatter) -> list[str]:
    """Without a workload: per GPU, the catalog facts in which it leads the others (or that it leads in none)."""
    if view.strengths is None:
        return []
    out = []
    for column in view.columns:
        facts = [f.messages.plain(f"compare.strength.{s.code}",
                                  **{k: format_number(k, v, f) for k, v in s.numbers.items()})
                 for s in view.strengths.get(column.gpu.id, ())]
        text = f.messages.plain("common.list_sep").join(facts) if facts else f.messages.plain("compare.strength.none")
        out.append(f.messages.text("compare.strengths.line", gpu=column.gpu.name, strengths=text))
    return out
