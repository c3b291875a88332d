"""The recommendation card's input and its localized pieces: memory bars, option lines, assumptions, reasons."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.render.filters import format_table, text_bar
from bot.render.findings import coded_text, format_number, reject_text, with_margin
from bot.render.formats import Formatter
from bot.render.market import offer_label
from rules.types import GpuSpec, Provider
from rules.verdict import BREAKDOWN_KEYS, Option, Verdict

BAR_WIDTH = 20
MAX_REJECTS = 5
MAX_FINDINGS = 6
# Defaults the card shows elsewhere (the plan line) or that only restate "not asked for".
QUIET_DEFAULTS = frozenset({"gpus", "sharding", "offload", "spot", "method"})
# Said in the verdict section (the named hardware's yes/no and what would make it work), not repeated under
# "Good to know".
PINNED_CODES = ("pinned.method_fits", "pinned.quantized", "pinned.users", "pinned.context", "pinned.more_gpus", "pinned.one_card",
                "pinned.buy_one", "pinned.buy_one_street", "pinned.offload", "buy.within_budget",
                "buy.within_budget_street", "buy.none_within")
VERDICT_CODES = frozenset({"fit.pinned", *PINNED_CODES})


@dataclass(frozen=True, slots=True)
class WhatIf:
    """A what-if button: its stable action id, the label key, and the state it sends back."""

    action_id: str  # whatif.method.qlora, whatif.gpus.more, whatif.spot, compare.top2, share
    label_key: str  # btn.qlora ...
    value: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class RecommendationView:
    verdict: Verdict
    gpus: Mapping[str, GpuSpec]
    providers: Mapping[str, Provider]
    model_label: str  # "Llama 3.1 8B" or "13B"
    method: str  # the method evaluated (full, lora, qlora, ...)
    prices_at: datetime | None
    question: str = ""
    ignored: tuple[str, ...] = ()
    buttons: tuple[WhatIf, ...] = ()
    extra_sections: tuple[str, ...] = field(default=())  # mrkdwn already escaped (e.g. a knowledge answer)
    # mrkdwn placed before the verdict: what the question asked when the plan below answers a neighbour of it
    # (generating images with a diffusion model, whose plans size a LoRA fine-tune: bot.answer.diffusion_run)
    lead_sections: tuple[str, ...] = field(default=())
    # A GPU described by its memory only: (memory GB, the catalog card standing for it, how many such cards).
    read_as: tuple[float, str, int] | None = None
    # A chip named without its memory ("M2 Max"), answered on its smallest memory size because the model fits
    # there: (the name without memory, every size in GB, the catalog card answered for).
    smallest_of: tuple[str, tuple[float, ...], str] | None = None
    speed_first: bool = False  # the question asks how fast ("how many tokens/s"): the rate before the fit


def read_as_line(view: RecommendationView, f: Formatter) -> str:
    """"A 64 GB card, read as Apple M4 Pro (64 GB): the slowest of 5 such cards in the catalog.", or ""."""
    if view.smallest_of is not None:
        name, sizes, gpu_id = view.smallest_of
        listed = f.messages.plain("common.list_sep").join(f.gb(size) for size in sizes)
        return f.messages.text("card.smallest_variant", name=name, sizes=listed, gpu=gpu_name(view, gpu_id))
    if view.read_as is None:
        return ""
    memory, gpu_id, count = view.read_as
    return f.messages.text("card.read_as", memory=f.gb(memory), gpu=gpu_name(view, gpu_id), count=count)


def gpu_name(view: RecommendationView, gpu_id: str) -> str:
    gpu = view.gpus.get(gpu_id)
    return gpu.name if gpu is not None else gpu_id


def provider_label(view: RecommendationView, provider_id: str) -> str:
    provider = view.providers.get(provider_id)
    return provider.name if provider is not None else provider_id


def pinned_line(view: RecommendationView, f: Formatter) -> str:
    """A direct yes/no when the user named a GPU (and count), with the per-GPU need there; else ""."""
    finding = next((x for x in view.verdict.findings if x.code == "fit.pinned"), None)
    if finding is None:
        return ""
    numbers = finding.numbers
    key = "rec.pinned.pass" if finding.outcome == "pass" else "rec.pinned.fail"
    offload = numbers.get("offload_gib")
    if finding.outcome == "pass" and isinstance(offload, (int, float)) and offload > 0:
        # it fits only with states kept in host RAM or on NVMe: a "yes" with that said first
        key = "rec.pinned.pass_nvme" if numbers.get("offload_target") == "nvme" else "rec.pinned.pass_cpu"
    line = f.messages.text(key, count=numbers["gpus"], gpu=gpu_name(view, str(numbers["gpu"])),
                           needed_gib=f.gib(float(numbers["needed_gib"])), has_gib=f.gib(float(numbers["has_gib"])),
                           offload=f.gib(float(offload)) if isinstance(offload, (int, float)) else "")
    return with_margin(line, numbers, f)


def verdict_line(view: RecommendationView, f: Formatter) -> str:
    """The one-line answer (after the yes/no for a named GPU): best pick with time and cost, or why nothing fits."""
    pinned = pinned_line(view, f)
    lighter = next((coded_text("finding", x.code, x.numbers, f, gpu=gpu_name(view, str(x.numbers["gpu"])))
                    for x in view.verdict.findings if x.code == "pinned.method_fits"), "")
    best = _best_line(view, f)
    lines = [read_as_line(view, f), pinned, lighter, best]
    return "\n".join(line for line in lines if line)


def _best_line(view: RecommendationView, f: Formatter) -> str:
    if not view.verdict.options:
        return f.messages.text("rec.verdict_none")
    top = view.verdict.options[0]
    names = dict(count=top.count, gpu=gpu_name(view, top.gpu_id))
    if top.offer is None:
        return f.messages.text("rec.verdict_no_offer", **names)
    provider = offer_label(provider_label(view, top.offer.provider_id), top.offer, f)  # issue 18: spot/auction/median said
    if top.hours is None or top.cost_usd is None:
        return f.messages.text("rec.verdict_no_time", rate=f.rate(top.offer.usd_per_gpu_hour), provider=provider,
                               **names)
    return f.messages.text("rec.verdict", hours=f.hours(top.hours), cost=f.money(top.cost_usd), provider=provider,
                           **names)


def needs_dataset(view: RecommendationView) -> bool:
    """A plan without hours, for want of a dataset size: not when the engine has no rates for the method at all
    (diffusion training: a size would change nothing, the finding says so) or when the size was given."""
    verdict = view.verdict
    if verdict.workload.tokens or verdict.workload.samples:
        return False
    if any(f.code == "time.not_estimated" for f in verdict.findings):
        return False
    return any(o.hours is None for o in verdict.options)


def memory_title(view: RecommendationView, f: Formatter) -> str:
    memory = view.verdict.memory
    top = view.verdict.options[0] if view.verdict.options else None
    gpu = view.gpus.get(top.gpu_id) if top else None
    return f.messages.text(
        "rec.memory.title", expected=f.gib(memory.per_gpu_gib), low=f.gib(memory.low_gib),
        high=f.gib(memory.high_gib), count=memory.gpus, gpu=gpu.name if gpu else "—",
        vram=f.gb(gpu.vram_gb) if gpu else "—",
    )


def memory_bars(view: RecommendationView, f: Formatter) -> str:
    """Breakdown as text bars scaled to the top option's VRAM (catalog GB read as GiB, as vendors size HBM)."""
    top = view.verdict.options[0] if view.verdict.options else None
    return bars(view, f, view.gpus.get(top.gpu_id) if top else None)


