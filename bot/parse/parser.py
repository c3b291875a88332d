"""`parse(text, snapshot=...) -> Ask`: the single entry point; any text gives an Ask, never an exception."""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from collections.abc import Mapping
from types import MappingProxyType
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bot.parse.cpu import cpu_only_note, phone_note
from bot.parse.ask import (
    CLARIFY_GPU_AMBIGUOUS,
    CLARIFY_GPU_UNKNOWN,
    CLARIFY_MODEL_SIZE,
    CLARIFY_MODEL_UNKNOWN,
    Ask,
    Budget,
    GpuMention,
    ModelMention,
)
from bot.parse.config import find_config
from bot.parse.deadline import find_deadline
from bot.parse.gpus import find_gpus
from bot.parse.counts import Count, decide_count
from bot.parse.intent import Evidence, decide_intent, is_follow_up, without_polite
from bot.parse.language import detect_language
from bot.parse.models import ModelFound, find_model
from bot.parse.names import without_names
from bot.parse.notes import Note
from bot.parse.money import find_money
from bot.parse.quantities import find_batch, find_dataset, find_lora_rank, find_resolution, find_seq_len
from bot.parse.serving import ServingFound, find_serving
from bot.parse.signs import find_unusable
from bot.parse.sizes import SizeMention, find_sizes
from bot.parse.text import MAX_CHARS, clean_text
from bot.parse.training import find_training, pick_framework
from bot.parse.vocabulary import Vocabulary, load_vocabulary

from rules.types import GpuSpec

if TYPE_CHECKING:
    from knowledge.snapshot import Snapshot

log = logging.getLogger(__name__)
_NEEDS_MODEL = frozenset({"advise"})


def parse(text: object, *, snapshot: Snapshot) -> Ask:
    """Parse one message into an Ask (pure: no I/O beyond the lexicon read once); anything but text is read as
    an empty message."""
    try:
        return parse_strict(text if isinstance(text, str) else "", snapshot=snapshot)
    except Exception:  # a parser bug must still give the user a card, and us a log line
        log.exception("parse failed on a %d-character message", len(text) if isinstance(text, str) else -1)
        return Ask(intent="help", language="en", text=text if isinstance(text, str) else "",
                   ignored=("the whole message (it could not be read)",))


# GPU time bought by the hour: an hour word right after a named GPU ("H100 hours", "A100-Stunden", "8 H100s
# for 100 hours", "for 3 days"; years are owning) or right before it with a preposition ("hours on an H100",
# "horas de H100", "heures de H100"). Only these Latin forms: in Chinese, Japanese, Korean and Vietnamese the
# hour words also mean "a long time" or "now" (长时间, 長時間, bây giờ) next to a card someone buys.
_HOURS_AFTER = re.compile(r"(?:s|'s)?(?:[\s-]*(?:gpu[\s-]*)?(?:hours?|hrs|stunden?)|"
                          r"\s+(?:for|por|pour|für)\s+(?:\d+|a|an|one|un|una|une|eine?n?)\s*"
                          r"(?:hours?|hrs|h|days?|weeks?|horas?|días|heures?|jours?|stunden?|tage?n?))(?![a-z])")
_HOURS_BEFORE = re.compile(r"(?<![a-z])(?:gpu[\s-]*)?(?:hours?|hrs|horas?|heures?|stunden?)\s+"
                           r"(?:of|on|de|d'|en|sur|auf|mit)\s*(?:an?|une?|la|el|einer?|d'une?)?\s*$")


def _hours_of_a_gpu(text: str, spans: tuple[tuple[int, int], ...]) -> bool:
    """Whether a named GPU is bought as hours of it (renting), not as a card (`text` is casefolded already)."""
    return any(_HOURS_AFTER.match(text, end) or _HOURS_BEFORE.search(text[max(0, start - 24):start])
               for start, end in spans)


