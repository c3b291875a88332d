"""Any listener failure: logged with the request id, answered ephemerally in the user's language."""

from __future__ import annotations

import logging
import uuid
from functools import partial
from typing import Any

from slack_bolt import App, BoltContext, Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack.delivery import TOKEN_REFUSALS, body_of, slack_error
from bot.slack.language import cached_user_language
from bot.slack.notices import notice_message
from bot.slack.services import Services

log = logging.getLogger(__name__)


def register(app: App, services: Services) -> None:
    app.error(partial(handle_error, services=services))


def request_id(body: dict[str, Any]) -> str:
    """Slack's own id for the request when it has one, so our log lines match Slack's."""
    return str(body.get("event_id") or body.get("trigger_id") or uuid.uuid4().hex[:12])


def handle_error(
    error: Exception, body: dict[str, Any], context: BoltContext, client: WebClient,
    respond: Respond | None, *, services: Services,
) -> None:
    rid = request_id(body)
    team_id, user_id, channel_id = context.team_id, context.user_id, context.channel_id
    token_dead = isinstance(error, SlackApiError) and slack_error(error) in TOKEN_REFUSALS
    if token_dead:
        log.warning("request %s: team %s token refused (%s)", rid, team_id, slack_error(error))  # type: ignore[arg-type]
    else:
        log.error("request %s failed (team=%s user=%s)", rid, team_id, user_id, exc_info=error)
    if not (team_id and user_id):
        return
    language = cached_user_language(services, team_id=team_id, user_id=user_id)
    message = body_of(notice_message(language, "error", request_id=rid))
    try:
        if respond is not None:  # works even when the bot token does not
            respond(response_type="ephemeral", replace_original=False, **message)
        elif channel_id and not token_dead:
            client.chat_postEphemeral(channel=channel_id, user=user_id, **message)
    except SlackApiError as exc:
        log.warning("request %s: could not tell the user: %s", rid, slack_error(exc))
