"""Which language to answer in: the question's (bot.answer.language), else the user's override, else their Slack locale."""

from __future__ import annotations

import logging
from datetime import timedelta

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.answer.commands import LanguageSetting
from bot.answer.language import question_language
from bot.render.messages import normalise_language
from bot.slack.reconnect import once_more
from bot.slack.services import Services
from knowledge.slack_store import UserPref, find_user_pref, save_user_pref

log = logging.getLogger(__name__)

LOCALE_TTL = timedelta(days=7)  # people rarely change their Slack language; refresh weekly


def user_language(client: WebClient, services: Services, *, team_id: str, user_id: str) -> str:
    """The user's `/gpu lang` override, else their Slack locale (cached), else the workspace default."""
    pref = once_more(find_user_pref, services.engine, team_id=team_id, user_id=user_id)
    if pref is not None and pref.language_override:
        return pref.language_override
    return _slack_language(client, services, pref, team_id=team_id, user_id=user_id)


def language_setting(client: WebClient, services: Services, *, team_id: str, user_id: str) -> LanguageSetting:
    """The user's `/gpu lang` override (None = automatic) and their Slack language, for `/gpu lang`."""
    pref = once_more(find_user_pref, services.engine, team_id=team_id, user_id=user_id)
    override = normalise_language(pref.language_override) if pref is not None and pref.language_override else None
    return LanguageSetting(override, _slack_language(client, services, pref, team_id=team_id, user_id=user_id))


def _slack_language(
    client: WebClient, services: Services, pref: UserPref | None, *, team_id: str, user_id: str
) -> str:
    """The Slack locale's language (cached for LOCALE_TTL), else the workspace default."""
    now = services.clock()
    if pref is not None and pref.locale_checked_at and now - pref.locale_checked_at < LOCALE_TTL:
        return normalise_language(pref.slack_locale or services.default_language)
    locale = fetch_locale(client, user_id)
    once_more(save_user_pref,
        services.engine, team_id=team_id, user_id=user_id, slack_locale=locale, locale_checked_at=now
    )
    return normalise_language(locale or services.default_language)


def cached_user_language(services: Services, *, team_id: str, user_id: str) -> str:
    """Like `user_language` without calling Slack (for error replies, when Slack may be the problem)."""
    pref = once_more(find_user_pref, services.engine, team_id=team_id, user_id=user_id)
    if pref is None:
        return normalise_language(services.default_language)
    return normalise_language(pref.language_override or pref.slack_locale or services.default_language)


def fetch_locale(client: WebClient, user_id: str) -> str | None:
    try:
        response = client.users_info(user=user_id, include_locale=True)
    except SlackApiError as exc:
        log.warning("users.info for %s failed: %s", user_id, exc.response.get("error"))
        return None
    locale = (response.get("user") or {}).get("locale")
    return str(locale) if locale else None


def reply_language(
    client: WebClient, services: Services, *, text: str, team_id: str, user_id: str
) -> str:
    """The question's own language wins; otherwise the user's language."""
    return question_language(text, services.current_snapshot()) or user_language(
        client, services, team_id=team_id, user_id=user_id
    )
