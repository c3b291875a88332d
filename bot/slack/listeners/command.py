"""`/gpu`: free text and the subcommands compare, price, specs, digest, alert, lang, help (empty = help)."""

from __future__ import annotations

from slack_bolt import App, BoltContext, Respond
from slack_sdk import WebClient

from bot.answer.commands import AUTO, LANGUAGE_CHOICES, answer_language_command, read_command, shareable
from bot.slack.conversation import clean_text
from bot.slack.delivery import body_of, with_share_button
from bot.slack.digest_bridge import digest_command
from bot.slack.language import language_setting, reply_language
from bot.slack.listeners.lazy import register_lazy
from bot.slack.notices import Message, language_name, notices_message
from bot.slack.payloads import CommandPayload
from bot.slack.reconnect import once_more
from bot.slack.services import Services
from knowledge.slack_store import save_user_pref

COMMAND = "/gpu"


def register(app: App, services: Services) -> None:
    register_lazy(app.command(COMMAND), handle_gpu, services)


def handle_gpu(
    *, payload: CommandPayload, respond: Respond, client: WebClient, context: BoltContext,
    services: Services, **_: object,
) -> None:
    command = read_command(clean_text(str(payload.get("text", ""))))
    team_id, user_id, channel_id = str(context.team_id), str(payload["user_id"]), str(payload["channel_id"])
    if command.kind == "lang":
        respond(response_type="ephemeral", **body_of(set_language(client, services, team_id, user_id, command.rest)))
        return
    language = reply_language(client, services, text=command.own_words, team_id=team_id, user_id=user_id)
    if command.kind in ("digest", "alert"):
        reply = once_more(digest_command,
            services, subcommand=command.kind, text=command.rest, snapshot=services.current_snapshot(),
            team_id=team_id, channel_id=channel_id, user_id=user_id, lang=language, client=client,
        )
        respond(response_type="ephemeral", **body_of(reply))
        return
    answer = services.core.answer(command.text, lang=language, previous=None, now=services.clock())
    if shareable(answer.kind):
        respond(response_type="ephemeral", **with_share_button(answer, text=command.text))
    else:
        respond(response_type="ephemeral", **body_of(answer))


def set_language(client: WebClient, services: Services, team_id: str, user_id: str, given: str) -> Message:
    """`/gpu lang ko` stores an override, `/gpu lang auto` clears it and says what it detects from,
    `/gpu lang` shows the current setting and the choices (decided in bot.answer.commands)."""
    setting = language_setting(client, services, team_id=team_id, user_id=user_id)
    decided = answer_language_command(given, setting)
    if decided.store is not None or decided.clear:
        once_more(save_user_pref,
            services.engine, team_id=team_id, user_id=user_id, language_override=decided.store,
        )
    choices = ", ".join(f"`{t}` {language_name(t)}" for t in LANGUAGE_CHOICES) + f", `{AUTO}`"
    named = {k: language_name(v) if k in ("language", "slack") else v for k, v in decided.params.items()}
    return notices_message(decided.language, decided.keys, choices=choices, **named)
