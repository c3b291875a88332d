"""`app_mention`: answered in a thread; a mention inside a thread refines that thread's request."""

from __future__ import annotations

from slack_bolt import App, BoltContext
from slack_sdk import WebClient

from bot.slack.conversation import Turn, answer_turn, clean_text, first_delivery, is_from_person
from bot.slack.listeners.lazy import register_lazy
from bot.slack.payloads import MessageEvent
from bot.slack.services import Services


def register(app: App, services: Services) -> None:
    register_lazy(app.event("app_mention"), handle_mention, services)


def handle_mention(
    *, payload: MessageEvent, context: BoltContext, client: WebClient, services: Services, **_: object
) -> None:
    event = payload
    if not is_from_person(event, context.bot_user_id):
        return
    thread_ts = event.get("thread_ts") or event["ts"]
    turn = Turn(
        team_id=str(context.team_id), channel_id=event["channel"], user_id=event["user"],
        text=clean_text(event.get("text", "")) or "help", message_ts=event["ts"],
        context_ts=thread_ts, reply_ts=thread_ts,
    )
    if first_delivery(services, turn):
        answer_turn(client, services, turn)