# "H100 SXM and PCIe", "A100 40GB or 80GB": the second variant names the same GPU ("H100 PCIe", "A100 80GB").
_VARIANT = r"(?:sxm\d?|pcie|nvl|\d{2,3}\s?gb)"
_SIBLING = re.compile(
    rf"(?<![a-z0-9])(?P<base>[a-z]{{1,4}}\d{{2,4}}[a-z]?)(?P<sep>[\s-]?)(?P<first>{_VARIANT})\s*"
    r"(?P<conj>and|or|vs\.?|versus|/|,|和|与|與|还是|還是|或|와|과|と|や|y|o|et|ou|und|oder|và|hay|hoặc)"
    rf"\s*(?P<second>{_VARIANT})(?![a-z0-9])")


def _with_sibling_named(text: str) -> str:
    """The second variant of a pair written once ("h100 sxm and pcie") spelled with its GPU ("... and h100 pcie")."""
    return _SIBLING.sub(lambda m: f"{m['base']}{m['sep']}{m['first']} {m['conj']} {m['base']} {m['second']}", text)


def _blank(text: str, spans: tuple[tuple[int, int], ...]) -> str:
    """Replace used spans by spaces so later extractors do not read them again (positions kept)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def parse_strict(raw: str, *, snapshot: Snapshot) -> Ask:
    """`parse` without the safety net: a bug raises (the property tests call this one)."""
    vocab = load_vocabulary()
    text, cut = clean_text(raw)
    text = _with_sibling_named(text)
    language = detect_language(without_names(text, snapshot), vocab)  # names never tell the language
    gpus = find_gpus(text, snapshot, vocab)
    rest = _blank(text, gpus.spans)
    money = find_money(rest, vocab, language)
    rest = _blank(rest, money.spans)
    config = find_config(text)
    refused: list[Note] = []  # what was written but cannot be used, as notes ("I ignored: ...")
    sizes = find_sizes(rest, refused)
    model = find_model(rest, sizes, snapshot, config.model_query)
    dataset = find_dataset(rest, vocab)
    model_id = model.mention.model_id if model.mention else None
    diffusion_model = model_id is not None and model_id in snapshot.models and snapshot.models[model_id].kind == "diffusion"
    training = find_training(rest, vocab, config.values, dataset_tokens=dataset.tokens, diffusion_model=diffusion_model)
    serving = find_serving(rest)
    values: dict[str, Any] = dict(config.values)
    assumed: dict[str, str] = {**money.assumed, **model.assumed, **training.assumed}
    ignored = list(config.ignored)
    if cut:
        ignored.append(f"text after the first {MAX_CHARS} characters")

    params_b = _params_b(model.mention, sizes, rest, assumed, ignored)

    seq_len = values.get("seq_len")
    if seq_len is None:
        seq_len, from_k = find_seq_len(rest, vocab)
        if from_k:
            unit = "'M' read as 1,048,576" if seq_len and seq_len >= 1024 * 1024 else "'k' read as 1024"
            assumed["seq_len"] = f"{unit} tokens: {seq_len}"
    found_gpus = tuple(_class_members(m, snapshot, assumed) for m in gpus.mentions)
    count = decide_count(gpus, values.get("gpus"), text, vocab.count_questions)
    if gpus.notes and count.count == 1 and count.assumed:  # "999999 H100" is not "one card"
        count = Count(None)
    if count.assumed:
        assumed["gpu_count"] = count.assumed
    spot = _spot(rest, vocab)
    objective = vocab.objectives.first(rest)
    deadline_found = find_deadline(rest, vocab)
    deadline = deadline_found.hours
    unusable = find_unusable(rest)  # "-50 users", "batch 0": the extractors dropped the sign or the value
    cpu_only = cpu_only_note(rest)  # "on cpu only": GPUs are what is sized, and the card says so
    phone = phone_note(rest)  # "on my iPhone": likewise
    ignored.extend(note.as_written(raw) for note in
                   (*refused, *gpus.notes, *money.notes, *deadline_found.notes, *unusable.values(),
                    *((cpu_only,) if cpu_only is not None else ()), *((phone,) if phone is not None else ())))
    cues = frozenset(v for v, _, _ in vocab.intents.find(rest))
    if "buy" in cues and "rent" not in cues and _hours_of_a_gpu(text, gpus.spans):
        cues = (cues - {"buy"}) | {"rent"}  # "buy H100 hours", "comprar horas de H100": renting, priced
    if "rent" in cues:  # renting words ask for a price, and beside a buying word weigh owning against renting
        cues |= {"price"}
    language = _requested_language(rest, vocab, language, cues)

    has_workload = params_b is not None or bool(model_id)
    speech = model_id is not None and model_id in snapshot.models and snapshot.models[model_id].kind == "speech"
    trains = bool(dataset.tokens or dataset.samples or values.get("epochs") or dataset.epochs)
    method = _workload_kind(training.method, serving, has_workload, found_gpus, assumed, speech=speech,
                            trains=trains or diffusion_model)
    # Hours of audio are what a speech model run transcribes (the card times that); otherwise they stay a note.
    audio_hours = deadline_found.media_hours if speech and method == "running" else None
    if audio_hours:
        ignored = [n for n in ignored if getattr(n, "key", "") != "media_length"]
    core = without_polite(text, vocab)
    follow_up = is_follow_up(core, vocab, names_model=has_workload or model.mention is not None)
    serves = method in ("serving", "running") or (follow_up and method is None)
    context_tokens = None
    if serves:
        context_tokens, seq_len = _context_tokens(seq_len, serving, assumed), None
    evidence = Evidence(
        cues=cues,
        text_chars=len(core),
        # catalog questions (compare, price, specs) are about named GPUs; "a 24 GB card" is hardware for advice
        distinct_gpus=len({g.gpu_id or g.query for g in found_gpus if g.status != "class"}),
        has_workload=has_workload,
        has_method=method is not None,
        has_money_or_time=_has_money(money.budget) or deadline is not None,
        anything=bool(has_workload or method or found_gpus or _has_money(money.budget)
                      or seq_len or deadline or objective or training.framework),
        follow_up=follow_up,
        has_budget=_has_money(money.budget),
        language_named="language" in cues and bool(vocab.language_names.find(rest)),
    )
    intent = decide_intent(evidence)
    ask = Ask(
        intent=intent,  # type: ignore[arg-type]
        language=language,  # type: ignore[arg-type]
        text=raw if isinstance(raw, str) else "",
        model=model.mention,
        params_b=params_b,
        method=method,  # type: ignore[arg-type]
        precision=training.precision,
        framework=pick_framework([f for f in (training.framework, config.framework) if f]),
        optimizer=training.optimizer,
        seq_len=seq_len,
        batch_size=values.get("batch_size") or find_batch(rest, vocab),
        gpus=found_gpus,
        gpu_count=count.count,
        gpu_count_range=count.count_range,
        budget=money.budget,
        deadline_hours=deadline,
        dataset_tokens=dataset.tokens,
        samples=dataset.samples,
        epochs=values.get("epochs") or dataset.epochs,
        spot=spot,
        objective=objective,
        sharding=training.sharding,  # type: ignore[arg-type]
        grad_checkpointing=training.grad_checkpointing,  # type: ignore[arg-type]
        lora_rank=values.get("lora_rank") or find_lora_rank(rest, vocab),
        resolution=values.get("resolution") or find_resolution(rest, vocab),
        offload=training.offload,
        family=training.family,
        concurrency=serving.concurrency if serves else None,
        requests_per_s=serving.requests_per_s if serves else None,
        context_tokens=context_tokens,
        tokens_per_s=serving.tokens_per_s,
        tokens_per_s_scope=serving.tokens_per_s_scope,  # type: ignore[arg-type]
        quantization=serving.quantization,
        kv_cache_dtype=serving.kv_cache_dtype,
        engine=serving.engine,
        priority=serving.priority,  # type: ignore[arg-type]
        rl_tuning=training.rl_tuning,  # type: ignore[arg-type]
        audio_hours=audio_hours,
        follow_up=follow_up,
        ignored=tuple(ignored),
        assumed=MappingProxyType(assumed),
        clarifications=_clarifications(intent, found_gpus, has_workload, model, method),
    )
    return _without(ask, unusable)


def _without(ask: Ask, unusable: Mapping[str, object]) -> Ask:
    """The Ask with each quantity written below one left unset (a sequence length is a served context too)."""
    fields = {name: None for name in unusable if getattr(ask, name, None) is not None}
    if "seq_len" in unusable and ask.context_tokens is not None:
        fields["context_tokens"] = None
    return replace(ask, **fields) if fields else ask  # type: ignore[arg-type]


def _context_tokens(seq_len: int | None, serving: ServingFound, assumed: dict[str, str]) -> int | None:
    """A served or run model's context (prompt + output), not a training sequence length."""
    notes = dict(serving.assumed)
    if seq_len is None:
        seq_len = serving.context_tokens
    else:
        notes.pop("context_tokens", None)
    assumed.update(notes)
    if "seq_len" in assumed:
        assumed["context_tokens"] = assumed.pop("seq_len")
    return seq_len


