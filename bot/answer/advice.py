"""Run the engine for a workload and build what the cards show: the recommendation, fit lines, buttons."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from decimal import Decimal
from bot.answer import actions
from bot.answer.actions import ButtonState
from bot.answer.reply import Reply, reply_from
from bot.parse.ask import Ask
from bot.parse.serving import asks_speed
from bot.render.advice import RecommendationView, WhatIf
from bot.render.books import offer_book
from bot.render.cards import render_card
from bot.render.filters import escape_mrkdwn
from bot.render.views import FitLine
from knowledge.kb import KbAnswer
from knowledge.snapshot import Snapshot
from rules.engine import DEFAULT_SAMPLES
from rules.plans.compare import Contender
from rules.types import GpuSpec, Workload
from rules.workload.formats import weight_format
from rules.verdict import Verdict

TRAINING_METHODS = ("qlora", "lora", "full")
SERVING_METHODS = ("serving", "running")
# What-if weight formats for a served or run model: 4-bit to fit smaller hardware, fp8 where the card has it.
WHAT_IF_FORMATS = ("int4", "fp8")
MAX_GPUS = 64
# Workload fields only serving and running read: dropped when a button turns a run into a fine-tune.
SERVING_ONLY_FIELDS = ("concurrency", "context_tokens", "tokens_per_s", "tokens_per_s_scope", "quantization",
                       "kv_cache_dtype", "engine")


def evaluate(workload: Workload, snapshot: Snapshot, gpus: Mapping[str, GpuSpec] | None = None) -> Verdict:
    from knowledge.rule_tables import load_rule_tables
    from rules.engine import evaluate as run

    return run(workload, gpus=gpus if gpus is not None else snapshot.gpus, offers_by_gpu=snapshot.offers_by_gpu,
               providers=snapshot.providers, tables=load_rule_tables(), offer_book=offer_book(snapshot),
               street=snapshot.purchase_prices)


def model_label(verdict: Verdict) -> str:
    workload = verdict.workload
    if workload.model is not None:
        return workload.model.name
    params = verdict.assumptions.get("params_b")
    if isinstance(params, (int, float)):
        return f"{params:g}B"
    return str(verdict.assumptions.get("model", "?"))


def recommendation_reply(workload: Workload, *, snapshot: Snapshot, lang: str, question: str,
                         ignored: tuple[str, ...], ask: Ask | None,
                         extra_sections: tuple[str, ...] = (), memory_totals: bool = False,
                         lead_sections: tuple[str, ...] = (),
                         smallest_of: tuple[str, tuple[float, ...], str] | None = None) -> Reply:
    """`memory_totals`: the question asked how much memory the model takes ("how much VRAM for Llama 3 70B?"):
    the card opens with the whole model's weights per format and the cache per user (`memory_totals_section`)."""
    verdict = evaluate(workload, snapshot)
    if memory_totals and str(verdict.assumptions.get("method", "")) in SERVING_METHODS:
        extra_sections = (memory_totals_section(verdict, lang), *extra_sections)
    state = actions.make_state("advise", workload)
    method = str(verdict.assumptions.get("method", workload.method or "lora"))
    view = RecommendationView(
        verdict=verdict, gpus=snapshot.gpus, providers=snapshot.providers, model_label=model_label(verdict),
        method=method,
        prices_at=snapshot.prices_as_of(),
        question=question, ignored=tuple(ignored),
        buttons=what_if_buttons(verdict, state, snapshot.gpus,
                                running_assumed=ask is not None and "method" in ask.assumed),
        extra_sections=extra_sections, lead_sections=lead_sections, read_as=read_as(ask, workload, snapshot),
        smallest_of=smallest_of, speed_first=ask is not None and asks_speed(ask.text),
    )
    kind = "serving" if method in SERVING_METHODS else "recommendation"  # the serving card: tokens/s, $/M tokens
    return reply_from(render_card(kind, view, lang), ask=ask, state=state, verdict=verdict)


# The formats a "how much memory" answer names, with the model's published one first when it is not BF16.
TOTALS_FORMATS = ("bf16", "int8", "int4")


