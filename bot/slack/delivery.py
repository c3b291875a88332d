"""Posting replies: message bodies, thread replies, ephemeral fallbacks, and Slack's refusal codes."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.render.cards import BlockDict, SlackMessage
from bot.slack.core import Reply
from bot.slack.notices import SHARE_ACTION, Message, line_block, share_block

log = logging.getLogger(__name__)

# The channel will not take our message; the user has to act (invite us) or it is gone.
CHANNEL_REFUSALS = frozenset({"not_in_channel", "channel_not_found", "is_archived", "restricted_action"})
# The workspace token no longer works: uninstalled, revoked, or rotated away.
TOKEN_REFUSALS = frozenset({"invalid_auth", "token_revoked", "account_inactive", "not_authed", "token_expired"})
SHARE_VALUE_LIMIT = 2000  # Slack's maximum length of a button value


def slack_error(exc: SlackApiError) -> str:
    return str(exc.response.get("error") or "unknown_error")


def body_of(reply: Reply | Message, extra: Sequence[Mapping[str, object]] = ()) -> SlackMessage:
    """`text` + `blocks` keyword arguments for chat.* and response URLs."""
    return {"text": reply.text, "blocks": [dict(b) for b in reply.blocks] + [dict(b) for b in extra]}


def with_line_above(reply: Reply | Message, line: str) -> Message:
    """The answer with a line above it ("<@U…> asked: *Use spot*"), in the fallback text too (notifications)."""
    blocks = (line_block(line), *(dict(b) for b in reply.blocks))
    return Message(text=f"{line}\n{reply.text}", blocks=blocks, language=reply.language)


def _elements(block: Mapping[str, object]) -> list[Mapping[str, object]]:
    """An actions block's elements (buttons, selects)."""
    elements = block.get("elements", ())
    return [e for e in elements if isinstance(e, Mapping)] if isinstance(elements, list | tuple) else []


def has_share_button(blocks: Sequence[Mapping[str, object]]) -> bool:
    return any(
        element.get("action_id") == SHARE_ACTION
        for block in blocks
        if block.get("type") == "actions"
        for element in _elements(block)
    )


def share_value(text: str, language: str) -> str | None:
    """What the Share button carries to re-create the card in the channel; None if it cannot fit."""
    value = json.dumps({"q": text, "l": language}, ensure_ascii=False, separators=(",", ":"))
    return value if len(value) <= SHARE_VALUE_LIMIT else None


def with_share_button(reply: Reply, *, text: str) -> SlackMessage:
    """An ephemeral answer's body, with a Share button unless the card already has one."""
    value = share_value(text, reply.language)
    if has_share_button(reply.blocks) or value is None:
        return body_of(reply)
    return body_of(reply, extra=[share_block(reply.language, value)])


def without_share_button(blocks: Sequence[Mapping[str, object]]) -> list[BlockDict]:
    """The card as it goes into the channel: the Share button has done its job."""
    kept: list[BlockDict] = []
    for block in blocks:
        if block.get("type") != "actions":
            kept.append(dict(block))
            continue
        elements = [e for e in _elements(block) if e.get("action_id") != SHARE_ACTION]
        if elements:
            kept.append({**block, "elements": elements})
    return kept


def post_reply(
    client: WebClient, *, channel: str, reply: Reply | Message, thread_ts: str | None = None
) -> str | None:
    """Post in a channel or thread; the message ts, or None when the channel refused it (logged)."""
    try:
        response = client.chat_postMessage(channel=channel, thread_ts=thread_ts, **body_of(reply))
    except SlackApiError as exc:
        if slack_error(exc) in CHANNEL_REFUSALS:
            log.warning("channel %s refused our message: %s", channel, slack_error(exc))
            return None
        raise
    return str(response.get("ts"))