# Segments of a class mention and the catalog rows they cover ("a Mac with 64 GB", "a 24 GB consumer card").
def _any_card(g: GpuSpec) -> bool:
    return not g.laptop and not g.modified


_CLASS_SEGMENTS: dict[str, Callable[[GpuSpec], bool]] = {
    "apple": lambda g: g.unified_memory and g.vendor == "Apple",
    "consumer": lambda g: g.segment == "consumer" and _any_card(g),
    "workstation": lambda g: g.segment == "workstation",
    "datacenter": lambda g: g.segment == "datacenter",
}


def _class_members(mention: GpuMention, snapshot: Snapshot, assumed: dict[str, str]) -> GpuMention:
    """A GPU described by its memory only: the catalog's GPUs of that memory (and segment), slowest first.

    The memory verdict is the same for all of them; the slowest memory bandwidth keeps the speed estimate
    on the safe side. `assumed` says which card stands for the class, so the answer never hides the choice.
    """
    if mention.status != "class" or mention.memory_gb is None:
        return mention
    fits_segment = _CLASS_SEGMENTS.get(mention.segment or "", _any_card)
    members = sorted((g for g in snapshot.gpus.values() if abs(g.vram_gb - mention.memory_gb) < 0.6
                      and fits_segment(g)), key=lambda g: (g.memory_bandwidth_gbs, g.id))
    if mention.segment != "apple":
        # a "card" is a GPU of its own: a Mac's unified memory lends the GPU only a share (gpu_usable_fraction),
        # so a 16 GB Mac would turn "the memory verdict is the same for all" false for the 16 GB cards
        members = [g for g in members if not g.unified_memory] or members
    if not members:
        return mention
    kind = "such cards"
    if mention.segment is None and any(g.segment == "consumer" for g in members):
        # "what can I run with 12 GB of VRAM?": a card described by its memory alone is a desktop card (a data-
        # centre card is named; a 2014 Tesla K80 standing for "12 GB" answered with a server engine and formats)
        members = [g for g in members if g.segment == "consumer"] + [g for g in members if g.segment != "consumer"]
        kind = "desktop cards of that memory"
    count = sum(1 for g in members if g.segment == members[0].segment) if kind != "such cards" else len(members)
    assumed["gpu"] = (f"a {mention.memory_gb:g} GB card read as {members[0].name}, the slowest of the "
                      f"{count} {kind} in the catalog (the memory verdict is the same; faster ones run faster)")
    return replace(mention, candidates=tuple(g.id for g in members))


