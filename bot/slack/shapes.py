"""What Slack sends: the slices of its request bodies that Bolt and our listeners read, as pydantic models.

Bolt's context extraction and middleware index into bodies (`body["event"]["type"]`, `team["id"]`,
`actions[0]`, `body.get("event", {}).get("bot_id")` for any request); our listeners read a command's
user and channel, a button's user and actions, a message's channel and ts. Each model says which of
those fields must be there and of what type; everything else Slack sends is allowed through untouched.
bot.slack.bodies picks the model for a body and refuses one that does not fit with 400.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    StringConstraints,
    ValidationError,
    model_validator,
)

_Slice = ConfigDict(extra="allow", frozen=True)
Text = StrictStr
# Slack's ids (T0123, U0123, C0123, D0123, E0123, W0123, B0123): upper-case letters and digits. They key
# rows (VARCHAR(32)) and delivery claims: a 10 KB "team_id" used to reach PostgreSQL as a DataError.
SlackId = Annotated[str, StringConstraints(strict=True, pattern=r"^[A-Z0-9]{1,32}$")]
# Message timestamps ("1700000000.000100"): seconds and microseconds.
Ts = Annotated[str, StringConstraints(strict=True, pattern=r"^[0-9]{1,12}(\.[0-9]{1,8})?$")]
Url = Annotated[str, StringConstraints(strict=True, pattern=r"^https?://\S+$", max_length=2000)]
ActionId = Annotated[str, StringConstraints(strict=True, max_length=255)]


class Ref(BaseModel):
    """`team`, `user`, `channel`, `enterprise` as objects: Bolt reads their `id` (and `team_id`)."""

    model_config = _Slice
    id: SlackId | None = None
    team_id: SlackId | None = None
    enterprise_id: SlackId | None = None


IdRef = SlackId | Ref


class Authorization(BaseModel):
    model_config = _Slice
    enterprise_id: SlackId | None = None
    team_id: SlackId | None = None
    user_id: SlackId | None = None
    is_enterprise_install: StrictBool | None = None


class ResponseUrl(BaseModel):
    model_config = _Slice
    response_url: Url | None = None


class View(BaseModel):
    model_config = _Slice
    type: Text | None = None
    team_id: SlackId | None = None
    app_installed_team_id: SlackId | None = None
    callback_id: Text | None = None


# `"event": null` broke Bolt's IgnoringSelfEvents middleware, `"response_urls": null` its context builder.
NOT_NULL = ("event", "actions", "view", "response_urls", "workflow_step")


class Context(BaseModel):
    """The keys Bolt reads in any body, at any level it reads them: the ids of `build_context`, the
    thread and response URL, and the `event` its middleware looks into whatever the request is
    (`body.get("event", {}).get("bot_id")` runs for a slash command too)."""

    model_config = _Slice
    type: Text | None = None
    team: IdRef | None = None
    user: IdRef | None = None
    channel: IdRef | None = None
    enterprise: IdRef | None = None
    team_id: SlackId | None = None
    user_id: SlackId | None = None
    channel_id: SlackId | None = None
    enterprise_id: SlackId | None = None
    user_team: SlackId | None = None
    thread_ts: Ts | None = None
    response_url: Url | None = None
    authorizations: list[Authorization] | None = None
    is_enterprise_install: StrictBool | Text | None = None
    is_ext_shared_channel: StrictBool | None = None
    message: Context | None = None
    previous_message: Context | None = None
    item: Context | None = None
    assistant_thread: Context | None = None
    view: View | None = None
    response_urls: list[ResponseUrl] | None = None
    event: Event | None = None
    actions: Annotated[list[dict[str, Any]], Field(min_length=1)] | None = None  # Bolt takes actions[0]
    callback_id: Text | None = None
    ssl_check: Text | None = None
    token: Text | None = None

    @model_validator(mode="before")
    @classmethod
    def _not_null(cls, data: Any) -> Any:
        """Keys Bolt reads as `body.get(key, {})` or `len(body[key])` may be missing, never null."""
        if isinstance(data, dict):
            for key in NOT_NULL:
                if key in data and data[key] is None:
                    raise ValueError(f"{key}: must not be null")
        return data


class Event(Context):
    """Any event: what Bolt's middleware and matchers read of it."""

    text: Text | None = None
    bot_id: Text | None = None
    subtype: Text | None = None
    channel_type: Text | None = None
    tab: Text | None = None


class MessageEvent(Event):
    """`message` and `app_mention`: where it was (channel, ts), who wrote what."""

    type: Literal["message", "app_mention"]
    channel: SlackId
    ts: Ts
    user: SlackId | None = None
    text: Text | None = None
    subtype: Text | None = None
    bot_id: Text | None = None
    channel_type: Text | None = None


class HomeOpened(Event):
    type: Literal["app_home_opened"]
    user: SlackId
    tab: Text | None = None


