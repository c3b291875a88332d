"""Card buttons: pick a GPU, what-if changes, compare top two, open a KB entry, share to the channel.

A message others can see never changes under them: a button on it answers in its thread (the clicker's own
ephemeral answer is the only message replaced), and sharing removes only the sharer's ephemeral original.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence

from slack_bolt import App, BoltContext, Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.answer.actions import ACTION_ID
from bot.slack.core import Reply
from bot.slack.delivery import (
    CHANNEL_REFUSALS,
    body_of,
    slack_error,
    with_line_above,
    without_share_button,
)
from bot.slack.language import reply_language
from bot.slack.listeners.lazy import acknowledge, register_lazy
from bot.slack.notices import (
    SHARE_ACTION,
    Message,
    asked_line,
    notice_context_block,
    notice_message,
    shared_by_block,
)
from bot.slack.payloads import ActionBody, ActionPayload
from bot.slack.reconnect import once_more
from bot.slack.services import Services
from knowledge.slack_store import find_thread_state

log = logging.getLogger(__name__)

# The cards' button ids (bot.answer.actions.ACTION_ID): whatif.*, compare.top2, gpu.pick.N, model.pick.N,
# model.size.N, kb.open.N, price.show(.N), specs.show. `share` has its own listener, registered first.
CARD_ACTIONS = ACTION_ID
ANY_ACTION = re.compile(r".*")
# chat.postMessage into a thread is also refused when its message is gone or takes no replies.
THREAD_REFUSALS = frozenset({"thread_not_found", "message_not_found", "invalid_thread_ts", "cannot_reply_to_message"})


def register(app: App, services: Services) -> None:
    register_lazy(app.action(SHARE_ACTION), handle_share, services)
    register_lazy(app.action(CARD_ACTIONS), handle_card_action, services)
    # Link buttons and unknown ids still send block_actions: acknowledge, or Slack shows an error.
    app.action(ANY_ACTION)(acknowledge)


def handle_card_action(
    *, payload: ActionPayload, body: ActionBody, context: BoltContext, client: WebClient,
    respond: Respond | None, services: Services, **_: object,
) -> None:
    action = payload
    language = card_language(body, context, client, services)
    value = action.get("value") or (action.get("selected_option") or {}).get("value") or ""
    reply = services.core.apply_action(action["action_id"], value, lang=language, now=services.clock())
    if is_own_ephemeral(body):
        replace_own_answer(body, client, respond, reply)
    else:
        answer_in_thread(action, body, client, respond, reply)


def card_language(body: ActionBody, context: BoltContext, client: WebClient, services: Services) -> str:
    """The card's language: its thread's, else the one its text is written in, else the user's."""
    container = body.get("container") or {}
    thread_ts = (body.get("message") or {}).get("thread_ts")
    if thread_ts and container.get("channel_id"):
        thread = once_more(find_thread_state,
            services.engine, team_id=str(context.team_id), channel_id=container["channel_id"], thread_ts=thread_ts
        )
        if thread is not None:
            return thread.language
    text = (body.get("message") or {}).get("text") or ""
    return reply_language(client, services, text=text, team_id=str(context.team_id), user_id=body["user"]["id"])


def is_own_ephemeral(body: ActionBody) -> bool:
    """Only the clicker ever sees an ephemeral message: their own answer, the one message a button may replace."""
    return (body.get("container") or {}).get("is_ephemeral") is True


def replace_own_answer(body: ActionBody, client: WebClient, respond: Respond | None, reply: Reply | Message) -> None:
    """Replace the clicker's ephemeral answer (response URL); when that is no longer possible, send it fresh."""
    if respond is not None and respond.response_url and respond(replace_original=True, **body_of(reply)).status_code == 200:
        return
    send_fresh(body, client, reply)


