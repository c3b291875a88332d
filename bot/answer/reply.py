"""The `Reply` value every answer ends in (a rendered card plus the request behind it) and its common cards."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.render.cards import Card, render_card, render_terminal
from bot.render.views import BuyingRow, CapacityRow, ErrorKind, ErrorView, HelpView

if TYPE_CHECKING:
    from bot.answer.actions import ButtonState
    from bot.parse.ask import Ask
    from rules.verdict import Verdict


@dataclass(frozen=True, slots=True)
class Reply:
    """What goes back to the person: Slack `text` + `blocks`, the language, the card kind, the parsed ask.

    `state` is the request as compact JSON (keep it per thread; pass it back as `answer(state=...)`).
    """

    text: str
    blocks: tuple[Mapping[str, Any], ...]
    language: str
    kind: str
    ask: Ask | None = None
    state: ButtonState | None = None
    card: Card | None = field(default=None, repr=False)
    verdict: Verdict | None = field(default=None, repr=False)  # the engine's result behind an advice card
    capacity: tuple[CapacityRow, ...] | None = field(default=None, repr=False)  # a capacity card's verdicts
    buying: tuple[BuyingRow, ...] | None = field(default=None, repr=False)  # a buying ladder's cards

    def message(self) -> dict[str, Any]:
        return {"text": self.text, "blocks": list(self.blocks)}

    def terminal(self) -> str:
        return render_terminal(self.card) if self.card is not None else self.text + "\n"


def reply_from(card: Card, *, ask: Ask | None = None, state: ButtonState | None = None,
               verdict: Verdict | None = None, capacity: tuple[CapacityRow, ...] | None = None,
               buying: tuple[BuyingRow, ...] | None = None) -> Reply:
    return Reply(card.text, card.blocks, card.language, card.kind, ask, state, card, verdict, capacity, buying)


def help_reply(language: str, question: str = "", ask: Ask | None = None) -> Reply:
    """The help card; a request in words for a price alert or a digest opens with that command's syntax (they are
    set with `/gpu alert …` and `/gpu digest …`, which say what they changed)."""
    command_help = {"alert": "alert.help", "digest": "digest.help"}.get(ask.intent) if ask is not None else None
    return reply_from(render_card("help", HelpView(question, command_help), language), ask=ask)


def error_reply(language: str, *, kind: ErrorKind = "generic", reference: str | None = None) -> Reply:
    view = ErrorView(kind=kind, reference=reference)
    return reply_from(render_card("error", view, language))