def bars(view: RecommendationView, f: Formatter, gpu: GpuSpec | None) -> str:
    """The verdict's memory breakdown as text bars scaled to `gpu`'s memory."""
    memory = view.verdict.memory
    scale = max(gpu.vram_gb if gpu else 0.0, memory.high_gib, memory.per_gpu_gib, 1e-9)
    rows = [[f.messages.plain(f"mem.{key}"), text_bar(memory.breakdown.get(key, 0.0), scale, BAR_WIDTH),
             f.gib(memory.breakdown.get(key, 0.0))]
            for key in BREAKDOWN_KEYS if memory.breakdown.get(key, 0.0) > 0]
    rows.append([f.messages.plain("mem.total"), text_bar(memory.per_gpu_gib, scale, BAR_WIDTH),
                 f.gib(memory.per_gpu_gib) + (f" / {f.gb(gpu.vram_gb)}" if gpu else "")])
    return format_table(rows)


def plan_text(option: Option, f: Formatter) -> str:
    """"one GPU", "ZeRO-3", "FSDP · 2 nodes · gradient checkpointing"."""
    parts = [f.messages.plain("plan.single")] if option.count == 1 else [_sharding(option.sharding, f)]
    if option.nodes > 1:
        parts.append(f.messages.plain("plan.nodes", nodes=option.nodes))
    parts.extend(f.messages.plain(f"switch.{s}") if f.messages.has(f"switch.{s}") else s for s in option.switches)
    return " · ".join(p for p in parts if p)


