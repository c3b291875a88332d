"""What runs on the user's own card: "what can I run on a 4060 Ti 16GB?", "biggest model for my 4090?".

A running question that names hardware but no model is not a request to pick a model size first: it asks what
that hardware holds. The answer runs the engine's running verdict (one user, the engine's default context) for
a ladder of widely run open models on exactly the named GPUs, and shows each verdict: in its memory and in which
precision, only with CPU offload, or not at all, with the decode rate. The ladder spans 3B to 671B, dense and
mixture-of-experts, so every card from a laptop GPU to a 512 GB Mac finds its boundary in it.
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot.answer import actions
from bot.answer.advice import evaluate, read_as
from bot.answer.reply import Reply, reply_from
from bot.parse.ask import Ask
from bot.render.cards import render_card
from bot.render.views import CapacityRow, CapacityView, TrainingCapacityRow, TrainingFit
from knowledge.snapshot import Snapshot
from rules.types import Method, Workload

# Widely run open-weight models, smallest first (catalog ids; ones missing from a catalog are skipped): the
# sizes people ask about for local use (3B, 8B, 14B, 20-32B, 70B) and the large mixture-of-experts models
# (gpt-oss-120b, Qwen3 235B-A22B, DeepSeek-R1) whose total weights decide the fit and whose active ones the speed.
LADDER = ("llama-3.2-3b", "llama-3.1-8b", "qwen3-14b", "gpt-oss-20b", "mistral-small-24b", "qwen3-30b-a3b",
          "qwen3-32b", "llama-3.3-70b", "gpt-oss-120b", "qwen3-235b-a22b", "deepseek-r1")
# Fine-tuning on one's own cards: the dense models people fine-tune at home and at work, 1B to 70B.
TRAINING_LADDER = ("llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b", "qwen3-14b", "mistral-small-24b", "qwen3-32b",
                   "llama-3.3-70b")
METHODS = ("running", "serving")
TRAINING_METHODS: tuple[Method, ...] = ("full", "lora", "qlora")
# "What can I fine-tune on my 4090?": a training question asks what the hardware holds only with words like these
# (a training question about a card without them, "fine-tune on my 4090, is PCIe slow?", is a knowledge question).
CAPACITY_CUE = re.compile(
    r"what can i|which models?|what models?|biggest model|largest model|which llms?|"
    r"welche[sn]? modell|was kann ich|größte modell|qué modelos?|que modelos?|modelo más grande|quels? modèles?|"
    r"plus gros modèle|mô hình nào|mô hình lớn nhất|什么模型|哪些模型|哪个模型|最大的模型|能.{0,4}什么|"
    r"どのモデル|どんなモデル|最大のモデル|何が|어떤 모델|가장 큰 모델|뭘|무엇을", re.IGNORECASE)


def _asks_for_capacity(method: str | None, text: str) -> bool:
    """Running or serving; or training with a capacity word in `text` (CAPACITY_CUE)."""
    return method in METHODS or (method in TRAINING_METHODS and CAPACITY_CUE.search(text) is not None)


def asks_capacity(workload: Workload, snapshot: Snapshot, text: str = "") -> bool:
    """A question on named hardware with no model or size: what that hardware can hold (`_asks_for_capacity`)."""
    if workload.model is not None or workload.params_b is not None or workload.gpu not in snapshot.gpus:
        return False
    return _asks_for_capacity(workload.method, text)


def capacity_question(ask: Ask) -> bool:
    """The parsed form of `asks_capacity`: a GPU found, no model and no size. Asked before the knowledge base is
    tried: "mô hình nào chạy được trên 4090?" is about the card's memory, not about its NVLink."""
    if ask.model is not None or ask.params_b is not None or not any(g.status == "found" for g in ask.gpus):
        return False
    return _asks_for_capacity(ask.method, ask.text)


