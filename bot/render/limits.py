"""Slack message limits (DESIGN §4), checked on a rendered card: what slack_sdk parses plus our own rules."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block

MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_HEADER_TEXT = 150
MAX_FIELDS = 10
MAX_FIELD_TEXT = 2000
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_ACTION_ID = 255
MAX_ACTIONS_ELEMENTS = 25
MAX_CONTEXT_ELEMENTS = 10
MAX_FALLBACK_TEXT = 3000  # our own cap: the notification line, not a second copy of the card
MAX_PAYLOAD_CHARS = 16_000  # our own cap on the whole JSON message, well under Slack's 40k text limit


def check_message(message: Mapping[str, object]) -> list[str]:
    """Every limit problem of a `{"text", "blocks"}` message, as readable strings; [] when it is fine."""
    problems: list[str] = []
    text = message.get("text")
    if not isinstance(text, str) or not text.strip():
        problems.append("text fallback is empty")
    elif len(text) > MAX_FALLBACK_TEXT:
        problems.append(f"text fallback has {len(text)} chars > {MAX_FALLBACK_TEXT}")
    blocks = message.get("blocks")
    if not isinstance(blocks, list) or not blocks:
        return problems + ["no blocks"]
    if len(blocks) > MAX_BLOCKS:
        problems.append(f"{len(blocks)} blocks > {MAX_BLOCKS}")
    size = len(json.dumps(message, ensure_ascii=False))
    if size > MAX_PAYLOAD_CHARS:
        problems.append(f"message is {size} chars > {MAX_PAYLOAD_CHARS}")
    for index, block in enumerate(blocks):
        if not isinstance(block, Mapping):
            problems.append(f"block {index} is not an object")
            continue
        problems.extend(f"block {index} ({block.get('type')}): {p}" for p in _check_block(block))
    return problems


def _items(value: object) -> list[object]:
    """A JSON array's items; none for an absent (or empty) one."""
    return list(value) if isinstance(value, list | tuple) else []


def _check_block(block: Mapping[str, object]) -> Iterator[str]:
    yield from _parse_with_sdk(block)
    kind = block.get("type")
    if kind == "header":
        yield from _check_text(block.get("text"), MAX_HEADER_TEXT, plain=True)
    elif kind == "section":
        yield from _check_section(block)
    elif kind == "context":
        elements = _items(block.get("elements"))
        if not elements or len(elements) > MAX_CONTEXT_ELEMENTS:
            yield f"context has {len(elements)} elements"
        for element in elements:
            yield from _check_text(element, MAX_SECTION_TEXT)
    elif kind == "actions":
        yield from _check_actions(_items(block.get("elements")))
    elif kind != "divider":
        yield f"unexpected block type {kind!r}"


def _parse_with_sdk(block: Mapping[str, object]) -> Iterator[str]:
    parsed = Block.parse(dict(block))
    if parsed is None or type(parsed) is Block:
        yield "slack_sdk does not know this block"
        return
    try:
        parsed.validate_json()
    except SlackObjectFormationError as error:
        yield f"slack_sdk: {error}"


def _check_section(block: Mapping[str, object]) -> Iterator[str]:
    fields = _items(block.get("fields"))
    if "text" not in block and not fields:
        yield "section has neither text nor fields"
    if "text" in block:
        yield from _check_text(block["text"], MAX_SECTION_TEXT)
    if len(fields) > MAX_FIELDS:
        yield f"{len(fields)} fields > {MAX_FIELDS}"
    for field in fields:
        yield from _check_text(field, MAX_FIELD_TEXT)
    accessory = block.get("accessory")
    if accessory is not None:
        yield from _check_actions([accessory])


def _check_actions(elements: Sequence[object]) -> Iterator[str]:
    if not elements or len(elements) > MAX_ACTIONS_ELEMENTS:
        yield f"actions has {len(elements)} elements"
    seen: set[str] = set()
    for element in elements:
        if not isinstance(element, Mapping):
            yield f"not an element: {element!r:.60}"
            continue
        raw_id = element.get("action_id")
        action_id = raw_id if isinstance(raw_id, str) else ""
        if not action_id or len(action_id) > MAX_ACTION_ID or action_id in seen:
            yield f"bad or repeated action_id {action_id!r}"
        seen.add(action_id)
        yield from _check_text(element.get("text"), MAX_BUTTON_TEXT, plain=True)
        raw_value = element.get("value")
        value = raw_value if isinstance(raw_value, str) else ""
        if len(value) > MAX_BUTTON_VALUE:
            yield f"button {action_id} value has {len(value)} chars > {MAX_BUTTON_VALUE}"


def _check_text(obj: object, limit: int, plain: bool = False) -> Iterator[str]:
    if not isinstance(obj, Mapping) or obj.get("type") not in ("plain_text", "mrkdwn"):
        yield f"not a text object: {obj!r:.60}"
        return
    if plain and obj["type"] != "plain_text":
        yield "must be plain_text"
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        yield "empty text"
    elif len(text) > limit:
        yield f"text has {len(text)} chars > {limit}"