def _sharding(sharding: str, f: Formatter) -> str:
    """"FSDP", "ZeRO-3", "tensor parallel" in the locale's words; nothing for an unsharded plan."""
    return "" if sharding == "none" else format_number("sharding", sharding, f)


def option_lines(view: RecommendationView, f: Formatter) -> list[str]:
    lines = []
    for rank, option in enumerate(view.verdict.options[:3], start=1):
        names = dict(rank=rank, count=option.count, gpu=gpu_name(view, option.gpu_id), plan=plan_text(option, f))
        if option.hours is None or option.cost_usd is None:
            head = f.messages.text("rec.option_no_time", **names)
        else:
            head = f.messages.text("rec.option", hours=f.hours(option.hours), cost=f.money(option.cost_usd), **names)
        if option.offer is None:
            tail = f.messages.text("rec.option_no_offer")
        else:
            tail = f.messages.text("rec.option_offer", provider=offer_label(provider_label(view, option.offer.provider_id), option.offer, f),
                                   rate=f.rate(option.offer.usd_per_gpu_hour), date=f.date(option.offer.observed_at))
        lines.append(f"{head}\n      {tail}")
    return lines


def assumption_text(view: RecommendationView, f: Formatter) -> str:
    """The defaulted inputs, labelled in the locale: "sequence length 2,048 · micro-batch 1 · …"."""
    parts = []
    quiet = QUIET_DEFAULTS | ({"precision"} if "quantization" in view.verdict.assumptions else set())
    for key in view.verdict.defaulted:
        if key not in view.verdict.assumptions or key in quiet:
            continue
        value = view.verdict.assumptions[key]
        if key == "model" and str(value).startswith("typical-"):
            continue  # an internal shape id: the parameter count and the model.missing finding say it
        label = f.messages.plain(f"field.{key}") if f.messages.has(f"field.{key}") else key
        parts.append(f"{label} {_assumed_value(key, value, f)}")
    return " · ".join(parts)


def _assumed_value(key: str, value: Any, f: Formatter) -> str:
    if isinstance(value, bool):
        return f.messages.plain("value.yes") if value else f.messages.plain("value.no")
    localized = f"value.{key}.{value}"
    if isinstance(value, str) and f.messages.has(localized):
        return f.messages.plain(localized)
    return format_number(key, value, f)


def reject_lines(view: RecommendationView, f: Formatter) -> list[str]:
    return [reject_text(r.code, r.numbers, f, gpu=gpu_name(view, r.gpu_id))
            for r in view.verdict.rejected[:MAX_REJECTS]]


def finding_lines(view: RecommendationView, f: Formatter) -> list[str]:
    """Workload-level guidance plus the top option's own warnings, each once."""
    findings = list(view.verdict.findings)
    if view.verdict.options:
        findings.extend(view.verdict.options[0].findings)
    seen, lines = set(), []
    for finding in findings:
        if finding.outcome == "pass" or finding.code in seen or finding.code in VERDICT_CODES:
            continue
        if finding.code == "rank.decided_by" and finding.numbers.get("constraint") == "objective":
            continue  # the usual ranking decided: nothing the user needs to read
        if finding.code == "cost.buy_vs_rent" and any(
                x.code in ("buy.vs_rent", "buy.vs_rent_within_job") for x in findings):
            continue  # the whole-job comparison says it better than the per-hour one
        seen.add(finding.code)
        extra = {k: gpu_name(view, str(v)) for k, v in finding.numbers.items() if k == "gpu" or k.endswith("_gpu")}
        lines.append(coded_text("finding", finding.code, finding.numbers, f, **extra))
    return lines[:MAX_FINDINGS]