def training_rows(workload: Workload, snapshot: Snapshot) -> tuple[tuple[TrainingCapacityRow, ...], int]:
    """Per ladder model, whether a full fine-tune, LoRA and QLoRA fit exactly the named GPUs (the engine's fit
    search at that count, its savers allowed: gradient checkpointing, 8-bit optimizer, offload last), and the
    sequence length the plans assumed."""
    from knowledge.rule_tables import load_rule_tables
    from rules.engine import resolve_shape
    from rules.plans.fit import CandidateSpace, fit_outcome

    assert workload.gpu is not None
    gpu = snapshot.gpus[workload.gpu]
    tables = load_rule_tables()
    host_ram = tables.training.host_ram_gib_per_gpu.get(gpu.segment, float("inf"))
    counts = (workload.gpus or 1,)
    rows, seq_len = [], 0
    for model_id in TRAINING_LADDER:
        model = snapshot.models.get(model_id)
        if model is None:
            continue
        fits = []
        for method in TRAINING_METHODS:
            work = replace(workload, model=model, method=method, gpu=None, gpus=counts[0])
            shape, _ = resolve_shape(work, method)
            space = CandidateSpace(work, shape, method, 0.0, unified=gpu.unified_memory)
            outcome = fit_outcome(gpu, space, counts, tables.headroom_fraction, host_ram)
            candidate = outcome.candidate
            if candidate is None:
                fits.append(TrainingFit(method, "no", outcome.needed_gib))
                continue
            seq_len = seq_len or candidate.setup.seq_len
            state = "offload" if candidate.setup.offload and candidate.host_gib > 0 else "fits"
            fits.append(TrainingFit(method, state, round(candidate.estimate.per_gpu_gib, 1)))
        rows.append(TrainingCapacityRow(model_id, model.name, model.params_b, tuple(fits)))
    return tuple(rows), seq_len


def capacity_rows(workload: Workload, snapshot: Snapshot) -> tuple[CapacityRow, ...]:
    """The engine's verdict for each ladder model on exactly the named GPUs (one user: a running verdict)."""
    assert workload.gpu is not None
    pool = {workload.gpu: snapshot.gpus[workload.gpu]}
    base = replace(workload, method="running", concurrency=None, gpus=workload.gpus or 1)
    rows = []
    for model_id in LADDER:
        model = snapshot.models.get(model_id)
        if model is None:
            continue
        verdict = evaluate(replace(base, model=model), snapshot, pool)
        pinned = verdict.pinned
        if pinned is None:
            continue
        tp = pinned.throughput
        context = verdict.assumptions.get("context_tokens")
        rows.append(CapacityRow(
            model_id, model.name, model.params_b, pinned.fits, pinned.precision, pinned.needed_gib, pinned.has_gib,
            pinned.offload_gib, tp.output_tokens_per_s_per_user if tp is not None else None,
            int(context) if isinstance(context, (int, float)) else None))
    return tuple(rows)


def capacity_reply(workload: Workload, *, snapshot: Snapshot, lang: str, question: str, ignored: tuple[str, ...],
                   ask: Ask | None) -> Reply:
    """The capacity card, with a button per model near the card's limit for that model's whole answer."""
    assert workload.gpu is not None
    if workload.method in TRAINING_METHODS:
        trained, seq_len = training_rows(workload, snapshot)
        state = actions.make_state("advise", replace(workload, concurrency=None))
        view = CapacityView(snapshot.gpus[workload.gpu], workload.gpus or 1, (), state, question, ignored,
                            training=trained, seq_len=seq_len, read_as=read_as(ask, workload, snapshot))
        return reply_from(render_card("capacity", view, lang), ask=ask, state=state)
    rows = capacity_rows(workload, snapshot)
    state = actions.make_state("advise", replace(workload, method="running", concurrency=None))
    view = CapacityView(snapshot.gpus[workload.gpu], workload.gpus or 1, rows, state, question, ignored,
                        read_as=read_as(ask, workload, snapshot))
    return reply_from(render_card("capacity", view, lang), ask=ask, state=state, capacity=rows)