class RevokedTokens(BaseModel):
    model_config = _Slice
    oauth: list[SlackId] | None = None
    bot: list[SlackId] | None = None


class TokensRevoked(Event):
    type: Literal["tokens_revoked"]
    tokens: RevokedTokens | None = None


class OtherEvent(Event):
    type: Text


class EventCallback(Context):
    type: Literal["event_callback"]
    event: OtherEvent
    event_id: Text | None = None


class MessageCallback(EventCallback):
    event: MessageEvent  # type: ignore[assignment]  # narrowed: the listeners read these fields


class HomeOpenedCallback(EventCallback):
    event: HomeOpened  # type: ignore[assignment]


class TokensRevokedCallback(EventCallback):
    event: TokensRevoked  # type: ignore[assignment]


class UrlVerification(Context):
    type: Literal["url_verification"]
    challenge: Text


class RateLimited(Context):
    type: Literal["app_rate_limited"]


class Command(Context):
    """A slash command (form fields, always text): who, where, what, and where to answer."""

    command: Text
    team_id: SlackId
    user_id: SlackId
    channel_id: SlackId
    response_url: Url
    text: Text = ""
    trigger_id: Text | None = None


class SslCheck(Context):
    ssl_check: Text


class PlainText(BaseModel):
    """A label as the user saw it (a button's `text`, an option's `text`): quoted in a what-if reply."""

    model_config = _Slice
    text: Text | None = None


class SelectedOption(BaseModel):
    model_config = _Slice
    value: Text | None = None
    text: PlainText | None = None


class Action(BaseModel):
    model_config = _Slice
    action_id: ActionId
    value: Text | None = None
    text: PlainText | None = None
    selected_option: SelectedOption | None = None


class Container(BaseModel):
    """Where the button is: a what-if answers in this thread unless the message is the clicker's own ephemeral."""

    model_config = _Slice
    channel_id: SlackId | None = None
    message_ts: Ts | None = None
    thread_ts: Ts | None = None
    is_ephemeral: StrictBool | None = None


class MessageRef(Context):
    """The clicked message: its ts and thread (where a what-if answers) and text (its language)."""

    ts: Ts | None = None
    text: Text | None = None


class PressedBy(Ref):
    id: SlackId


class BlockActions(Context):
    """A pressed button: who pressed it, which actions, and on what message."""

    type: Literal["block_actions"]
    user: PressedBy
    actions: Annotated[list[Action], Field(min_length=1)]  # type: ignore[assignment]  # narrowed
    container: Container | None = None
    message: MessageRef | None = None
    trigger_id: Text | None = None


class OtherInteraction(Context):
    type: Text


_EVENTS: Mapping[str, type[Context]] = {
    "message": MessageCallback, "app_mention": MessageCallback, "app_home_opened": HomeOpenedCallback,
    "tokens_revoked": TokensRevokedCallback,
}
_KINDS: Mapping[str, type[Context]] = {
    "event_callback": EventCallback, "url_verification": UrlVerification, "app_rate_limited": RateLimited,
    "block_actions": BlockActions,
}


def model_for(body: Mapping[str, Any]) -> type[Context] | None:
    """Which request this claims to be: a command, an Events API envelope, an interaction, an SSL check."""
    kind = body.get("type")
    if "command" in body:
        return Command
    if kind == "event_callback":
        event = body.get("event")
        event_type = event.get("type") if isinstance(event, dict) else None
        return _EVENTS.get(event_type, EventCallback) if isinstance(event_type, str) else EventCallback
    if isinstance(kind, str):
        return _KINDS.get(kind, OtherInteraction)
    if "ssl_check" in body:
        return SslCheck
    return None


_PROBLEMS = {
    "missing": "missing", "string_type": "must be text", "bool_type": "must be true or false",
    "model_type": "must be an object", "dict_type": "must be an object", "model_attributes_type": "must be an object",
    "list_type": "must be a list", "too_short": "must not be empty", "literal_error": "is not what Slack sends",
    "string_pattern_mismatch": "is not in Slack's format", "string_too_long": "is too long",
}


def first_problem(error: ValidationError) -> str:
    """`event.channel: missing`: the first field at fault (the path inside a union member dropped)."""
    first = error.errors(include_url=False)[0]
    path = [str(part) for part in first["loc"] if not _branch(part)]
    where = ".".join(path)
    if first["type"] == "value_error":  # our own checks: the message names the field
        return ".".join([*path, str(first.get("ctx", {}).get("error", first["msg"]))])[:200]
    return f"{where or 'body'}: {_PROBLEMS.get(str(first['type']), str(first['msg']).lower())}"[:200]


def _branch(part: object) -> bool:
    """A union member's name in an error location ("constrained-str", "Ref", "str"), not a field."""
    return isinstance(part, str) and (part[:1].isupper() or "-" in part or "[" in part or
                                      part in ("str", "bool", "int", "float", "dict", "list"))
