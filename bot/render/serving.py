"""The serving/running card's localized pieces: the verdict for the user's hardware, the precision fit matrix,
plans with tokens/s and $ per million tokens, and the launch command.

Everything decided arrives in the `Verdict` (rules.plans.serving_verdict); these functions only word it.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.render.advice import PINNED_CODES, RecommendationView, bars, gpu_name, provider_label, read_as_line
from bot.render.filters import format_table
from bot.render.findings import coded_text, precision_label
from bot.render.formats import Formatter
from rules.verdict import Pinned, Throughput

PRECISION_ORDER = ("bf16", "fp16", "fp8", "int8", "int4", "nf4", "awq", "gptq", "mxfp4", "nvfp4", "exl2")


def tokens_rate(value: float, f: Formatter) -> str:
    """A tokens/s figure with the digits it needs: 0.39 and 4.2 stay readable, 1,263 needs none ("≈ 0" for
    405B offloaded to system RAM said nothing)."""
    return f.number(value, 2 if value < 1 else 1 if value < 10 else 0)


def _rates(tp: Throughput, f: Formatter) -> str:
    if tp.concurrency <= 1:
        return f.messages.plain("srv.rates_single", per_user=tokens_rate(tp.output_tokens_per_s_per_user, f),
                                low=tokens_rate(tp.low_tokens_per_s, f), high=tokens_rate(tp.high_tokens_per_s, f))
    return f.messages.plain(
        "srv.rates", per_user=tokens_rate(tp.output_tokens_per_s_per_user, f), users=f.number(tp.concurrency),
        total=tokens_rate(tp.output_tokens_per_s, f), low=tokens_rate(tp.low_tokens_per_s, f),
        high=tokens_rate(tp.high_tokens_per_s, f))


def pinned_text(view: RecommendationView, pinned: Pinned, f: Formatter) -> str:
    names = dict(count=pinned.count, gpu=gpu_name(view, pinned.gpu), model=view.model_label,
                 precision=precision_label(pinned.precision, f), needed=f.gib(pinned.needed_gib),
                 has=f.gib(pinned.has_gib), offload=f.gib(pinned.offload_gib))
    if pinned.fits:
        line = f.messages.text("srv.pinned.yes", **names)
    elif pinned.offload_gib > 0 and pinned.throughput is not None:
        line = f.messages.text("srv.pinned.offload", **names)
    else:
        line = f.messages.text("srv.pinned.no", **names)
    if pinned.throughput is not None:
        rates = _rates(pinned.throughput, f)
        line = f"{rates}\n{line}" if view.speed_first and pinned.fits else f"{line}\n{rates}"
    return line


def _gpu_name(view: RecommendationView, numbers: Mapping[str, object]) -> dict[str, str]:
    return {"gpu": gpu_name(view, str(numbers["gpu"]))} if "gpu" in numbers else {}


def verdict_text(view: RecommendationView, f: Formatter) -> str:
    """The answer first: the named hardware's verdict, then the best plan (or why nothing fits)."""
    verdict = view.verdict
    lines = [line for line in (read_as_line(view, f),) if line]
    if verdict.pinned is not None:
        lines.append(pinned_text(view, verdict.pinned, f))
    pinned_findings = sorted((x for x in verdict.findings if x.code in PINNED_CODES),
                             key=lambda x: (PINNED_CODES.index(x.code),
                                            float(x.numbers.get("gpus", 0)) if x.code == "pinned.more_gpus" else 0.0))
    lines += [coded_text("finding", x.code, x.numbers, f, **_gpu_name(view, x.numbers)) for x in pinned_findings]
    top = verdict.options[0] if verdict.options else None
    if top is None:
        lines.append(f.messages.text("srv.best.none"))
        return "\n".join(lines)
    names = dict(count=top.count, gpu=gpu_name(view, top.gpu_id), precision=precision_label(top.precision or "", f))
    if verdict.pinned is not None and verdict.pinned.fits and top.gpu_id == verdict.pinned.gpu:
        return "\n".join(lines)  # the named hardware is the plan: said once
    key = "srv.best.alternative" if verdict.pinned is not None else "srv.best"
    if top.usd_per_million_output_tokens is not None and top.offer is not None:
        lines.append(f.messages.text(key, per_million=f.money(top.usd_per_million_output_tokens),
                                     provider=provider_label(view, top.offer.provider_id), **names))
    else:
        lines.append(f.messages.text(f"{key}_no_offer", **names))
    if top.throughput is not None:
        lines.append(_rates(top.throughput, f))
    return "\n".join(lines)


