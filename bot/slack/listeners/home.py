"""App Home: the reply language (with a picker), the user's digests and alerts, delivery problems, and a short guide."""

from __future__ import annotations

from slack_bolt import App, BoltContext
from slack_sdk import WebClient

from bot.slack.digest_bridge import home_lists, home_problems
from bot.slack.language import user_language
from bot.slack.listeners.lazy import register_lazy
from bot.answer.commands import AUTO
from bot.slack.notices import HOME_LANGUAGE_ACTION, HomeView, home_view
from bot.slack.payloads import ActionBody, ActionPayload, HomeOpenedEvent
from bot.slack.services import Services
from knowledge.slack_store import find_user_pref, save_user_pref


def register(app: App, services: Services) -> None:
    register_lazy(app.event("app_home_opened"), handle_home_opened, services)
    register_lazy(app.action(HOME_LANGUAGE_ACTION), handle_language_picked, services)


def handle_home_opened(
    *, payload: HomeOpenedEvent, context: BoltContext, client: WebClient, services: Services, **_: object
) -> None:
    if payload.get("tab") == "home":
        publish_home(client, services, team_id=str(context.team_id), user_id=payload["user"])


def handle_language_picked(
    *, payload: ActionPayload, body: ActionBody, context: BoltContext, client: WebClient,
    services: Services, **_: object,
) -> None:
    picked = (payload.get("selected_option") or {}).get("value")
    user_id = body["user"]["id"]
    override = None if picked in (None, AUTO) else picked
    save_user_pref(services.engine, team_id=str(context.team_id), user_id=user_id, language_override=override)
    publish_home(client, services, team_id=str(context.team_id), user_id=user_id)


def publish_home(client: WebClient, services: Services, *, team_id: str, user_id: str) -> None:
    language = user_language(client, services, team_id=team_id, user_id=user_id)
    pref = find_user_pref(services.engine, team_id=team_id, user_id=user_id)
    snapshot = services.current_snapshot()
    subscriptions, alerts = home_lists(
        services, team_id=team_id, user_id=user_id, snapshot=snapshot, lang=language
    )
    view = home_view(
        language=language,
        override=pref.language_override if pref else None,
        subscriptions=subscriptions,
        alerts=alerts,
    )
    problems = home_problems(services, team_id=team_id, user_id=user_id, snapshot=snapshot, lang=language)
    client.views_publish(user_id=user_id, view=dict(with_problems(view, language, problems)))


def with_problems(view: HomeView, language: str, problems: list[str]) -> HomeView:
    """The view with a "delivery problems" section before the guide (nothing added when all is well)."""
    if not problems:
        return view
    from bot.digest.texts import text

    body = "\n".join(f"• {p}" for p in problems[:20])
    section: dict[str, object] = {"type": "section", "text": {"type": "mrkdwn", "text": f"{text(language, 'home.problems')}\n{body}"[:3000]}}
    blocks = list(view["blocks"])
    dividers = [i for i, b in enumerate(blocks) if b.get("type") == "divider"]
    at = dividers[-1] if dividers else len(blocks)
    return {**view, "blocks": [*blocks[:at], section, *blocks[at:]]}
