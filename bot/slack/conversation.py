"""Answering a message in a conversation (DM, mention, thread follow-up), refining the thread's last request."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import timedelta

from slack_sdk import WebClient

from bot.slack.delivery import post_reply
from bot.slack.guard import current_request_key
from bot.answer.language import question_language
from bot.slack.language import user_language
from bot.slack.payloads import MessageEvent
from bot.slack.reconnect import once_more
from bot.slack.services import Services
from knowledge.slack_store import ThreadState, claim_delivery, find_thread_state, save_thread_state

log = logging.getLogger(__name__)

DM_CONTEXT_TTL = timedelta(hours=1)  # a DM an hour later is a new question, not a follow-up
DM_THREAD_KEY = "dm"
_MENTION = re.compile(r"<@[UW][A-Z0-9]+(?:\|[^>]*)?>")
# Subtypes that are still a person writing; edits, joins, bot posts and deletions are not questions.
PERSON_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})


@dataclass(frozen=True, slots=True)
class Turn:
    """One message to answer and where: `context_ts` keys the thread state, `reply_ts` threads the reply."""

    team_id: str
    channel_id: str
    user_id: str
    text: str
    message_ts: str
    context_ts: str
    reply_ts: str | None
    context_ttl: timedelta | None = None


def clean_text(text: str) -> str:
    """The question without mentions, with Slack's `&amp; &lt; &gt;` escapes undone."""
    text = _MENTION.sub(" ", text or "")
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return " ".join(text.split())


def is_from_person(event: MessageEvent, bot_user_id: str | None) -> bool:
    """True for a person's message: no bot, not ourselves, not an edit/join/deletion."""
    return (
        event.get("subtype") in PERSON_SUBTYPES
        and not event.get("bot_id")
        and bool(event.get("user"))
        and event.get("user") != bot_user_id
    )


def first_delivery(services: Services, turn: Turn) -> bool:
    """Claim the message itself: Slack's retries and the message/app_mention pair answer once."""
    key = f"msg:{turn.team_id}:{turn.channel_id}:{turn.message_ts}"
    return once_more(claim_delivery, services.engine, key, now=services.clock(), owner=current_request_key())


def answer_turn(client: WebClient, services: Services, turn: Turn) -> None:
    """Answer, refining the thread's previous request, and remember this one for the next follow-up."""
    now = services.clock()
    previous = once_more(find_thread_state,
        services.engine, team_id=turn.team_id, channel_id=turn.channel_id, thread_ts=turn.context_ts
    )
    if previous is not None and turn.context_ttl and now - previous.updated_at > turn.context_ttl:
        previous = None
    # A follow-up with no language of its own ("32k?") stays in the thread's language.
    language = (
        question_language(turn.text, services.current_snapshot())
        or (previous.language if previous else None)
        or user_language(client, services, team_id=turn.team_id, user_id=turn.user_id)
    )
    reply = services.core.answer(
        turn.text, lang=language, previous=(previous.state or None) if previous else None, now=now
    )
    posted = post_reply(client, channel=turn.channel_id, reply=reply, thread_ts=turn.reply_ts)
    if posted is None:
        return
    # A card with nothing to refine (help, error) keeps the thread's previous request.
    state = services.core.state_of(reply, turn.text) or (previous.state if previous else {})
    once_more(save_thread_state,
        services.engine,
        team_id=turn.team_id,
        channel_id=turn.channel_id,
        thread_ts=turn.context_ts,
        thread=ThreadState(user_id=turn.user_id, language=reply.language, state=dict(state), updated_at=now),
    )


def has_thread_context(services: Services, *, team_id: str, channel_id: str, thread_ts: str) -> bool:
    return (
        once_more(find_thread_state, services.engine, team_id=team_id, channel_id=channel_id, thread_ts=thread_ts)
        is not None
    )
