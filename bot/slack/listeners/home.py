"""App Home: the reply language (with a picker), the user's digests and alerts, and a short guide."""

from __future__ import annotations

from typing import Any

from slack_bolt import App, BoltContext
from slack_sdk import WebClient

from bot.slack.digest_bridge import home_lists
from bot.slack.language import user_language
from bot.slack.listeners.lazy import register_lazy
from bot.slack.notices import AUTO, HOME_LANGUAGE_ACTION, home_view
from bot.slack.services import Services
from knowledge.slack_store import find_user_pref, save_user_pref


def register(app: App, services: Services) -> None:
    register_lazy(app.event("app_home_opened"), handle_home_opened, services)
    register_lazy(app.action(HOME_LANGUAGE_ACTION), handle_language_picked, services)


def handle_home_opened(
    *, payload: dict[str, Any], context: BoltContext, client: WebClient, services: Services, **_: Any
) -> None:
    if payload.get("tab") == "home":
        publish_home(client, services, team_id=str(context.team_id), user_id=payload["user"])


def handle_language_picked(
    *, payload: dict[str, Any], body: dict[str, Any], context: BoltContext, client: WebClient,
    services: Services, **_: Any,
) -> None:
    picked = (payload.get("selected_option") or {}).get("value")
    user_id = body["user"]["id"]
    override = None if picked in (None, AUTO) else picked
    save_user_pref(services.engine, team_id=str(context.team_id), user_id=user_id, language_override=override)
    publish_home(client, services, team_id=str(context.team_id), user_id=user_id)


def publish_home(client: WebClient, services: Services, *, team_id: str, user_id: str) -> None:
    language = user_language(client, services, team_id=team_id, user_id=user_id)
    pref = find_user_pref(services.engine, team_id=team_id, user_id=user_id)
    subscriptions, alerts = home_lists(
        services, team_id=team_id, user_id=user_id, snapshot=services.current_snapshot()
    )
    view = home_view(
        language=language,
        override=pref.language_override if pref else None,
        subscriptions=subscriptions,
        alerts=alerts,
    )
    client.views_publish(user_id=user_id, view=view)
