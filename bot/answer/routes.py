"""Routing for `bot.answer.pipeline`: an Ask (or a button's state) to the right card, through the engine or the KB."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime

from bot.answer import actions
from bot.answer.actions import BadState, ButtonState, JsonValue
from bot.answer.buying import buying_question, buying_reply
from bot.answer.capacity import asks_capacity, capacity_question, capacity_reply
from bot.answer.advice import fit_lines_for, knowledge_section, recommendation_reply
from bot.answer.ignored import localized_ignored
from bot.answer.reply import Reply, help_reply, reply_from
from bot.parse.ask import Ask, GpuMention
from bot.parse.training import MEMORY_QUESTION
from bot.render.cards import render_card
from bot.render.views import (
    Choice, ClarifyView, ComparisonView, KnowledgeView, PriceView, SpecsView, gpu_column, provider_prices,
)
from knowledge.kb import KbAnswer, KbResult
from knowledge.snapshot import Snapshot
from rules.plans.compare import catalog_strengths, decide_comparison
from rules.types import GpuSpec, Workload

Previous = Mapping[str, JsonValue]  # a thread's saved state: a ButtonState, {"state": ...} or {"text": ...}

log = logging.getLogger(__name__)

SIZE_CHOICES = ("7", "13", "34", "70")
WORKLOAD_FIELDS = ("model", "params_b", "method", "precision", "framework", "optimizer", "seq_len", "batch_size",
                   "gpu_count", "deadline_hours", "dataset_tokens", "samples", "epochs", "spot", "objective",
                   "sharding", "grad_checkpointing", "lora_rank", "resolution", "offload", "concurrency",
                   "requests_per_s", "context_tokens", "tokens_per_s", "quantization", "kv_cache_dtype", "engine")


def route_ask(ask: Ask, *, snapshot: Snapshot, language: str, now: datetime,
              previous: Previous | None) -> Reply:
    """The card for a parsed request in `language`, refining `previous` (a thread's state) when given."""
    lang, text = language, ask.text
    intent = ask.intent
    if previous and (ask.follow_up or intent in ("advise", "help", "explain") and _has_workload(ask)):
        # "and with 4-bit?", "what about 2 of them?": the thread's request, changed by what this one says
        intent = "explain" if intent == "explain" and not ask.follow_up else "advise"
    if intent in ("compare", "price", "specs"):
        return _catalog_intent(ask, intent, snapshot=snapshot, lang=lang, now=now, previous=previous)
    if intent == "explain":
        return _explain(ask, snapshot=snapshot, lang=lang, now=now, previous=previous)
    if intent == "advise" and not previous and buying_question(ask) and (ask.budget.usd_total or "buy" in _cues(ask)):
        # "which GPU should I buy for local LLMs?": a ladder of cards by price, not a model size to pick first
        return buying_reply(ask, snapshot=snapshot, lang=lang, ignored=localized_ignored(ask.ignored, lang))
    if intent == "advise" and not previous and not carries_workload(ask) and not capacity_question(ask):
        # "Are spot instances safe for fine-tuning?", "NVIDIA or AMD for training?": no model or size,
        # so a recommendation would only ask for one; a confident knowledge answer is what was asked.
        known = _confident_knowledge(ask, snapshot, lang)
        if known is not None:
            return known
    if intent == "advise" and (_has_workload(ask) or previous):
        return _advise(ask, snapshot=snapshot, lang=lang, now=now, previous=previous,
                       extra_sections=_why_sections(ask, snapshot, lang))
    return help_reply(lang, ask.text if text.strip() else "", ask)


def carries_workload(ask: Ask) -> bool:
    """Whether a question carries a real workload, the only thing a recommendation (a whole-catalog run) is for.

    A real workload is a model or a parameter count, plus a training method or the person asking which GPU
    (the parser's `advise` intent). A GPU, a GPU count, spot, or a bare "training" (which the parser reads as
    the default method) is context for a knowledge answer, not a workload: "the 4090 has no NVLink, how slow
    is training on two?" gets the knowledge card alone, whose text already uses the 4090's catalog facts.
    """
    sized = (ask.model is not None and ask.model.model_id is not None) or ask.params_b is not None
    return sized and (ask.method is not None or ask.intent == "advise")


def asks_why(ask: Ask) -> bool:
    """Whether the text has the parser's `explain` cue ("why", "为什么", ...), e.g. beside a which-GPU request."""
    return "explain" in _cues(ask)


def _cue_phrases(ask: Ask) -> tuple[str, list[tuple[str, int, int]]]:
    """The question as the parser normalises it for its cue phrases, and each cue found there (cue, start, end)."""
    from bot.parse.text import clean_text
    from bot.parse.vocabulary import load_vocabulary

    text, _ = clean_text(ask.text)
    return text, list(load_vocabulary().intents.find(text))


def _cues(ask: Ask, phrases: tuple[str, list[tuple[str, int, int]]] | None = None) -> set[str]:
    """The parser's intent cues found in the question; "buy" also for a cue phrase that holds a buy word
    ("買う価値" worth buying, "nên mua" should buy: matched whole as `explain` or `advise`, longest first).
    `phrases`: `_cue_phrases(ask)` when the caller has it already."""
    text, found = phrases or _cue_phrases(ask)
    cues = {cue for cue, _, _ in found}
    if "buy" not in cues and cues & {"explain", "advise"}:
        buys = _buy_phrases()
        if any(cue in ("explain", "advise") and any(b in text[start:end] for b in buys) for cue, start, end in found):
            cues.add("buy")
    return cues


@functools.cache
def _buy_phrases() -> tuple[str, ...]:
    """The lexicons' buying words, every language (read once: the vocabulary does not change while running)."""
    from bot.parse.vocabulary import load_vocabulary

    return tuple(phrase for phrase, cue in load_vocabulary().intents.values.items() if cue == "buy")


BUY_RENT_ENTRY = "cost.buy-vs-rent"


def _buying_named_card(ask: Ask, snapshot: Snapshot, lang: str) -> KbAnswer | None:
    """The buy-vs-rent entry for "is a 3090 worth buying?" (the parser's buy cue and a named GPU, no workload),
    with each named card's break-even. The parser read the question as this entry's already; the knowledge base's
    own match may still weigh it against a near entry ("used and older cards") and ask which was meant."""
    if not ask.gpus or carries_workload(ask) or "buy" not in _cues(ask):
        return None
    from knowledge.kb import find_entry

    return find_entry(BUY_RENT_ENTRY, lang, snapshot, text=ask.text)


# "What is" forms that open a which-GPU question as often as a conceptual one ("what's the cheapest GPU to serve
# Llama 3.1 8B at 10 requests per second?"): beside a workload they are not a why question.
GENERIC_WHAT = frozenset({"what is", "what's", "what are", "was ist", "qué es", "que es"})


def _asks_why_beside_work(ask: Ask, phrases: tuple[str, list[tuple[str, int, int]]] | None = None) -> bool:
    """An explain cue other than a generic "what is" (GENERIC_WHAT)."""
    text, found = phrases or _cue_phrases(ask)
    return any(cue == "explain" and text[start:end] not in GENERIC_WHAT for cue, start, end in found)


def _why_sections(ask: Ask, snapshot: Snapshot, lang: str) -> tuple[str, ...]:
    """The knowledge answer shown above a recommendation when a workload question also asks why, else ()."""
    if not carries_workload(ask):
        return ()
    phrases = _cue_phrases(ask)  # normalised and matched once for both questions below
    if not ("explain" in _cues(ask, phrases) and _asks_why_beside_work(ask, phrases)):
        return ()
    result = _kb_match(ask, snapshot, lang)
    if result is None or result.status != "answer" or result.entry is None:
        return ()
    return (knowledge_section(result.entry),)


def _kb_match(ask: Ask, snapshot: Snapshot, lang: str) -> KbResult | None:
    """The knowledge base's match for the question, or None when it fails (logged; the rest still answers)."""
    from knowledge.kb import match

    try:
        return match(ask.text, language=lang, snapshot=snapshot)
    except Exception:  # a broken knowledge base must not cost the user the rest of the answer
        log.exception("knowledge base match failed; answering without it")
        return None


def _confident_knowledge(ask: Ask, snapshot: Snapshot, lang: str) -> Reply | None:
    """The knowledge card when the knowledge base answers outright, else None (never a guess)."""
    result = _kb_match(ask, snapshot, lang)
    if result is None or result.status != "answer" or result.entry is None:
        return None
    entry = result.entry
    view = KnowledgeView(entry.title, entry.text, entry.facts, entry.sources, entry.related, question=ask.text)
    return reply_from(render_card("knowledge", view, lang), ask=ask)


def _has_workload(ask: Ask) -> bool:
    return any(getattr(ask, name, None) not in (None, ()) for name in WORKLOAD_FIELDS) or any(
        g.status == "found" for g in ask.gpus)


def _workload(ask: Ask, snapshot: Snapshot, previous: Previous | None) -> Workload:
    """The ask's workload laid over the previous request's (a thread follow-up refines it)."""
    from bot.parse import ask_to_workload

    current = ask_to_workload(ask, snapshot)
    base = _previous_workload(previous, snapshot)
    if base is None:
        return current
    given = actions.workload_state(current)
    merged = {**actions.workload_state(base), **given}
    if "model" in given and "params_b" not in given:
        merged.pop("params_b", None)  # a newly named model brings its own size
    return actions.workload_from_state(merged, snapshot.models)


def _previous_workload(previous: Previous | None, snapshot: Snapshot) -> Workload | None:
    if not previous:
        return None
    workload, inner, text = previous.get("w"), previous.get("state"), previous.get("text")
    if isinstance(workload, Mapping):
        return actions.workload_from_state(workload, snapshot.models)
    if isinstance(inner, Mapping):
        return _previous_workload(inner, snapshot)
    if isinstance(text, str):  # the Slack helper's thread record: re-read the earlier text
        from bot.parse import ask_to_workload, parse

        return ask_to_workload(parse(text, snapshot=snapshot), snapshot)
    return None


def _clarification(ask: Ask, state: ButtonState, snapshot: Snapshot, lang: str) -> Reply | None:
    """A clarification card when the ask cannot be answered as is, else None."""
    for kind, detail in ask.clarifications:
        if kind == "gpu_ambiguous":
            mention = next((g for g in ask.gpus if g.status == "ambiguous"), None)
            ids = mention.candidates if mention else ()
            choices = tuple(Choice(snapshot.gpus[i].name, i) for i in ids if i in snapshot.gpus)
        elif kind == "gpu_unknown":
            mention = next((g for g in ask.gpus if g.status == "none"), None)
            ids = mention.candidates if mention else ()
            choices = tuple(Choice(snapshot.gpus[i].name, i) for i in ids if i in snapshot.gpus)
        elif kind == "model_size_missing":
            choices = tuple(Choice(f"{size}B", size) for size in SIZE_CHOICES)
        elif kind == "model_unknown":  # the closest presets as buttons; the text asks for the parameter count
            ids = ask.model.candidates if ask.model is not None else ()
            choices = tuple(Choice(snapshot.models[i].name, i) for i in ids if i in snapshot.models)
        elif kind in ("model_ambiguous", "compare_needs_two"):
            choices = ()
        else:
            continue
        view = ClarifyView(kind, detail, choices, state, ask.text, localized_ignored(ask.ignored, lang))  # type: ignore[arg-type]
        return reply_from(render_card("clarification", view, lang), ask=ask, state=state)
    return None


def _catalog_intent(ask: Ask, intent: str, *, snapshot: Snapshot, lang: str, now: datetime,
                    previous: Previous | None = None) -> Reply:
    found = tuple(dict.fromkeys(g.gpu_id for g in ask.gpus if g.status == "found" and g.gpu_id))
    workload = _workload(ask, snapshot, None) if _has_model(ask) else Workload()
    state = actions.make_state(intent, workload, gpus=found)
    clarify = _clarification(ask, state, snapshot, lang)
    if clarify is not None:
        return clarify
    if intent == "compare" and len(found) < 2:
        clarify_view = ClarifyView("compare_needs_two", None, (), state, ask.text)
        return reply_from(render_card("clarification", clarify_view, lang), ask=ask, state=state)
    if not found:
        return _unknown_gpu(ask, state, lang)
    if intent == "compare":
        # the workload of the question, else of the thread ("compare H100 vs H200" under "70B LoRA?")
        compared = _workload(ask, snapshot, previous) if _has_model(ask) or previous else None
        counts = {g.gpu_id: g.count for g in ask.gpus if g.status == "found" and g.gpu_id and g.count}
        if compared is not None and (compared.model is not None or compared.params_b is not None):
            state = actions.make_state(intent, compared, gpus=found, counts=counts)
        return reply_from(render_card("comparison", comparison_view(found, compared, snapshot, ask.text, counts),
                                      lang), ask=ask, state=state)
    kind, view = _single_gpu_view(intent, found[0], snapshot, ask.text)
    return reply_from(render_card(kind, view, lang), ask=ask, state=state)


def _has_model(ask: Ask) -> bool:
    return ask.model is not None or ask.params_b is not None or ask.method is not None


def _unknown_gpu(ask: Ask, state: ButtonState, lang: str) -> Reply:
    query = next((g.query for g in ask.gpus), None) or ask.text
    view = ClarifyView("gpu_unknown", query, (), state, ask.text)
    return reply_from(render_card("clarification", view, lang), ask=ask, state=state)


def _single_gpu_view(intent: str, gpu_id: str, snapshot: Snapshot, question: str) -> tuple[str, PriceView | SpecsView]:
    prices_at = snapshot.prices_as_of()
    if intent == "price":
        return "price", PriceView(snapshot.gpus[gpu_id], provider_prices(snapshot, gpu_id), prices_at, question)
    return "specs", SpecsView(gpu_column(snapshot, gpu_id), prices_at, question)


def comparison_view(gpu_ids: tuple[str, ...], workload: Workload | None, snapshot: Snapshot,
                    question: str, counts: Mapping[str, int] | None = None) -> ComparisonView:
    """With a workload, each GPU's fit and which to pick; without one, what each is best at (never a made-up job)."""
    prices_at = snapshot.prices_as_of()
    columns = tuple(gpu_column(snapshot, g) for g in gpu_ids[:4])
    if workload is None or (workload.model is None and workload.params_b is None):
        rent = {c.gpu.id: c.cheapest_on_demand.usd_per_gpu_hour if c.cheapest_on_demand else None for c in columns}
        return ComparisonView(columns, prices_at, question, strengths=catalog_strengths([c.gpu for c in columns], rent))
    summary, fit, contenders, samples = fit_lines_for(workload, gpu_ids[:4], snapshot, counts)
    verdict = decide_comparison(contenders, workload.objective or "cheapest")
    return ComparisonView(columns, prices_at, question, summary, fit, verdict, assumed_samples=samples)


def _advise(ask: Ask, *, snapshot: Snapshot, lang: str, now: datetime, previous: Previous | None,
            extra_sections: tuple[str, ...] = ()) -> Reply:
    workload = _workload(ask, snapshot, previous)
    state = actions.make_state("advise", workload)
    if not previous:
        if asks_capacity(workload, snapshot, ask.text) and all(k == "model_size_missing" for k, _ in ask.clarifications):
            # "what can I run on my 4090?": what the named hardware holds, not a model size to pick first
            return capacity_reply(workload, snapshot=snapshot, lang=lang, question=ask.text,
                                  ignored=localized_ignored(ask.ignored, lang), ask=ask)
        smallest = _on_smallest_variant(ask, snapshot=snapshot, lang=lang, extra_sections=extra_sections)
        if smallest is not None:
            return smallest
        clarify = _clarification(ask, state, snapshot, lang)
        if clarify is not None:
            return clarify
    lead: tuple[str, ...] = ()
    if ask.method == "running" and _is_diffusion(workload, ask):  # "what GPU to run Flux dev?": generating images
        from bot.answer.diffusion_run import diffusion_running_section
        from knowledge.rule_tables import load_rule_tables

        lead = (diffusion_running_section(workload, snapshot.gpus, load_rule_tables().headroom_fraction, lang),)
    if ask.audio_hours and workload.model is not None and workload.model.kind == "speech":
        from bot.answer.transcription import transcription_section  # "transcribe 1000 hours of audio with Whisper"

        lead = (*lead, transcription_section(workload, ask.audio_hours, lang))
    memory_question = workload.method in ("running", "serving") and bool(MEMORY_QUESTION.search(ask.text))
    if memory_question:  # "how much VRAM for Llama 3 70B?": the totals, not the knowledge entry on training memory
        extra_sections = ()
    return recommendation_reply(workload, snapshot=snapshot, lang=lang, question=ask.text,
                                ignored=localized_ignored(ask.ignored, lang),  # issue 19: notes in the reader's language
                                ask=ask, extra_sections=extra_sections, memory_totals=memory_question,
                                lead_sections=lead)


_MEMORY_IN_NAME = re.compile(r"\s*\(?\b\d+(?:\.\d+)?\s?GB\)?", re.IGNORECASE)


def memory_variants(ask: Ask, snapshot: Snapshot) -> tuple[GpuMention, tuple[GpuSpec, ...]] | None:
    """The one ambiguous GPU of a request when it is a single chip or card named without its memory ("M2 Max":
    32, 64 or 96 GB), its variants smallest first (the slower first among equal sizes); else None."""
    if [kind for kind, _ in ask.clarifications] != ["gpu_ambiguous"]:
        return None
    mention = next((g for g in ask.gpus if g.status == "ambiguous"), None)
    if mention is None or len(mention.candidates) < 2 or any(i not in snapshot.gpus for i in mention.candidates):
        return None
    gpus = [snapshot.gpus[i] for i in mention.candidates]
    if len({_MEMORY_IN_NAME.sub("", g.name).strip() for g in gpus}) != 1:
        return None  # "A100": SXM or PCIe as well as 40 or 80 GB
    return mention, tuple(sorted(gpus, key=lambda g: (g.vram_gb, g.memory_bandwidth_gbs, g.id)))


def _on_smallest_variant(ask: Ask, *, snapshot: Snapshot, lang: str, extra_sections: tuple[str, ...]) -> Reply | None:
    """"Can my M2 Max run Llama 3 8B?": when the model runs on the chip's smallest memory size in the format it
    would run in on the largest, the answer for that size holds for every size (a larger one holds the same and
    more), so the card answers it and says so instead of asking which memory; when it does not fit there, or fits
    only in a smaller format, which size the user has decides it: None (ask)."""
    found = memory_variants(ask, snapshot)
    if found is None:
        return None
    mention, variants = found
    smallest = variants[0]
    pinned = replace(mention, status="found", gpu_id=smallest.id, name=smallest.name)
    chosen = replace(ask, gpus=tuple(pinned if g is mention else g for g in ask.gpus), clarifications=())
    workload = _workload(chosen, snapshot, None)
    if workload.method not in ("running", "serving") or (workload.model is None and workload.params_b is None):
        return None
    name = _MEMORY_IN_NAME.sub("", smallest.name).strip()
    sizes = tuple(sorted({g.vram_gb for g in variants}))
    reply = recommendation_reply(workload, snapshot=snapshot, lang=lang, question=ask.text,
                                 ignored=localized_ignored(ask.ignored, lang), ask=chosen,
                                 extra_sections=extra_sections, smallest_of=(name, sizes, smallest.id))
    on_smallest = reply.verdict.pinned if reply.verdict is not None else None
    if on_smallest is None or not on_smallest.fits:
        return None
    from bot.answer.advice import evaluate

    on_largest = evaluate(replace(workload, gpu=variants[-1].id), snapshot).pinned
    if on_largest is None or on_largest.precision != on_smallest.precision:
        return None  # a larger size runs it in a better format (BF16, not 4-bit): which one the user has decides
    return replace(reply, ask=ask)  # `parsed` stays what the parser read (ask --json: the same as parse --json)


def _is_diffusion(workload: Workload, ask: Ask) -> bool:
    """An image or video diffusion model (the catalog's kind, or the parser's family)."""
    return ask.family == "diffusion" or (workload.model is not None and workload.model.kind == "diffusion")


def _explain(ask: Ask, *, snapshot: Snapshot, lang: str, now: datetime, previous: Previous | None) -> Reply:
    """A conceptual question: the knowledge card; with a recommendation too only when it carries a workload."""
    workload = carries_workload(ask)
    result = _kb_match(ask, snapshot, lang)
    entry = result.entry if result is not None and result.status == "answer" else None
    if entry is None:
        entry = _buying_named_card(ask, snapshot, lang)
    if entry is None and capacity_question(ask):  # "is a 5090 worth it for local LLMs?": what it runs
        return _advise(ask, snapshot=snapshot, lang=lang, now=now, previous=previous)
    if entry is not None and workload:
        return _advise(ask, snapshot=snapshot, lang=lang, now=now, previous=previous,
                       extra_sections=(knowledge_section(entry),))
    if entry is not None:
        view = KnowledgeView(entry.title, entry.text, entry.facts, entry.sources, entry.related, question=ask.text)
        return reply_from(render_card("knowledge", view, lang), ask=ask)
    if result is not None and result.status == "choose" and result.alternatives:
        related = tuple((o.entry_id, o.title) for o in result.alternatives)
        view = KnowledgeView("", "", related=related, choose=True, question=ask.text)
        return reply_from(render_card("knowledge", view, lang), ask=ask)
    if workload or _asks_card_for_engine(ask):
        return _advise(ask, snapshot=snapshot, lang=lang, now=now, previous=previous)
    return help_reply(lang, ask.text, ask)


# A GPU asked for in so many words ("what's the best budget GPU for llama.cpp?", "llama.cpp用のグラボ").
_CARD_WORD = re.compile(r"\bgpus?\b|显卡|顯卡|グラボ|グラフィックボード|그래픽 ?카드|tarjeta gr[aá]fica|carte graphique|"
                        r"grafikkarte|card đồ họa", re.IGNORECASE)


def _asks_card_for_engine(ask: Ask) -> bool:
    """A card asked for to run an inference engine, with no model named and no knowledge entry found: the
    advice path asks which model (its size decides the card), not the help card."""
    return ask.engine is not None and ask.method in ("running", "serving") and bool(_CARD_WORD.search(ask.text))


def route_action(kind: str, value: Mapping[str, JsonValue], *, snapshot: Snapshot, language: str,
                 now: datetime) -> Reply:
    """A button press: every value carries the state to answer (see bot.answer.actions)."""
    if kind in ("price.show", "specs.show"):
        gpu_id = value.get("gpu")
        if not isinstance(gpu_id, str) or gpu_id not in snapshot.gpus:
            raise BadState("unknown GPU")
        card_kind, view = _single_gpu_view(kind.split(".")[0], gpu_id, snapshot, "")
        return reply_from(render_card(card_kind, view, language))
    if kind == "kb.open":
        return _open_entry(value, snapshot, language)
    state = actions.button_state(value.get("state") or dict(value))
    if kind in ("gpu.pick", "model.pick", "model.size"):
        state = _apply_pick(kind, value.get("pick"), state, snapshot)
    workload = actions.workload_from_state(state.get("w") or {}, snapshot.models)
    intent = state.get("i", "advise")
    if kind == "compare.top2" or intent == "compare":
        gpus = tuple(g for g in state.get("g", ()) if g in snapshot.gpus)
        if len(gpus) < 2:
            raise BadState("compare needs two known GPUs")
        has_workload = bool(state.get("w"))
        counts = {g: c for g, c in (state.get("n") or {}).items() if g in gpus}  # as named, or as planned
        comparison = comparison_view(gpus, workload if has_workload else None, snapshot, "", counts)
        return reply_from(render_card("comparison", comparison, language), state=state)
    if intent in ("price", "specs") and workload.gpu is not None and workload.gpu in snapshot.gpus:
        card_kind, view = _single_gpu_view(intent, workload.gpu, snapshot, "")
        return reply_from(render_card(card_kind, view, language), state=state)
    return recommendation_reply(workload, snapshot=snapshot, lang=language, question="", ignored=(), ask=None)


def _apply_pick(kind: str, pick: JsonValue, state: ButtonState, snapshot: Snapshot) -> ButtonState:
    if not isinstance(pick, str):
        raise BadState("pick is not a string")
    if kind == "gpu.pick":
        if pick not in snapshot.gpus:
            raise BadState("unknown GPU")
        gpus = [g for g in state.get("g", []) if g != pick]
        if state.get("i") == "compare":
            return {**state, "g": [*gpus, pick][:4]}
        return actions.with_workload(state, gpu=pick)
    if kind == "model.pick":
        if pick not in snapshot.models:
            raise BadState("unknown model")
        return actions.with_workload(state, model=pick, params_b=None)
    try:
        size = float(pick)
    except ValueError as error:
        raise BadState("size is not a number") from error
    return actions.with_workload(state, params_b=size)


def _open_entry(value: Mapping[str, JsonValue], snapshot: Snapshot, language: str) -> Reply:
    from knowledge.kb import find_entry

    entry_id = value.get("id")
    entry = find_entry(entry_id, language, snapshot) if isinstance(entry_id, str) else None
    if entry is None:
        raise BadState("unknown knowledge entry")
    view = KnowledgeView(entry.title, entry.text, entry.facts, entry.sources, entry.related)
    return reply_from(render_card("knowledge", view, language))
