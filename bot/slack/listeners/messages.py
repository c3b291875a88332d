"""`message` events: direct messages answered inline, thread follow-ups where we answered before."""

from __future__ import annotations

from slack_bolt import App, BoltContext
from slack_sdk import WebClient

from bot.slack.conversation import (
    DM_CONTEXT_TTL,
    DM_THREAD_KEY,
    Turn,
    answer_turn,
    clean_text,
    first_delivery,
    has_thread_context,
    is_from_person,
)
from bot.slack.listeners.lazy import register_lazy
from bot.slack.payloads import MessageEvent
from bot.slack.services import Services


def register(app: App, services: Services) -> None:
    # One listener for every message event, so none goes unacknowledged (Slack retries a 404).
    register_lazy(app.event("message"), handle_message, services)


def handle_message(
    *, payload: MessageEvent, context: BoltContext, client: WebClient, services: Services, **_: object
) -> None:
    event = payload
    if not is_from_person(event, context.bot_user_id):
        return
    turn = direct_turn(event, context) if event.get("channel_type") == "im" else None
    if turn is None:
        turn = thread_turn(event, context, services)
    if turn is None or not turn.text or not first_delivery(services, turn):
        return
    answer_turn(client, services, turn)


def direct_turn(event: MessageEvent, context: BoltContext) -> Turn:
    """A DM is answered inline; the DM (or its thread) keeps the context for follow-ups."""
    thread_ts = event.get("thread_ts")
    return Turn(
        team_id=str(context.team_id), channel_id=event["channel"], user_id=event["user"],
        text=clean_text(event.get("text", "")), message_ts=event["ts"],
        context_ts=thread_ts or DM_THREAD_KEY, reply_ts=thread_ts,
        context_ttl=None if thread_ts else DM_CONTEXT_TTL,
    )


def thread_turn(event: MessageEvent, context: BoltContext, services: Services) -> Turn | None:
    """A reply in a channel thread we answered in refines that thread's request; others are not ours."""
    thread_ts = event.get("thread_ts")
    if not thread_ts or thread_ts == event.get("ts"):
        return None
    team_id, channel_id = str(context.team_id), event["channel"]
    if not has_thread_context(services, team_id=team_id, channel_id=channel_id, thread_ts=thread_ts):
        return None
    return Turn(
        team_id=team_id, channel_id=channel_id, user_id=event["user"],
        text=clean_text(event.get("text", "")), message_ts=event["ts"],
        context_ts=thread_ts, reply_ts=thread_ts,
    )