def answer_in_thread(
    action: ActionPayload, body: ActionBody, client: WebClient, respond: Respond | None, reply: Reply | Message
) -> None:
    """A message others can see never changes under them: the new answer goes into its thread, saying who asked
    what. Where the app cannot post (not a member, the message gone), the clicker alone gets it, ephemerally."""
    user_id = body["user"]["id"]
    answer = with_line_above(reply, asked_line(reply.language, user_id, pressed_label(action)))
    channel = clicked_channel(body)
    try:
        client.chat_postMessage(channel=channel, thread_ts=thread_of(body), **body_of(answer))
        return
    except SlackApiError as exc:
        if slack_error(exc) not in CHANNEL_REFUSALS | THREAD_REFUSALS:
            raise
        log.info("what-if in %s answered to %s alone: %s", channel, user_id, slack_error(exc))
    if respond is not None and respond.response_url and respond(
        response_type="ephemeral", replace_original=False, **body_of(answer)
    ).status_code == 200:
        return
    post_ephemeral(client, channel=channel, user_id=user_id, reply=answer)


def pressed_label(action: ActionPayload) -> str:
    """The button's label (or the picked option) as the user saw it; the action id if Slack sent neither."""
    label = (action.get("text") or {}).get("text") or ((action.get("selected_option") or {}).get("text") or {}).get("text")
    return label or action["action_id"]


def clicked_channel(body: ActionBody) -> str:
    channel_ref = body.get("channel")
    return str((body.get("container") or {}).get("channel_id") or (channel_ref["id"] if channel_ref else None))


def thread_of(body: ActionBody) -> str | None:
    """The thread the clicked message is in, or the message itself as a new thread's parent."""
    container, message = body.get("container") or {}, body.get("message") or {}
    return (message.get("thread_ts") or container.get("thread_ts") or message.get("ts")
            or container.get("message_ts") or None)


def send_fresh(body: ActionBody, client: WebClient, reply: Reply | Message) -> None:
    """The answer as a new ephemeral message, saying why the old card did not change."""
    note = notice_context_block(reply.language, "expired")
    post_ephemeral(client, channel=clicked_channel(body), user_id=body["user"]["id"], reply=reply, extra=[note])


def post_ephemeral(
    client: WebClient, *, channel: str, user_id: str, reply: Reply | Message, extra: Sequence[Mapping[str, object]] = ()
) -> None:
    try:
        client.chat_postEphemeral(channel=channel, user=user_id, **body_of(reply, extra=extra))
    except SlackApiError as exc:
        if slack_error(exc) not in CHANNEL_REFUSALS:
            raise
        log.info("no way to reach user %s in %s: %s", user_id, channel, slack_error(exc))


def handle_share(
    *, payload: ActionPayload, body: ActionBody, context: BoltContext, client: WebClient,
    respond: Respond | None, services: Services, **_: object,
) -> None:
    """A copy goes to the channel; only the sharer's own ephemeral original is removed, never a message others see."""
    action = payload
    user_id = body["user"]["id"]
    reply = shared_reply(action.get("value") or "", body, context, client, services)
    shared = Message(
        text=reply.text,
        blocks=(*without_share_button(reply.blocks), shared_by_block(reply.language, user_id)),
        language=reply.language,
    )
    if is_own_ephemeral(body) and respond is not None and respond.response_url and respond(
        response_type="in_channel", replace_original=False, **body_of(shared)
    ).status_code == 200:
        respond(delete_original=True)
        return
    channel = clicked_channel(body)
    try:
        client.chat_postMessage(channel=channel, **body_of(shared))
    except SlackApiError as exc:
        if slack_error(exc) not in CHANNEL_REFUSALS:
            raise
        client.chat_postEphemeral(channel=channel, user=user_id, **body_of(notice_message(reply.language, "not_in_channel")))


def shared_reply(
    value: str, body: ActionBody, context: BoltContext, client: WebClient, services: Services
) -> Reply:
    """Our Share button carries the question (delivery.share_value); a card's own carries its state."""
    try:
        data = json.loads(value)
    except ValueError:
        data = None
    now = services.clock()
    if isinstance(data, dict) and isinstance(data.get("q"), str):
        return services.core.answer(data["q"], lang=data.get("l"), previous=None, now=now)
    language = card_language(body, context, client, services)
    return services.core.apply_action(SHARE_ACTION, value, lang=language, now=now)
