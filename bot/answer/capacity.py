"""What runs on the user's own card: "what can I run on a 4060 Ti 16GB?", "biggest model for my 4090?".

A running question that names hardware but no model is not a request to pick a model size first: it asks what
that hardware holds. The answer runs the engine's running verdict (one user, the engine's default context) for
a ladder of widely run open models on exactly the named GPUs, and shows each verdict: in its memory and in which
precision, only with CPU offload, or not at all, with the decode rate. The ladder spans 3B to 671B, dense and
mixture-of-experts, so every card from a laptop GPU to a 512 GB Mac finds its boundary in it.
"""

from __future__ import annotations

from dataclasses import replace

from bot.answer import actions
from bot.answer.advice import evaluate
from bot.answer.reply import Reply, reply_from
from bot.parse.ask import Ask
from bot.render.cards import render_card
from bot.render.views import CapacityRow, CapacityView
from knowledge.snapshot import Snapshot
from rules.types import Workload

# Widely run open-weight models, smallest first (catalog ids; ones missing from a catalog are skipped): the
# sizes people ask about for local use (3B, 8B, 14B, 20-32B, 70B) and the large mixture-of-experts models
# (gpt-oss-120b, Qwen3 235B-A22B, DeepSeek-R1) whose total weights decide the fit and whose active ones the speed.
LADDER = ("llama-3.2-3b", "llama-3.1-8b", "qwen3-14b", "gpt-oss-20b", "mistral-small-24b", "qwen3-30b-a3b",
          "qwen3-32b", "llama-3.3-70b", "gpt-oss-120b", "qwen3-235b-a22b", "deepseek-r1")
METHODS = ("running", "serving")


def asks_capacity(workload: Workload, snapshot: Snapshot) -> bool:
    """A running or serving question on named hardware with no model or size: what that hardware can hold."""
    return (workload.method in METHODS and workload.model is None and workload.params_b is None
            and workload.gpu is not None and workload.gpu in snapshot.gpus)


def capacity_question(ask: Ask) -> bool:
    """The parsed form of `asks_capacity`: running or serving, a GPU found, no model and no size. Asked before the
    knowledge base is tried: "mô hình nào chạy được trên 4090?" is about the card's memory, not about its NVLink."""
    return (ask.method in METHODS and ask.model is None and ask.params_b is None
            and any(g.status == "found" for g in ask.gpus))


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
    rows = capacity_rows(workload, snapshot)
    state = actions.make_state("advise", replace(workload, method="running", concurrency=None))
    view = CapacityView(snapshot.gpus[workload.gpu], workload.gpus or 1, rows, state, question, ignored)
    return reply_from(render_card("capacity", view, lang), ask=ask, state=state, capacity=rows)
