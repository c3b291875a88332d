"""`/gpu digest|alert` and the App Home lists, served by the digest helper's modules when installed.

The other side (issue 7): `bot.digest.commands.handle_digest_command` / `handle_alert_command`
(→ CommandResult with `.text`), `knowledge.digest_store.list_subscriptions` / `list_alerts`, and,
when it exists, `knowledge.digest_store.pause_workspace(engine, *, team_id, reason)`. Each is looked
up on first use; without them the user gets a localized "not available" card, never a traceback.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import MarkdownTextObject, SectionBlock

from bot.slack.notices import HomeEntry, Message, notice_message
from bot.slack.services import Services

if TYPE_CHECKING:
    from bot.digest.commands import CommandResult, HomeData
    from knowledge.snapshot import Snapshot

log = logging.getLogger(__name__)

HANDLERS = {"digest": "handle_digest_command", "alert": "handle_alert_command"}
# Their texts may link channels (<#C123>) but echo user words too: neutralise every other `<`.
_NOT_A_CHANNEL_LINK = re.compile(r"<(?!#[CG][A-Z0-9]+(?:\|[^>]*)?>)")


def _find(module_name: str, function: str) -> Callable[..., Any] | None:
    """`module_name.function`, looked up by name (so its type is the module's to declare), or None."""
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        log.info("%s is not installed", module_name)
        return None
    found = getattr(module, function, None)
    return found if callable(found) else None


def safe_mrkdwn(text: str) -> str:
    return _NOT_A_CHANNEL_LINK.sub("&lt;", text)


def user_timezone(client: WebClient | None, user_id: str) -> str:
    """The user's Slack time zone (users.info `tz`, an IANA name), else UTC; never raises."""
    if client is None:
        return "UTC"
    try:
        response = client.users_info(user=user_id)
        tz = (response.get("user") or {}).get("tz")
    except (SlackApiError, OSError) as exc:  # API error, timeout, connection: a digest time in UTC beats no answer
        log.warning("users.info for the time zone of %s failed: %s", user_id, type(exc).__name__)
        return "UTC"
    return str(tz) if isinstance(tz, str) and tz else "UTC"


def digest_command(
    services: Services, *, subcommand: str, text: str, snapshot: Snapshot | None,
    team_id: str, channel_id: str, user_id: str, lang: str, client: WebClient | None = None,
) -> Message:
    """The digest helper's answer to `/gpu digest|alert …`, or a localized "not available" card.

    With the listener's `client`, a new digest's local time is in the user's Slack time zone.
    """
    handler = _find("bot.digest.commands", HANDLERS[subcommand])
    if handler is None:
        return notice_message(lang, "unavailable")
    extra = {"tz": user_timezone(client, user_id)} if subcommand == "digest" and _sets_schedule(text) else {}
    result: CommandResult = handler(
        text, engine=services.engine, snapshot=snapshot, team_id=team_id, channel_id=channel_id,
        user_id=user_id, lang=lang, now=services.clock(), **extra,
    )
    body = safe_mrkdwn(str(result.text))
    return Message(text=body, blocks=(SectionBlock(text=MarkdownTextObject(text=body)).to_dict(),), language=lang)


def _sets_schedule(text: str) -> bool:
    """Only a subscription needs the time zone (`list`, `off`, `help` do not ask Slack)."""
    try:
        from bot.digest.texts import canonical, split_words
    except ImportError:
        return False
    words = split_words(text)
    return bool(words) and canonical(words[0]) in ("daily", "weekly")


def home_lists(
    services: Services, *, team_id: str, user_id: str, snapshot: Snapshot | None, lang: str = "en",
) -> tuple[Sequence[HomeEntry] | None, Sequence[HomeEntry] | None]:
    """Digests this user set up and their personal alerts, each with its delivery problem, in `lang`."""
    subscriptions = _find("knowledge.digest_store", "list_subscriptions")
    alerts = _find("knowledge.digest_store", "list_alerts")
    describe_sub = _find("bot.digest.commands", "describe_subscription")
    describe_alert = _find("bot.digest.commands", "describe_alert")
    sub_line = _find("bot.digest.commands", "subscription_line")
    alert_line = _find("bot.digest.commands", "alert_line")
    if not (subscriptions and alerts and describe_sub and describe_alert and sub_line and alert_line):
        return None, None
    subs = [describe_sub(s, snapshot, lang) for s in subscriptions(services.engine, team_id=team_id, include_paused=True)
            if getattr(s, "created_by", None) == user_id]
    mine = [describe_alert(a, snapshot) for a in alerts(services.engine, team_id=team_id, user_id=user_id)]
    return (
        [HomeEntry(safe_mrkdwn(sub_line(s, lang))) for s in subs],
        [HomeEntry(safe_mrkdwn(alert_line(a, lang))) for a in mine],
    )


def home_problems(services: Services, *, team_id: str, user_id: str, snapshot: Snapshot | None, lang: str) -> list[str]:
    """Delivery problems in the workspace's digests and the user's alerts, and missed digests, worded in `lang`."""
    list_for_user = _find("bot.digest.commands", "list_for_user")
    if list_for_user is None:
        return []
    home: HomeData = list_for_user(services.engine, snapshot=snapshot, team_id=team_id, user_id=user_id, lang=lang,
                         now=services.clock())
    return [safe_mrkdwn(e) for e in (*home.errors, *home.missed)]


def pause_workspace(services: Services, *, team_id: str, reason: str) -> None:
    pause = _find("knowledge.digest_store", "pause_workspace")
    if pause is None:
        log.info("digest store cannot pause team %s (%s); its scheduler records token errors", team_id, reason)
        return
    pause(services.engine, team_id=team_id, reason=reason)
