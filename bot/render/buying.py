"""The buying ladder card's localized pieces (bot.answer.buying decides the rows; these functions only word them)."""

from __future__ import annotations

from datetime import date

from bot.render.capacity import spells_memory
from bot.render.filters import format_table
from bot.render.findings import precision_label
from bot.render.formats import Formatter
from bot.render.serving import tokens_rate
from bot.render.views import BuyingRow, BuyingView


def title(view: BuyingView, f: Formatter) -> str:
    if view.budget_usd is not None:
        return f.messages.plain("buy.header_budget", budget=f.money(view.budget_usd, cents=False))
    return f.messages.plain("buy.header")


def price(row: BuyingRow, f: Formatter) -> str:
    """"$2,200 (street, Feb 1, 2026)" or "$1,599 (list price, 2022)": every price says what it is and when."""
    usd = f.money(row.usd, cents=False)
    if row.price_basis == "street" and row.price_when:
        return f.messages.plain("buy.price_street", price=usd, date=f.date(date.fromisoformat(row.price_when)))
    return f.messages.plain("buy.price_list", price=usd, year=row.price_when or "—")


def headline(view: BuyingView, f: Formatter) -> str:
    """The cheapest card and what it runs, and the card that runs the largest model (what the money buys)."""
    if not view.rows:
        return f.messages.text("buy.none", budget=f.money(view.budget_usd or 0, cents=False),
                               model=view.smallest_model)
    first, last = view.rows[0], view.rows[-1]
    lines = [f.messages.text("buy.cheapest", gpu=first.gpu, price=price(first, f), model=first.model,
                             precision=precision_label(first.precision, f),
                             rate=tokens_rate(first.tokens_per_s, f))]
    if last is not first:
        lines.append(f.messages.text("buy.largest", gpu=last.gpu, price=price(last, f), model=last.model,
                                     precision=precision_label(last.precision, f),
                                     rate=tokens_rate(last.tokens_per_s, f)))
    return "\n".join(lines)


def table(view: BuyingView, f: Formatter) -> str:
    """Card (memory) · price · largest model · precision · needed / usable · tokens/s for one user."""
    rows = [[r.gpu if spells_memory(r.gpu, r.vram_gb) else f"{r.gpu} ({f.gb(r.vram_gb)})", price(r, f), r.model,
             precision_label(r.precision, f), f"{f.gib(r.needed_gib)} / {f.gib(r.has_gib)}",
             f.messages.plain("cap.rate", rate=tokens_rate(r.tokens_per_s, f))] for r in view.rows]
    return format_table(rows)


def assumed(view: BuyingView, f: Formatter) -> str:
    context = next((r.context_tokens for r in view.rows if r.context_tokens), None)
    return f.messages.text("buy.assumed", context=f.number(context) if context else "—")


def fallback(view: BuyingView, f: Formatter) -> str:
    return headline(view, f).split("\n", 1)[0].replace("*", "")
