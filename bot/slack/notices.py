"""The Slack shell's own short messages (share, language, errors, App Home) from the message catalog."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from babel import Locale
from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    Option,
    SectionBlock,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from bot.answer.commands import AUTO
from bot.render.cards import BlockDict
from bot.render.filters import escape_mrkdwn
from bot.render.messages import BABEL_LOCALES, DEFAULT_LANGUAGE, LANGUAGES, load_catalog, normalise_language

SHARE_ACTION = "share"
HOME_LANGUAGE_ACTION = "home.lang"


@dataclass(frozen=True, slots=True)
class Message:
    """A Slack message body: the text fallback and the Block Kit blocks (as dicts)."""

    text: str
    blocks: tuple[BlockDict, ...]
    language: str


def _template(language: str, key: str) -> str:
    """The notice's text in the language (the message catalog), English if the language lacks it."""
    return load_catalog(normalise_language(language)).get(key) or load_catalog(DEFAULT_LANGUAGE)[key]


def notice(lang: str, key: str, **params: str) -> str:
    """One mrkdwn notice; every value is escaped so user text can never ping or link."""
    return _template(lang, key).format(**{name: escape_mrkdwn(value) for name, value in params.items()})


def plain_notice(language: str, key: str) -> str:
    """A notice used as plain_text (buttons, headers), where mrkdwn escaping would show literally."""
    return _template(language, key)


def language_name(language: str) -> str:
    """The language's own name for itself ("한국어", "Deutsch")."""
    locale = Locale.parse(BABEL_LOCALES[normalise_language(language)])
    return str(locale.get_display_name(locale))


def notice_message(lang: str, key: str, **params: str) -> Message:
    return notices_message(lang, (key,), **params)


def notices_message(lang: str, keys: Sequence[str], **params: str) -> Message:
    """Several notices as one message, a paragraph each (every key takes what it needs of `params`)."""
    text = "\n\n".join(notice(lang, key, **params) for key in keys)
    section = SectionBlock(text=MarkdownTextObject(text=text))
    return Message(text=text, blocks=(section.to_dict(),), language=normalise_language(lang))


def share_block(language: str, value: str) -> BlockDict:
    """The actions block with the Share button added under an ephemeral answer."""
    button = ButtonElement(
        text=plain_notice(language, "share.button"), action_id=SHARE_ACTION, value=value
    )
    return ActionsBlock(block_id="gpu.share", elements=[button]).to_dict()


def shared_by_block(language: str, user_id: str) -> BlockDict:
    return ContextBlock(elements=[MarkdownTextObject(text=notice(language, "share.by", user=user_id))]).to_dict()


LABEL_LIMIT = 75  # Slack's longest button label


def asked_line(language: str, user_id: str, change: str) -> str:
    """"<@U…> asked: *Use spot*": who pressed which button, above the answer it got (the label escaped)."""
    return notice(language, "whatif.asked", user=user_id, change=change.replace("*", "")[:LABEL_LIMIT])


def line_block(line: str) -> BlockDict:
    return ContextBlock(elements=[MarkdownTextObject(text=line)]).to_dict()


def notice_context_block(language: str, key: str) -> BlockDict:
    return ContextBlock(elements=[MarkdownTextObject(text=notice(language, key))]).to_dict()


class HomeView(TypedDict):
    """The App Home tab as views.publish takes it (built and checked by slack_sdk's View)."""

    blocks: list[BlockDict]
    type: str


@dataclass(frozen=True, slots=True)
class HomeEntry:
    """One line of the App Home lists (a channel digest or a personal alert), already worded."""

    text: str


def home_view(
    *,
    language: str,
    override: str | None,
    subscriptions: Sequence[HomeEntry] | None,
    alerts: Sequence[HomeEntry] | None,
) -> HomeView:
    """The App Home tab: reply language (with a picker), digests, alerts and a short guide."""
    chosen = language_name(override) if override else notice(language, "home.language.auto")
    blocks: list[Block] = [
        # TRANSLATORS: the app's name, as Slack shows it; the same in every language.
        HeaderBlock(text=plain_notice(language, "home.title")),
        SectionBlock(
            text=MarkdownTextObject(text=notice(language, "home.language", language=chosen)),
            accessory=_language_picker(language, override),
        ),
        DividerBlock(),
        *_home_list(language, "home.subscriptions", subscriptions),
        *_home_list(language, "home.alerts", alerts),
        DividerBlock(),
        SectionBlock(text=MarkdownTextObject(text=notice(language, "home.guide"))),
    ]
    view = View(type="home", blocks=blocks).to_dict()  # slack_sdk checks the view's limits here
    return HomeView(blocks=view["blocks"], type=view["type"])


def _language_picker(language: str, override: str | None) -> StaticSelectElement:
    options = [Option(text=plain_notice(language, "home.language.auto"), value=AUTO)] + [
        Option(text=language_name(tag), value=tag) for tag in LANGUAGES
    ]
    initial = next(o for o in options if o.value == (override or AUTO))
    return StaticSelectElement(
        action_id=HOME_LANGUAGE_ACTION,
        placeholder=plain_notice(language, "home.language.pick"),
        options=options,
        initial_option=initial,
    )


def _home_list(language: str, title_key: str, entries: Sequence[HomeEntry] | None) -> list[Block]:
    if entries is None:
        body = notice(language, "unavailable")
    elif not entries:
        body = notice(language, "home.none")
    else:
        body = "\n".join(f"• {entry.text}" for entry in entries[:20])
    return [SectionBlock(text=MarkdownTextObject(text=f"{notice(language, title_key)}\n{body}"))]
