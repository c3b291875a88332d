"""Any listener failure: logged with the request id, answered ephemerally in the user's language."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from functools import partial

from slack_bolt import App, BoltContext, Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from sqlalchemy.exc import SQLAlchemyError

from bot.slack.delivery import TOKEN_REFUSALS, body_of, slack_error
from bot.slack.language import cached_user_language
from bot.slack.notices import notice_message
from bot.slack.services import Services

log = logging.getLogger(__name__)


def register(app: App, services: Services) -> None:
    app.error(partial(handle_error, services=services))


def request_id(body: Mapping[str, object]) -> str:
    """Slack's own id for the request when it has one, so our log lines match Slack's."""
    return str(body.get("event_id") or body.get("trigger_id") or uuid.uuid4().hex[:12])


def error_language(services: Services, *, team_id: str, user_id: str) -> str:
    """The user's cached language, or the default when the database is the thing that failed."""
    try:
        return cached_user_language(services, team_id=team_id, user_id=user_id)
    except SQLAlchemyError as exc:
        log.warning("language of %s unreadable (%s): answering in %s", user_id, type(exc).__name__,
                    services.default_language)
        return services.default_language


def handle_error(
    error: Exception, body: Mapping[str, object], context: BoltContext, client: WebClient,
    respond: Respond | None, *, services: Services,
) -> None:
    rid = request_id(body)
    team_id, user_id, channel_id = context.team_id, context.user_id, context.channel_id
    code = slack_error(error) if isinstance(error, SlackApiError) else None
    token_dead = code in TOKEN_REFUSALS
    if token_dead:
        log.warning("request %s: team %s token refused (%s)", rid, team_id, code)
    elif isinstance(error, SlackApiError) and error.response.status_code == 429:
        log.error("request %s: answer not delivered, Slack still rate-limiting %s after every retry (team=%s user=%s)",
                  rid, error.response.api_url, team_id, user_id)
    else:
        log.error("request %s failed (team=%s user=%s)", rid, team_id, user_id, exc_info=error)
    if not (team_id and user_id):
        return
    language = error_language(services, team_id=team_id, user_id=user_id)
    message = body_of(notice_message(language, "error", request_id=rid))
    try:
        # Events get a Respond too, without a URL (calling it raises): only a real response URL counts.
        if respond is not None and respond.response_url:  # works even when the bot token does not
            respond(response_type="ephemeral", replace_original=False, **message)
        elif channel_id and not token_dead:
            client.chat_postEphemeral(channel=channel_id, user=user_id, **message)
    except SlackApiError as exc:
        log.warning("request %s: could not tell the user: %s", rid, slack_error(exc))
