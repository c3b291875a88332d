"""The slices of Slack's payloads the listeners read, as TypedDicts (Bolt hands every payload over as a dict).

Only the keys we read are listed; Slack sends many more. `Required` marks keys Slack always sends.
"""

from __future__ import annotations

from typing import Required, TypedDict


class UserRef(TypedDict):
    id: str


class ChannelRef(TypedDict):
    id: str


class Container(TypedDict, total=False):
    """Where a pressed button lives: the message's channel, ts and thread, and whether it is ephemeral."""

    type: str  # "message" for a button on a message
    channel_id: str
    message_ts: str
    thread_ts: str
    is_ephemeral: bool  # only the clicker sees the message: it is their own answer


class MessageRef(TypedDict, total=False):
    """The message a button was pressed on."""

    ts: str
    thread_ts: str
    text: str


class PlainText(TypedDict, total=False):
    text: str


class SelectedOption(TypedDict, total=False):
    value: str
    text: PlainText  # the option as the user saw it


class ActionPayload(TypedDict, total=False):
    """One pressed button or picked option of a `block_actions` request."""

    action_id: Required[str]
    value: str
    text: PlainText  # a button's label as the user saw it
    selected_option: SelectedOption


class ActionBody(TypedDict, total=False):
    """The `block_actions` request around the action: who pressed it, and where."""

    user: Required[UserRef]
    container: Container
    message: MessageRef
    channel: ChannelRef
    trigger_id: str


class MessageEvent(TypedDict, total=False):
    """A `message` or `app_mention` event."""

    channel: Required[str]
    ts: Required[str]
    user: str
    text: str
    thread_ts: str
    channel_type: str  # "im" for a direct message
    subtype: str
    bot_id: str


class CommandPayload(TypedDict, total=False):
    """A slash command (`/gpu …`)."""

    user_id: Required[str]
    channel_id: Required[str]
    text: str


class HomeOpenedEvent(TypedDict, total=False):
    """`app_home_opened`: which user opened which tab."""

    user: Required[str]
    tab: str


class RevokedTokens(TypedDict, total=False):
    oauth: list[str]  # user ids
    bot: list[str]  # bot user ids


class TokensRevokedEvent(TypedDict, total=False):
    tokens: RevokedTokens
