"""`/gpu`: free text and the subcommands compare, price, specs, digest, alert, lang, help (empty = help)."""

from __future__ import annotations

from slack_bolt import App, BoltContext, Respond
from slack_sdk import WebClient

from bot.answer.commands import AUTO, choose_language, read_command, shareable
from bot.slack.conversation import clean_text
from bot.slack.delivery import body_of, with_share_button
from bot.slack.digest_bridge import digest_command
from bot.slack.language import reply_language
from bot.slack.listeners.lazy import register_lazy
from bot.slack.notices import Message, language_name, notice_message
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
    language = reply_language(client, services, text=command.own_words, team_id=team_id, user_id=user_id)
    if command.kind == "lang":
        respond(response_type="ephemeral", **body_of(set_language(services, team_id, user_id, command.rest, language)))
        return
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


def set_language(
    services: Services, team_id: str, user_id: str, given: str, current: str
) -> Message:
    """`/gpu lang ko` stores an override, `/gpu lang auto` clears it, `/gpu lang` shows the choices."""
    choice = choose_language(given)
    if choice.auto:
        once_more(save_user_pref, services.engine, team_id=team_id, user_id=user_id, language_override=None)
        return notice_message(current, "lang.auto", language=language_name(current))
    if choice.tag is None:
        choices = ", ".join(f"`{t}` {language_name(t)}" for t in choice.choices) + f", `{AUTO}`"
        return notice_message(current, "lang.invalid", given=given.strip() or "?", choices=choices)
    once_more(save_user_pref, services.engine, team_id=team_id, user_id=user_id, language_override=choice.tag)
    return notice_message(choice.tag, "lang.set", language=language_name(choice.tag))
