"""`/gpu`: free text and the subcommands compare, price, specs, digest, alert, lang, help (empty = help)."""

from __future__ import annotations

from typing import Any

from slack_bolt import App, BoltContext, Respond
from slack_sdk import WebClient

from bot.render.messages import LANGUAGES, normalise_language
from bot.slack.conversation import clean_text
from bot.slack.delivery import body_of, with_share_button
from bot.slack.digest_bridge import digest_command
from bot.slack.language import reply_language
from bot.slack.listeners.lazy import register_lazy
from bot.slack.notices import AUTO, Message, language_name, notice_message
from bot.slack.reconnect import once_more
from bot.slack.services import Services
from knowledge.slack_store import save_user_pref

COMMAND = "/gpu"
DIGEST_SUBCOMMANDS = frozenset({"digest", "alert"})
# Command words are syntax, not the user's language: `/gpu price 4090` from a Japanese user is
# Japanese. Digest, alert and lang arguments are all syntax ("daily 9:00"), so only the user's language counts.
SYNTAX_WORDS = frozenset({"compare", "price", "specs", "help"})
ALL_SYNTAX = frozenset({"lang", *DIGEST_SUBCOMMANDS})
NOT_SHARED = frozenset({"help", "error", "clarification"})  # cards that make no sense in a channel


def register(app: App, services: Services) -> None:
    register_lazy(app.command(COMMAND), handle_gpu, services)


def handle_gpu(
    *, payload: dict[str, Any], respond: Respond, client: WebClient, context: BoltContext,
    services: Services, **_: Any,
) -> None:
    text = clean_text(str(payload.get("text", "")))
    subcommand, _, rest = text.partition(" ")
    team_id, user_id, channel_id = str(context.team_id), str(payload["user_id"]), str(payload["channel_id"])
    own_words = "" if subcommand.lower() in ALL_SYNTAX else rest if subcommand.lower() in SYNTAX_WORDS else text
    language = reply_language(client, services, text=own_words, team_id=team_id, user_id=user_id)
    if subcommand.lower() == "lang":
        respond(response_type="ephemeral", **body_of(set_language(services, team_id, user_id, rest, language)))
        return
    if subcommand.lower() in DIGEST_SUBCOMMANDS:
        reply = once_more(digest_command,
            services, subcommand=subcommand.lower(), text=rest, snapshot=services.current_snapshot(),
            team_id=team_id, channel_id=channel_id, user_id=user_id, lang=language, client=client,
        )
        respond(response_type="ephemeral", **body_of(reply))
        return
    answer = services.core.answer(text or "help", lang=language, previous=None, now=services.clock())
    if answer.kind in NOT_SHARED:
        respond(response_type="ephemeral", **body_of(answer))
    else:
        respond(response_type="ephemeral", **with_share_button(answer, text=text))


def set_language(
    services: Services, team_id: str, user_id: str, given: str, current: str
) -> Message:
    """`/gpu lang ko` stores an override, `/gpu lang auto` clears it, `/gpu lang` shows the choices."""
    wanted = given.strip().lower()
    if wanted == AUTO:
        once_more(save_user_pref, services.engine, team_id=team_id, user_id=user_id, language_override=None)
        return notice_message(current, "lang.auto", language=language_name(current))
    tag = normalise_language(wanted) if wanted else None
    if tag is None or (tag == "en" and not wanted.startswith("en")):
        choices = ", ".join(f"`{t}` {language_name(t)}" for t in LANGUAGES) + f", `{AUTO}`"
        return notice_message(current, "lang.invalid", given=given.strip() or "?", choices=choices)
    once_more(save_user_pref, services.engine, team_id=team_id, user_id=user_id, language_override=tag)
    return notice_message(tag, "lang.set", language=language_name(tag))