def memory_totals_section(verdict: Verdict, lang: str) -> str:
    """"Llama 3 70B's weights take 131.4 GiB in BF16, 65.8 GiB in 8-bit, 36.5 GiB in 4-bit; the KV cache adds
    1.2 GiB per user at 4,096 tokens": the whole model, before it is split over cards (the engine's own weight
    and KV arithmetic: rules.memory.serving)."""
    from bot.render.cards import language_tools
    from bot.render.findings import precision_label
    from rules.engine import resolve_shape
    from rules.memory.serving import kv_bytes_per_token, model_weight_bytes
    from rules.workload.serving import native_format

    messages, f = language_tools(lang)
    shape, _ = resolve_shape(verdict.workload, "running")
    native = native_format(shape)
    formats = tuple(dict.fromkeys((native, *TOTALS_FORMATS)))
    items = [messages.plain("mem.item", size=f.gib(model_weight_bytes(shape, fmt) / 2**30),
                            precision=precision_label(fmt, f)) for fmt in formats]
    context = verdict.assumptions.get("context_tokens")
    tokens = int(context) if isinstance(context, (int, float)) and context > 0 else 4096
    kv = kv_bytes_per_token(shape, "bf16") * tokens / 2**30
    return messages.text("mem.totals", model=model_label(verdict),
                         items=messages.plain("common.list_sep").join(items), kv=f.gib(kv),
                         context=f.number(tokens))


def read_as(ask: Ask | None, workload: Workload, snapshot: Snapshot) -> tuple[float, str, int] | None:
    """When the named hardware was a class ("a Mac with 64 GB"), the card standing for it, to say so."""
    if ask is None or workload.gpu is None:
        return None
    for mention in ask.gpus:
        if mention.status == "class" and mention.candidates[:1] == (workload.gpu,) and mention.memory_gb:
            # of the cards like the one standing for the class (desktop cards first when none was said: parse)
            segment = snapshot.gpus[workload.gpu].segment if workload.gpu in snapshot.gpus else None
            alike = sum(1 for g in mention.candidates if g in snapshot.gpus and snapshot.gpus[g].segment == segment)
            return mention.memory_gb, workload.gpu, alike or len(mention.candidates)
    return None


