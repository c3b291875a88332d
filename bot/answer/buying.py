"""Which card to buy to run models at home: "which GPU should I buy for local LLMs?", "best GPU under $1000 for
running local models", "买什么显卡跑本地大模型".

A running question that names no model, no size and no GPU but asks what to buy (or gives a total budget) asks
for a buying ladder, not for a model size first: for every desktop or workstation card and Mac with a known price
(its newest street price new, else its launch list price: `buy_price`, dated either way), the largest model of
the capacity ladder (bot.answer.capacity.LADDER) whose running verdict fits the card's usable memory, in the
least-quantised precision that does, with its decode rate for one user; then, cheapest first, each card that
holds a larger model than every cheaper one. Within a stated budget, only the cards it buys.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from bot.answer import actions
from bot.answer.capacity import LADDER
from bot.answer.reply import Reply, reply_from
from bot.parse.ask import Ask
from bot.render.cards import render_card
from bot.render.views import BuyingRow, BuyingView
from knowledge.snapshot import Snapshot
from rules.types import Workload

SEGMENTS = ("consumer", "workstation")  # what people buy to run models at home or at their desk
ROWS = 8


def buying_question(ask: Ask) -> bool:
    """Running or serving with no model, size or GPU named: a question for the buying ladder when it also asks
    to buy (the parser's buy cue, which the router reads) or gives a total budget (`ask.budget.usd_total`)."""
    return ask.model is None and ask.params_b is None and not ask.gpus and ask.method in ("running", "serving")


def buying_rows(snapshot: Snapshot, budget_usd: float | None) -> tuple[BuyingRow, ...]:
    """The buying ladder: cheapest first, each card (within the budget) that runs a larger ladder model than every
    cheaper card."""
    ladder: list[BuyingRow] = []
    for row in snapshot.derived("buying.largest", largest_by_card):
        if budget_usd is not None and row.usd > budget_usd:
            continue
        if not ladder or row.params_b > ladder[-1].params_b:
            ladder.append(row)
    return tuple(ladder[:ROWS])


def largest_by_card(snapshot: Snapshot) -> tuple[BuyingRow, ...]:
    """Every priced desktop or workstation card and Mac with the largest ladder model it runs, cheapest first
    (built once per snapshot: a snapshot's cards, prices and models do not change)."""
    from knowledge.rule_tables import load_rule_tables
    from rules.engine import resolve_shape
    from rules.plans.serving import ServingPlan, ServingSpace, fit_serving
    from rules.plans.serving_verdict import buy_price

    tables = load_rule_tables()
    cards = []
    for gpu in snapshot.gpus.values():
        if gpu.segment not in SEGMENTS or gpu.laptop:
            continue
        known = buy_price(gpu, snapshot.purchase_prices)
        if known is not None and known[0] > 0:
            cards.append((known[0], known[1], gpu))
    largest: dict[str, BuyingRow] = {}
    for model_id in LADDER:  # smallest first: a card's row is replaced by each larger model it holds
        model = snapshot.models.get(model_id)
        if model is None:
            continue
        work = Workload(model=model, method="running", gpus=1)
        shape, _ = resolve_shape(work, "running")
        space = ServingSpace(work, shape, "running", tables)
        for usd, basis, gpu in cards:
            plan = fit_serving(gpu, space, (1,))
            if not isinstance(plan, ServingPlan):
                continue
            held = largest.get(gpu.id)
            if held is not None and held.params_b >= model.params_b:
                continue
            rate = space.rate(plan)
            largest[gpu.id] = BuyingRow(
                gpu.id, gpu.name, gpu.vram_gb, usd, basis.get("price_basis", "new"),
                basis.get("price_date") or basis.get("price_year") or "", model.id, model.name,
                model.params_b, plan.setup.weight_format, round(plan.needed_gib, 1), round(plan.has_gib, 1),
                rate.output_tokens_per_s_per_user, plan.setup.context_tokens)
    return tuple(sorted(largest.values(), key=lambda r: (r.usd, -r.params_b, -r.tokens_per_s, r.gpu_id)))


def buying_reply(ask: Ask, *, snapshot: Snapshot, lang: str, ignored: tuple[str, ...]) -> Reply:
    """The buying ladder card; a follow-up in the thread ("and for 70B?") refines a running request."""
    total = ask.budget.usd_total
    budget = float(total) if isinstance(total, (Decimal, int, float)) and total > 0 else None
    rows = buying_rows(snapshot, budget)
    smallest = next((snapshot.models[m].name for m in LADDER if m in snapshot.models), "")
    state = actions.make_state("advise", replace(Workload(method="running"), budget_usd=total))
    view = BuyingView(rows, budget, state, ask.text, ignored, smallest)
    return reply_from(render_card("buying", view, lang), ask=ask, state=state, buying=rows)