def _workload_kind(method: str | None, serving: ServingFound, has_workload: bool,
                   gpus: tuple[GpuMention, ...], assumed: dict[str, str], *, speech: bool = False,
                   trains: bool = False) -> str | None:
    """Training as named; else serving (an endpoint, several users or requests) or running (one user).

    A serving engine alone (vLLM, SGLang) is running: a question about one person's vLLM setup names no
    users. A model and named hardware (one GPU, named or described: "a 24 GB card", or the GPUs a comparison
    weighs: "4090 or 5090 for Qwen2.5 32B?") with no method and no training word ("Gemma 2B on a T4", "does a
    5090 handle 70B?") is a question about running that model on that card: said in `assumed`. A dataset
    (`trains`: "with 20k samples", "for 2 epochs", "on 1B tokens") is data to train on: never read as running;
    nor is an image diffusion model, which the engine sizes for training only (rules.engine: no image serving).
    A speech model (Whisper) with no training word is run: people transcribe with it.
    """
    many = (serving.concurrency or 0) > 1 or serving.requests_per_s is not None
    if method is None and many:
        return "serving"
    if method is None and serving.engine is not None:
        return "running"
    if method == "running" and many:
        return "serving"
    if method is None and trains:
        return None
    named = len({g.gpu_id or g.query for g in gpus})
    if method is None and has_workload and named >= 1:
        where = "the named GPU" if named == 1 else "each named GPU"
        assumed["method"] = f"running the model (no training word: inference on {where})"
        return "running"
    if method is None and speech:
        assumed["method"] = "running the model (a speech model and no training word: transcription)"
        return "running"
    return method


