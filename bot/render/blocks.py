"""The Block Kit pieces the card templates place (header, section, context, code table, button) as Python values.

They were Jinja macros; each `{% call %}` of a macro built two macro objects and rendered a sub-template, about
a quarter of a card's render time. As functions they return the block itself, which the Block Kit environment's
finalize writes as one JSON value, so a template still says which blocks a card has, in which order, and with
which words; only the shape of each kind of block lives here. Key order is the order Slack and the goldens see.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from bot.render.filters import clip, escape_mrkdwn, format_table
from bot.render.formats import Formatter
from bot.render.freshness import prices_line
from bot.render.views import DEFAULT_STALE_DAYS

Block = dict[str, Any]

_COMPACT_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)


def header(text: str) -> Block:
    """A header: plain text, clipped to Slack's 150 characters."""
    return {"type": "header", "text": {"type": "plain_text", "text": clip(text, 150), "emoji": True}}


def section(text: str) -> Block:
    """A mrkdwn section, clipped to Slack's 3,000 characters."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(text, 3000)}}


def context(text: str) -> Block:
    """A context line of mrkdwn, clipped to 3,000 characters."""
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(text, 3000)}]}


def code(table_rows: Sequence[Sequence[str]]) -> Block:
    """A table of cells aligned in a code block (escaped, the fence included in the section's limit)."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": "```" + escape_mrkdwn(format_table(table_rows), 2990)
                                        + "```"}}


def button(label: str, action_id: str, value: object, style: str | None = None) -> Block:
    """A button whose `value` is compact JSON (what the action handler reads back)."""
    block: Block = {"type": "button", "text": {"type": "plain_text", "text": clip(label, 75), "emoji": True},
                    "action_id": action_id, "value": compact_json(value)}
    if style:
        block["style"] = style
    return block


def compact_json(value: object) -> str:
    """Compact JSON text (a button's `value`); the finalize then quotes it as a JSON string."""
    return _COMPACT_ENCODER.encode(value)


def prices_context(view: object, now: datetime | None, f: Formatter) -> Block:
    """The date of the prices under a card (and, when older than the view's threshold, how to refresh them)."""
    when: datetime = getattr(view, "prices_at")
    days = int(getattr(view, "stale_after_days", DEFAULT_STALE_DAYS))
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": prices_line(when, now, days, f)}]}
