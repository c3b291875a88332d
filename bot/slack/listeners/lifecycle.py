"""`app_uninstalled` and `tokens_revoked`: forget the workspace's tokens and state, pause its digests."""

from __future__ import annotations

import logging
from slack_bolt import App, BoltContext

from bot.slack.digest_bridge import pause_workspace
from bot.slack.listeners.lazy import register_lazy
from bot.slack.payloads import TokensRevokedEvent
from bot.slack.reconnect import once_more
from bot.slack.services import Services
from knowledge.slack_store import forget_workspace

log = logging.getLogger(__name__)


def register(app: App, services: Services) -> None:
    register_lazy(app.event("app_uninstalled"), handle_uninstalled, services)
    register_lazy(app.event("tokens_revoked"), handle_tokens_revoked, services)


def handle_uninstalled(*, context: BoltContext, services: Services, **_: object) -> None:
    team_id = str(context.team_id)
    log.warning("app uninstalled from team %s (enterprise %s)", team_id, context.enterprise_id)
    if services.installation_store is not None:
        services.installation_store.delete_all(enterprise_id=context.enterprise_id, team_id=context.team_id)
    once_more(forget_workspace, services.engine, team_id=team_id)
    once_more(pause_workspace, services, team_id=team_id, reason="app_uninstalled")


def handle_tokens_revoked(
    *, payload: TokensRevokedEvent, context: BoltContext, services: Services, **_: object
) -> None:
    tokens = payload.get("tokens") or {}
    team_id = str(context.team_id)
    log.warning("tokens revoked in team %s: %s", team_id, {k: len(v) for k, v in tokens.items() if isinstance(v, list)})
    store = services.installation_store
    for user_id in tokens.get("oauth") or ():
        if store is not None:
            store.delete_installation(enterprise_id=context.enterprise_id, team_id=context.team_id, user_id=user_id)
    if tokens.get("bot"):
        if store is not None:
            store.delete_bot(enterprise_id=context.enterprise_id, team_id=context.team_id)
        once_more(pause_workspace, services, team_id=team_id, reason="token_revoked")
