"""Render a card: view + language → Block Kit message (`text` + `blocks`) and, from it, terminal text."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import TypedDict

from bot.render import rows
from bot.render.environments import PLACED, block_environment, parse_card, terminal_environment
from bot.render.formats import Formatter
from bot.render.messages import Messages, normalise_language

log = logging.getLogger(__name__)

BlockDict = dict[str, object]  # one Block Kit block as plain JSON values (what a template parses to; slack_sdk takes dicts)


class SlackMessage(TypedDict):
    """What chat.postMessage (or a response_url) takes: the `text` fallback and the `blocks`."""

    text: str
    blocks: list[BlockDict]


KINDS = ("recommendation", "serving", "capacity", "buying", "comparison", "price", "specs", "clarification", "help", "error", "knowledge", "digest")


@dataclass(frozen=True, slots=True)
class Card:
    """A rendered card: the Slack message (`text` fallback + `blocks`) in one language."""

    kind: str
    language: str
    text: str
    blocks: tuple[BlockDict, ...]

    def message(self) -> SlackMessage:
        """Exactly what goes to Slack's chat.postMessage as `text` and `blocks`."""
        return {"text": self.text, "blocks": list(self.blocks)}


def render_card(kind: str, view: object, language: str | None, *, now: datetime | None = None) -> Card:
    """Render `blocks/<kind>.json.j2` for `view` in `language` and parse it into a Card."""
    if kind not in KINDS:
        raise ValueError(f"unknown card kind {kind!r}")
    messages, tools = _language_tools(normalise_language(language))
    template = block_environment().get_template(f"blocks/{kind}.json.j2")
    placed: list[BlockDict] = []
    source = template.render(v=view, now=now, **{PLACED: placed}, **tools)
    try:
        message = parse_card(source, placed)
    except json.JSONDecodeError:
        log.error("template blocks/%s.json.j2 produced invalid JSON in %s", kind, messages.language)
        raise
    return Card(kind, messages.language, message["text"], tuple(message["blocks"]))


def render_terminal(card: Card) -> str:
    """The same card as readable terminal text (bars and tables kept, mrkdwn markers dropped)."""
    return terminal_environment().get_template("terminal/card.txt.j2").render(card=card).rstrip() + "\n"


def language_tools(language: str) -> tuple[Messages, Formatter]:
    """One language's catalog and formatter, as the templates get them (for text built outside a template)."""
    messages, tools = _language_tools(normalise_language(language))
    formatter = tools["f"]
    assert isinstance(formatter, Formatter)
    return messages, formatter


@lru_cache(maxsize=None)
def _language_tools(language: str) -> tuple[Messages, dict[str, object]]:
    """One language's catalog and what its templates call: t/p/c (messages), f (formatter) and the presenters.

    Built once per supported language: they hold nothing of a request.
    """
    messages = Messages.for_language(language)
    f = Formatter(messages)
    tools = {"t": messages.text, "p": messages.plain, "c": messages.compose, "f": f, **_presenters(f)}
    return messages, tools


def _presenters(f: Formatter) -> dict[str, object]:
    """Python helpers the templates call to build localized rows (strings only, never blocks)."""
    from bot.render import advice, buying, capacity, digest, fits, serving

    return {
        "rec": advice,
        "srv": serving,
        "cap": capacity,
        "buy": buying,
        "dg": digest,
        "comparison_table": rows.comparison_table,
        "detail_rows": rows.detail_rows,
        "price_table": rows.price_table,
        "fit_lines": lambda lines: fits.fit_lines(lines, f),
        "verdict_line": lambda view: fits.verdict_line(view, f),
        "strength_lines": lambda view: fits.strength_lines(view, f),
        "workload_label": lambda view: fits.workload_label(view, f),
    }
