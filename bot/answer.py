"""The answering pipeline: text → parse → route by intent → engine / knowledge base → card → `Reply`.

Pure except for the snapshot passed in. Whatever goes wrong inside, the caller gets a card in the
user's language (the error card, logged with a reference), never an exception or its text.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.render import actions
from bot.render.actions import BadState
from bot.render.cards import Card, render_card, render_terminal
from bot.render.messages import normalise_language
from bot.render.views import ErrorView, HelpView

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Reply:
    """What goes back to the person: Slack `text` + `blocks`, the language, the card kind, the parsed ask.

    `state` is the request as compact JSON (keep it per thread; pass it back as `answer(state=...)`).
    """

    text: str
    blocks: tuple[Mapping[str, Any], ...]
    language: str
    kind: str
    ask: Any = None
    state: Mapping[str, Any] | None = None
    card: Card | None = field(default=None, repr=False)

    def message(self) -> dict[str, Any]:
        return {"text": self.text, "blocks": list(self.blocks)}

    def terminal(self) -> str:
        return render_terminal(self.card) if self.card is not None else self.text + "\n"


def reply_from(card: Card, *, ask: Any = None, state: Mapping[str, Any] | None = None) -> Reply:
    return Reply(card.text, card.blocks, card.language, card.kind, ask, state, card)


def answer(text: str, *, snapshot: Any, lang: str | None = None, now: datetime,
           state: Mapping[str, Any] | None = None) -> Reply:
    """Answer one message; `lang` forces the reply language, else the question's own language is used."""
    language = normalise_language(lang) if lang else None
    try:
        from bot.parse import parse
        from bot.render.routes import route_ask

        ask = parse(str(text or ""), snapshot=snapshot)
        language = language or normalise_language(ask.reply_language)
        return route_ask(ask, snapshot=snapshot, language=language, now=now, previous=state)
    except Exception:  # the last line of defence: a card, never a traceback (DESIGN §4)
        reference = _reference(text, now)
        log.exception("answer failed (ref %s)", reference)
        return error_reply(language or "en", reference=reference)


def apply_action(action_id: str, value: str | Mapping[str, Any], *, snapshot: Any, lang: str | None,
                 now: datetime) -> Reply:
    """Answer a button press: what-ifs, picks, compare top two, share, knowledge and price buttons."""
    language = normalise_language(lang)
    try:
        from bot.render.routes import route_action

        return route_action(actions.action_kind(action_id), actions.read_value(value), snapshot=snapshot,
                            language=language, now=now)
    except BadState as error:
        log.info("stale or foreign button %s: %s", action_id, error)
        return error_reply(language, kind="expired")
    except Exception:
        reference = _reference(f"{action_id}{value}", now)
        log.exception("action %s failed (ref %s)", action_id, reference)
        return error_reply(language, reference=reference)


def help_reply(language: str, question: str = "", ask: Any = None) -> Reply:
    return reply_from(render_card("help", HelpView(question), language), ask=ask)


def error_reply(language: str, *, kind: str = "generic", reference: str | None = None) -> Reply:
    view = ErrorView(kind=kind, reference=reference)  # type: ignore[arg-type]
    return reply_from(render_card("error", view, language))


def _reference(text: Any, now: datetime) -> str:
    """A short id to find the logged failure (deterministic for the same input and time)."""
    return hashlib.sha256(f"{now.isoformat()}|{text}".encode("utf-8", "replace")).hexdigest()[:8]
