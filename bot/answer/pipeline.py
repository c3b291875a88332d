"""The answering pipeline: text → parse → route by intent → engine / knowledge base → card → `Reply`.

Pure except for the snapshot passed in. Whatever goes wrong inside, the caller gets a card in the
user's language (the error card, logged with a reference), never an exception or its text.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from bot.answer import actions
from bot.answer.actions import BadState, JsonValue
from bot.answer.reply import Reply, error_reply
from bot.render.messages import normalise_language

if TYPE_CHECKING:  # the snapshot module pulls in the database layer; only its type is needed here
    from knowledge.snapshot import Snapshot

log = logging.getLogger(__name__)


def answer(text: str, *, snapshot: Snapshot, lang: str | None = None, now: datetime,
           state: Mapping[str, JsonValue] | None = None) -> Reply:
    """Answer one message; `lang` forces the reply language, else the question's own language is used."""
    language = normalise_language(lang) if lang else None
    try:
        from bot.parse import parse
        from bot.answer.routes import route_ask

        ask = parse(str(text or ""), snapshot=snapshot)
        language = language or normalise_language(ask.reply_language)
        return route_ask(ask, snapshot=snapshot, language=language, now=now, previous=state)
    except Exception:  # the last line of defence: a card, never a traceback (DESIGN §4)
        reference = _reference(text, now)
        log.exception("answer failed (ref %s)", reference)
        return error_reply(language or "en", reference=reference)


def apply_action(action_id: str, value: str | Mapping[str, JsonValue], *, snapshot: Snapshot, lang: str | None,
                 now: datetime) -> Reply:
    """Answer a button press: what-ifs, picks, compare top two, share, knowledge and price buttons."""
    language = normalise_language(lang)
    try:
        from bot.answer.routes import route_action

        return route_action(actions.action_kind(action_id), actions.read_value(value), snapshot=snapshot,
                            language=language, now=now)
    except BadState as error:
        log.info("stale or foreign button %s: %s", action_id, error)
        return error_reply(language, kind="expired")
    except Exception:
        reference = _reference(f"{action_id}{value}", now)
        log.exception("action %s failed (ref %s)", action_id, reference)
        return error_reply(language, reference=reference)


def _reference(text: object, now: datetime) -> str:
    """A short id to find the logged failure (deterministic for the same input and time)."""
    return hashlib.sha256(f"{now.isoformat()}|{text}".encode("utf-8", "replace")).hexdigest()[:8]
