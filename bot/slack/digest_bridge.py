"""`/gpu digest|alert` and App Home lists, served by the digest helper's code when it is installed.

Contract (issue 7 owns the other side; each function is looked up lazily and optional):
- `bot.scheduler.slack_command(subcommand, text, *, engine, snapshot, team_id, channel_id, user_id,
  lang, now) -> Reply` answers `/gpu digest ...` and `/gpu alert ...`;
- `bot.scheduler.home_lines(engine, *, team_id, user_id, lang) -> (subscriptions, alerts)`, two
  lists of mrkdwn lines for App Home;
- `knowledge.digest_store.pause_workspace(engine, *, team_id, reason) -> None` when a workspace
  uninstalls the app or revokes its token.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Sequence
from typing import Any

from bot.slack.core import Reply
from bot.slack.notices import HomeEntry, Message, notice_message
from bot.slack.services import Services

log = logging.getLogger(__name__)


def _find(module_name: str, function: str) -> Callable[..., Any] | None:
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    found = getattr(module, function, None)
    return found if callable(found) else None


def digest_command(
    services: Services,
    *,
    subcommand: str,
    text: str,
    snapshot: Any,
    team_id: str,
    channel_id: str,
    user_id: str,
    lang: str,
) -> Reply | Message:
    """The digest helper's answer, or a localized "not available" card when it is not installed."""
    handler = _find("bot.scheduler", "slack_command")
    if handler is None:
        return notice_message(lang, "unavailable")
    reply: Reply = handler(
        subcommand, text, engine=services.engine, snapshot=snapshot, team_id=team_id,
        channel_id=channel_id, user_id=user_id, lang=lang, now=services.clock(),
    )
    return reply


def home_lists(
    services: Services, *, team_id: str, user_id: str, lang: str
) -> tuple[Sequence[HomeEntry] | None, Sequence[HomeEntry] | None]:
    """The user's channel digests and personal alerts; None means the feature is not installed."""
    lines = _find("bot.scheduler", "home_lines")
    if lines is None:
        return None, None
    subscriptions, alerts = lines(services.engine, team_id=team_id, user_id=user_id, lang=lang)
    return [HomeEntry(s) for s in subscriptions], [HomeEntry(a) for a in alerts]


def pause_workspace(services: Services, *, team_id: str, reason: str) -> None:
    pause = _find("knowledge.digest_store", "pause_workspace")
    if pause is None:
        log.info("no digest store: nothing to pause for team %s (%s)", team_id, reason)
        return
    pause(services.engine, team_id=team_id, reason=reason)
