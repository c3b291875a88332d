"""`/gpu digest|alert` and the App Home lists, served by the digest helper's modules when installed.

The other side (issue 7): `bot.digest_commands.handle_digest_command` / `handle_alert_command`
(→ CommandResult with `.text`), `knowledge.digest_store.list_subscriptions` / `list_alerts`, and,
when it exists, `knowledge.digest_store.pause_workspace(engine, *, team_id, reason)`. Each is looked
up on first use; without them the user gets a localized "not available" card, never a traceback.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

from slack_sdk.models.blocks import MarkdownTextObject, SectionBlock

from bot.slack.notices import HomeEntry, Message, notice_message
from bot.slack.services import Services

log = logging.getLogger(__name__)

HANDLERS = {"digest": "handle_digest_command", "alert": "handle_alert_command"}
# Their texts may link channels (<#C123>) but echo user words too: neutralise every other `<`.
_NOT_A_CHANNEL_LINK = re.compile(r"<(?!#[CG][A-Z0-9]+(?:\|[^>]*)?>)")


def _find(module_name: str, function: str) -> Callable[..., Any] | None:
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        log.info("%s is not installed", module_name)
        return None
    found = getattr(module, function, None)
    return found if callable(found) else None


def safe_mrkdwn(text: str) -> str:
    return _NOT_A_CHANNEL_LINK.sub("&lt;", text)


def digest_command(
    services: Services, *, subcommand: str, text: str, snapshot: Any,
    team_id: str, channel_id: str, user_id: str, lang: str,
) -> Message:
    """The digest helper's answer to `/gpu digest|alert …`, or a localized "not available" card."""
    handler = _find("bot.digest_commands", HANDLERS[subcommand])
    if handler is None:
        return notice_message(lang, "unavailable")
    result = handler(
        text, engine=services.engine, snapshot=snapshot, team_id=team_id, channel_id=channel_id,
        user_id=user_id, lang=lang, now=services.clock(),
    )
    body = safe_mrkdwn(str(result.text))
    return Message(text=body, blocks=(SectionBlock(text=MarkdownTextObject(text=body)).to_dict(),), language=lang)


def home_lists(
    services: Services, *, team_id: str, user_id: str, snapshot: Any
) -> tuple[Sequence[HomeEntry] | None, Sequence[HomeEntry] | None]:
    """Digests this user set up and their personal alerts; None when the feature is not installed."""
    subscriptions = _find("knowledge.digest_store", "list_subscriptions")
    alerts = _find("knowledge.digest_store", "list_alerts")
    describe_sub = _find("bot.digest_commands", "describe_subscription")
    describe_alert = _find("bot.digest_commands", "describe_alert")
    if not (subscriptions and alerts and describe_sub and describe_alert):
        return None, None
    subs = [describe_sub(s, snapshot) for s in subscriptions(services.engine, team_id=team_id)
            if getattr(s, "created_by", None) == user_id]
    mine = [describe_alert(a, snapshot) for a in alerts(services.engine, team_id=team_id, user_id=user_id)]
    return (
        [HomeEntry(safe_mrkdwn(f"<#{s['channel_id']}>: {s['cadence']} {s['time']} {s['timezone']}, "
                               f"≥{s['threshold_pct']}% / ${s['threshold_usd']}, {s['gpu_names']}")) for s in subs],
        [HomeEntry(safe_mrkdwn(f"#{a['id']} {a['gpu_name']} {a['op']} ${a['usd_per_gpu_hour']}/GPU-h")) for a in mine],
    )


def pause_workspace(services: Services, *, team_id: str, reason: str) -> None:
    pause = _find("knowledge.digest_store", "pause_workspace")
    if pause is None:
        log.info("digest store cannot pause team %s (%s); its scheduler records token errors", team_id, reason)
        return
    pause(services.engine, team_id=team_id, reason=reason)