def memory_title(view: RecommendationView, f: Formatter) -> str:
    """The memory section's title names the hardware the breakdown is for: the user's own when named."""
    memory = view.verdict.memory
    pinned = view.verdict.pinned
    top = view.verdict.options[0] if view.verdict.options else None
    gpu_id = pinned.gpu if pinned is not None else top.gpu_id if top is not None else None
    gpu = view.gpus.get(gpu_id) if gpu_id else None
    return f.messages.text(
        "rec.memory.title", expected=f.gib(memory.per_gpu_gib), low=f.gib(memory.low_gib),
        high=f.gib(memory.high_gib), count=pinned.count if pinned is not None else memory.gpus,
        gpu=gpu.name if gpu else "—", vram=f.gb(gpu.vram_gb) if gpu else "—")


def memory_bars(view: RecommendationView, f: Formatter) -> str:
    """The breakdown's bars, scaled to the card the title names."""
    pinned = view.verdict.pinned
    scale_gpu = view.gpus.get(pinned.gpu) if pinned is not None else None
    return bars(view, f, scale_gpu)


def precision_rows(view: RecommendationView, f: Formatter) -> str:
    """The fit matrix: one row per precision tried, needed vs usable memory per GPU, fits or not."""
    fits = sorted(view.verdict.precisions, key=lambda p: _order(p.precision))
    if len(fits) < 2:
        return ""
    rows = [[precision_label(p.precision, f), "✓" if p.fits else "✗",
             f"{f.gib(p.needed_gib)} / {f.gib(p.has_gib)}", f.messages.plain(f"quality.{p.code}")
             if f.messages.has(f"quality.{p.code}") else ""] for p in fits]
    return format_table(rows)


def _order(precision: str) -> tuple[int, str]:
    base = precision.split("-")[0]
    return (PRECISION_ORDER.index(base) if base in PRECISION_ORDER else len(PRECISION_ORDER), precision)


def option_lines(view: RecommendationView, f: Formatter) -> list[str]:
    lines = []
    for rank, option in enumerate(view.verdict.options[:3], start=1):
        names = dict(rank=rank, count=option.count, gpu=gpu_name(view, option.gpu_id),
                     precision=precision_label(option.precision or "", f))
        head = f.messages.text("srv.option", **names)
        if option.throughput is not None:
            head += " · " + _rates(option.throughput, f)
        if option.offer is None:
            tail = f.messages.text("rec.option_no_offer")
        else:
            tail = f.messages.text(
                "srv.option_offer", provider=provider_label(view, option.offer.provider_id),
                rate=f.rate(option.offer.usd_per_gpu_hour), date=f.date(option.offer.observed_at),
                per_million=f.money(option.usd_per_million_output_tokens)
                if option.usd_per_million_output_tokens is not None else "—",
                per_month=f.money(option.usd_per_month, cents=False) if option.usd_per_month is not None else "—")
        lines.append(f"{head}\n      {tail}")
    return lines


def command_text(view: RecommendationView) -> str:
    """The launch line for the chosen setup (environment first, as a shell would take it)."""
    command = view.verdict.command
    if command is None:
        return ""
    env = " ".join(f"{k}={v}" for k, v in command.env)
    return " ".join(part for part in (env, " ".join(command.argv)) if part)


def command_title(view: RecommendationView, f: Formatter) -> str:
    """"Launch it", or, when the hardware the user named does not run the model, which option the line is for."""
    command, pinned = view.verdict.command, view.verdict.pinned
    if command is None or pinned is None or not command.gpu or (command.gpu, command.gpus) == (pinned.gpu, pinned.count):
        return f.messages.text("srv.command.title")
    gpu = view.gpus.get(command.gpu)
    return f.messages.text("srv.command.title_option", count=command.gpus, gpu=gpu.name if gpu else command.gpu)


def fallback(view: RecommendationView, f: Formatter) -> str:
    """The notification text: the verdict's first line."""
    return verdict_text(view, f).split("\n", 1)[0].replace("*", "")