def _params_b(
    mention: ModelMention | None, sizes: list[SizeMention], text: str, assumed: dict[str, str], ignored: list[str]
) -> float | None:
    """The preset's size, else the first size written; further sizes are reported as ignored."""
    params_b = mention.params_b if mention and mention.params_b else None
    if params_b is None and sizes:
        params_b = sizes[0].params_b
        if sizes[0].experts:
            assumed["params_b"] = f"{sizes[0].experts} experts: read as at most {params_b:g}B total"
        options = _alternatives(sizes, text)
        if len(options) > 1:
            params_b = max(s.params_b for s in options)
            sizes = [s for s in sizes if s.params_b != params_b]
            assumed["params_b"] = f"sized for the largest of {' / '.join(f'{s.params_b:g}B' for s in options)}"
    for extra in sizes[1:]:
        if abs(extra.params_b - (params_b or 0)) > 0.01:
            ignored.append(f"{text[extra.start:extra.end].strip()} (one model size per question)")
    return params_b


# Two sizes joined by one of these words are options for one question ("7B or 13B", "7B和13B", "7Bと13B").
_OR = re.compile(
    r"\s?(?:,|/|or|and|vs\.?|versus|和|跟|与|與|或|或者|还是|還是|랑|이랑|과|와|나|이나|と|か|や|o|y|u|oder|und|ou|et|"
    r"hoặc|và|hay)\s?(?:a|an|un|una|une|ein|eine|einem|einen)?\s?$"
)


def _alternatives(sizes: list[SizeMention], text: str) -> list[SizeMention]:
    """The first size and those chained to it by "or"/"and"/"vs" words (at most a short gap)."""
    chain = [sizes[0]]
    for size in sizes[1:]:
        gap = text[chain[-1].end : size.start]
        if len(gap) > 12 or not _OR.match(gap.replace("model", "").replace("모델", "")):
            break
        chain.append(size)
    return chain


def _has_money(budget: Budget) -> bool:
    return budget.usd_total is not None or budget.usd_per_hour is not None


def _spot(text: str, vocab: Vocabulary) -> bool | None:
    found = [v for v, _, _ in vocab.spot.find(text)]
    if "no" in found:
        return False
    return True if found else None


def _requested_language(text: str, vocab: Vocabulary, detected: str, cues: frozenset[str]) -> str:
    """"reply in Korean" / "用英文回答" switches the reply language; naming a language alone does not."""
    if "language" not in cues:
        return detected
    names = [v for v, _, _ in vocab.language_names.find(text)]
    return names[0] if names else detected


def _clarifications(
    intent: str, gpus: tuple[GpuMention, ...], has_workload: bool, model: ModelFound, method: str | None
) -> tuple[tuple[str, str | None], ...]:
    out: list[tuple[str, str | None]] = []
    for g in gpus:
        if g.status == "ambiguous":
            out.append((CLARIFY_GPU_AMBIGUOUS, g.query))
        elif g.status == "none":
            out.append((CLARIFY_GPU_UNKNOWN, g.query))
    if model.unknown is not None and not has_workload:
        # "How many parameters?" with the closest presets (ModelMention.candidates); the size question
        # follows for a reader that does not show this kind yet.
        out.append((CLARIFY_MODEL_UNKNOWN, model.unknown))
    if intent in _NEEDS_MODEL and not has_workload and (method or model.family or not gpus):
        out.append((CLARIFY_MODEL_SIZE, model.family))
    return tuple(out)