def what_if_buttons(verdict: Verdict, state: ButtonState, gpus: Mapping[str, GpuSpec] | None = None, *,
                    running_assumed: bool = False) -> tuple[WhatIf, ...]:
    """QLoRA/LoRA/full, more/fewer GPUs, spot or on-demand, compare top two, share — each with its state. An FP8
    what-if only where the card in question (the named one, else the top pick) has FP8 (`gpus` given).
    `running_assumed`: the question named no workload and running the model was assumed ("Gemma 2B on a T4"):
    one button sizes a LoRA fine-tune of the same model on the same hardware instead."""
    method = str(verdict.assumptions.get("method", ""))
    buttons: list[WhatIf] = []
    if method in TRAINING_METHODS:
        for other in TRAINING_METHODS:
            if other != method:
                buttons.append(WhatIf(f"whatif.method.{other}", f"btn.{other}",
                                      actions.with_workload(state, method=other)))
    if method in SERVING_METHODS:
        shown = {o.precision for o in verdict.options[:1]}
        if verdict.pinned is not None:
            shown.add(verdict.pinned.precision)
        card_id = verdict.pinned.gpu if verdict.pinned is not None else (
            verdict.options[0].gpu_id if verdict.options else None)
        card = gpus.get(card_id) if gpus is not None and card_id is not None else None
        for fmt in WHAT_IF_FORMATS:
            if fmt == "fp8" and card is not None and not card.fp8_support:
                continue
            if fmt not in shown and verdict.workload.quantization != fmt:
                buttons.append(WhatIf(f"whatif.quant.{fmt}", f"btn.quant.{fmt}",
                                      actions.with_workload(state, quantization=fmt)))
        if running_assumed and method == "running":
            buttons.append(WhatIf("whatif.method.lora", "btn.train.lora", actions.with_workload(
                state, method="lora", **dict.fromkeys(SERVING_ONLY_FIELDS))))
    top = verdict.options[0] if verdict.options else None
    count = top.count if top else int(verdict.assumptions.get("gpus", 1) or 1)
    if count < MAX_GPUS:
        buttons.append(WhatIf("whatif.gpus.more", "btn.more", actions.with_workload(state, gpus=min(count * 2, MAX_GPUS))))
    if count > 1:
        buttons.append(WhatIf("whatif.gpus.fewer", "btn.fewer", actions.with_workload(state, gpus=max(count // 2, 1))))
    if verdict.workload.spot:
        buttons.append(WhatIf("whatif.ondemand", "btn.on_demand", actions.with_workload(state, spot=False)))
    else:
        buttons.append(WhatIf("whatif.spot", "btn.spot", actions.with_workload(state, spot=True)))
    if len(verdict.options) >= 2:
        first, second = verdict.options[0], verdict.options[1]
        # each at the count its plan uses: the comparison answers for the two plans the card shows
        buttons.append(WhatIf("compare.top2", "btn.compare_top2", {
            **state, "i": "compare", "g": [first.gpu_id, second.gpu_id],
            "n": {first.gpu_id: first.count, second.gpu_id: second.count}}))
    buttons.append(WhatIf("share", "btn.share", state))
    return tuple(buttons)


def fit_lines_for(workload: Workload, gpu_ids: tuple[str, ...], snapshot: Snapshot,
                  counts: Mapping[str, int] | None = None,
                  ) -> tuple[tuple[str, str], tuple[FitLine, ...], tuple[Contender, ...], int | None]:
    """Per compared GPU: the engine's plan pinned to that GPU, or its reason; the workload as (model, method);
    each GPU as a contender for the comparison's verdict; and the dataset the engine assumed (samples) to put a
    cost on each job when none was given (the comparison decides on cost per job unless asked for speed)."""
    lines: list[FitLine] = []
    contenders: list[Contender] = []
    summary, assumed_samples = ("", ""), None
    sized = workload.tokens is not None or workload.samples is not None
    # Without a dataset size a job has no time or cost; the engine's stated default dataset gives each GPU one.
    pinned_base = workload if sized else replace(workload, samples=DEFAULT_SAMPLES)
    # "2x 3090 vs 1x 4090": each GPU at the count the user gave it, else the workload's (else the engine's choice)
    named = dict(counts or {})
    verdicts = {gpu_id: evaluate(replace(pinned_base, gpu=gpu_id, gpus=named.get(gpu_id) or pinned_base.gpus,
                                         objective=workload.objective or "cheapest"),
                                 snapshot, {gpu_id: snapshot.gpus[gpu_id]}) for gpu_id in gpu_ids}
    if workload.quantization is None:
        verdicts = _like_for_like(verdicts, pinned_base, workload, snapshot, named)
    for gpu_id in gpu_ids:
        verdict = verdicts[gpu_id]
        summary = (model_label(verdict), str(verdict.assumptions.get("method", "")))
        name = snapshot.gpus[gpu_id].name
        pinned = next((x for x in verdict.findings if x.code == "fit.pinned"), None)
        option = next((o for o in verdict.options if o.gpu_id == gpu_id), None)
        vram, usable = _usable_memory(verdict, snapshot.gpus[gpu_id])
        held = verdict.pinned
        if (option is not None and option.throughput is not None and gpu_id in named and held is not None
                and held.gpu == gpu_id and option.count != named[gpu_id] and not held.fits):
            # the count the user gave does not hold it (the engine's own plan for this GPU uses more cards)
            lines.append(FitLine(name, reason_code="fit.vram", reason_numbers={
                "needed_gib": held.needed_gib, "has_gib": held.has_gib, "gpus": held.count}, vram_gb=vram,
                usable_gib=usable))  # has_gib: what the serving engine may use of the card (its usable share)
            contenders.append(Contender(gpu_id, None))
            continue
        if option is not None and option.throughput is not None:  # serving: tokens/s and $ per million tokens
            per_million = option.usd_per_million_output_tokens
            lines.append(FitLine(name, option.count, option.memory.per_gpu_gib, vram_gb=vram, usable_gib=usable,
                                 precision=option.precision, tokens_per_s=option.throughput.output_tokens_per_s,
                                 usd_per_million_tokens=per_million))
            # decided as a job would be: cost per million output tokens, then time per token
            seconds = 1 / option.throughput.output_tokens_per_s if option.throughput.output_tokens_per_s > 0 else None
            contenders.append(Contender(gpu_id, option.count, seconds,
                                        Decimal(str(per_million)) if per_million is not None else None))
            continue
        if option is not None and (pinned is None or pinned.outcome == "pass"):
            lines.append(FitLine(name, option.count, option.memory.per_gpu_gib, option.hours, option.cost_usd,
                                 vram_gb=vram, usable_gib=usable, gpu_share=_gpu_share(snapshot.gpus[gpu_id])))
            contenders.append(Contender(gpu_id, option.count, option.hours, option.cost_usd))
            if not sized and option.hours is not None:
                assumed_samples = DEFAULT_SAMPLES
            continue
        rejection = next((r for r in verdict.rejected if r.gpu_id == gpu_id), None)
        lines.append(FitLine(name, reason_code=rejection.code if rejection else "other",
                             reason_numbers=dict(rejection.numbers) if rejection else {}, vram_gb=vram,
                             usable_gib=usable, gpu_share=_gpu_share(snapshot.gpus[gpu_id])))
        contenders.append(Contender(gpu_id, None))
    return summary, tuple(lines), tuple(contenders), assumed_samples


def _like_for_like(verdicts: dict[str, Verdict], base: Workload, workload: Workload,
                   snapshot: Snapshot, counts: Mapping[str, int] | None = None) -> dict[str, Verdict]:
    """Served GPUs compared in one weight format: each GPU's own cheapest plan may store the model differently
    (AWQ 4-bit on an 80 GB card, FP8 on a 141 GB one), which compares quality as much as hardware. When the
    user named no format and the plans differ, the most precise format among them that every GPU holds on no
    more cards than its own plan needs is used for all (FP16 and BF16 count as one: the same two bytes, by what
    the card has); else the plans are kept."""
    own = {g: next((o for o in v.options if o.gpu_id == g), None) for g, v in verdicts.items()}
    if any(o is None or o.throughput is None or o.precision is None for o in own.values()):
        return verdicts
    formats = {"bf16" if o.precision == "fp16" else o.precision for o in own.values() if o is not None and o.precision}
    if len(formats) < 2:
        return verdicts
    for fmt in sorted(formats, key=lambda f: -weight_format(f).bits):
        again = {g: evaluate(replace(base, gpu=g, gpus=(counts or {}).get(g) or base.gpus,
                                     objective=workload.objective or "cheapest", quantization=fmt),
                             snapshot, {g: snapshot.gpus[g]}) for g in verdicts}
        plans = {g: next((o for o in v.options if o.gpu_id == g and o.throughput is not None), None)
                 for g, v in again.items()}
        if all(p is not None and (o := own[g]) is not None and p.count <= o.count for g, p in plans.items()):
            return again
    return verdicts


def _usable_memory(verdict: Verdict, gpu: GpuSpec) -> tuple[float, float | None]:
    """A card's memory and what a plan may use of it: for serving the engine's usable share (the verdict's pinned
    figure), for training the catalog VRAM less the rule tables' headroom (the safety margin a fit keeps free)."""
    if str(verdict.assumptions.get("method", "")) in SERVING_METHODS:
        pinned = verdict.pinned
        return gpu.vram_gb, (pinned.has_gib if pinned is not None and pinned.gpu == gpu.id else None)
    from knowledge.rule_tables import load_rule_tables
    from rules.plans.fit import usable_gib

    return gpu.vram_gb, round(usable_gib(gpu, load_rule_tables().headroom_fraction), 1)


def _gpu_share(gpu: GpuSpec) -> float | None:
    return gpu.gpu_usable_fraction if gpu.unified_memory else None


def knowledge_section(entry: KbAnswer) -> str:
    """A knowledge answer shown on top of a recommendation (escaped here: it becomes mrkdwn as is)."""
    return f"*{escape_mrkdwn(entry.title, 200)}*\n{escape_mrkdwn(entry.text, 2700)}"
