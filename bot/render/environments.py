"""The two Jinja2 environments: Block Kit JSON (every `{{ }}` is one JSON value) and terminal text."""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from decimal import Decimal
from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, pass_context
from jinja2.runtime import Context

from bot.render import blocks, filters

_COMMON_FILTERS = {
    "clip": filters.clip,
    "table": filters.format_table,
}


# One encoder for every expression: json.dumps with options builds a new JSONEncoder per call.
_VALUE_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def json_value(value: object) -> str:
    """Finalize for the Block Kit environment: whatever an expression yields becomes one JSON value.

    Decimals and other non-JSON values are refused: they must be formatted for the locale first.
    """
    if isinstance(value, Decimal):
        raise TypeError("format money with f.money()/f.rate() before rendering it into a card")
    return _VALUE_ENCODER.encode(value)


SLOT_KEY = "__placed"  # the one key of a placeholder object; no Block Kit object has it
PLACED = "_placed"  # the render variable holding the objects a card's template placed (see place_value)


@pass_context
def place_value(context: Context, value: object) -> str:
    """Finalize for the Block Kit environment: an object (a block from bot.render.blocks) is kept as it is and
    written as a placeholder that parse_card swaps back; anything else becomes one JSON value.

    Writing each block as JSON text only for json.loads to build it again took a tenth of a card's render time.
    """
    if type(value) is dict:
        placed: list[dict[str, object]] = context[PLACED]
        placed.append(value)
        return f'{{"{SLOT_KEY}":{len(placed) - 1}}}'
    return json_value(value)


def parse_card(source: str, placed: list[dict[str, object]]) -> dict[str, Any]:
    """The template's JSON text with every placeholder replaced by the object it stands for."""

    def unplace(obj: dict[str, object]) -> dict[str, object]:
        slot = obj.get(SLOT_KEY)
        return placed[slot] if isinstance(slot, int) else obj

    parsed: dict[str, Any] = json.loads(source, object_hook=unplace)
    return parsed


def terminal_value(value: object) -> str:
    return "" if value is None else str(value)


_PLAIN_FUNCTIONS = frozenset({types.FunctionType, types.BuiltinFunctionType})


class CardContext(Context):
    """A template context that calls plain Python functions and methods without Jinja's probing for callables
    that want the context (`jinja_pass_arg` looked up on the callable and on its `__call__`, ~1 µs a call, some
    25 calls a card); anything else, or anything marked, goes Jinja's own way."""

    def call(__self, __obj: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (Jinja's names)
        # A bound method's attributes are its function's (asked there: a miss on the method raises inside).
        function = __obj.__func__ if type(__obj) is types.MethodType else __obj
        if type(function) not in _PLAIN_FUNCTIONS or hasattr(function, "jinja_pass_arg"):
            return Context.call(__self, __obj, *args, **kwargs)
        kwargs.pop("_block_vars", None)
        kwargs.pop("_loop_vars", None)
        try:
            return __obj(*args, **kwargs)
        except StopIteration:
            return __self.environment.undefined("value was undefined because a callable raised a StopIteration exception")


def _environment(finalize: Callable[..., str]) -> Environment:
    """What both output formats share: package templates, strict undefined, no HTML autoescape."""
    env = Environment(
        loader=PackageLoader("bot", "templates"),
        auto_reload=False,  # package templates do not change while running: no stat per render
        undefined=StrictUndefined,
        autoescape=False,
        finalize=finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(_COMMON_FILTERS)
    return env


@lru_cache(maxsize=1)
def block_environment() -> Environment:
    """Block Kit templates (`blocks/*.json.j2`): untrusted text goes through `mrkdwn`; no `|safe` anywhere."""
    env = _environment(place_value)
    env.context_class = CardContext
    env.filters["mrkdwn"] = filters.escape_mrkdwn
    env.filters["fact_line"] = filters.fact_line
    env.filters["source_ref"] = filters.source_ref
    env.globals.update(header=blocks.header, section=blocks.section, context=blocks.context, code=blocks.code,
                       button=blocks.button, prices_context=blocks.prices_context)
    return env


@lru_cache(maxsize=1)
def terminal_environment() -> Environment:
    """Terminal templates (`terminal/*.txt.j2`): plain text, no escaping, aligned columns."""
    env = _environment(terminal_value)
    env.filters["plain"] = filters.mrkdwn_to_plain
    env.filters["width"] = filters.display_width
    env.filters["bracket"] = filters.bracket
    return env
