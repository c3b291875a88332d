"""The Block Kit environment's fast calls (bot.render.environments.CardContext) keep Jinja's meaning of a call."""

from __future__ import annotations

from typing import Any

from jinja2 import pass_context
from jinja2.runtime import Context

from bot.render.environments import PLACED, block_environment, parse_card


def _render(source: str, **values: Any) -> Any:
    placed: list[dict[str, object]] = []
    text = block_environment().from_string(source).render(**{PLACED: placed}, **values)
    return parse_card(text, placed)


def test_a_function_marked_to_take_the_context_still_gets_it() -> None:
    @pass_context
    def who(context: Context, suffix: str) -> str:
        return str(context["name"]) + suffix

    assert _render('{"x": {{ who("!") }}}', who=who, name="Ada") == {"x": "Ada!"}


def test_plain_functions_methods_and_builtins_are_called_with_their_arguments() -> None:
    def pair(a: str, b: str = "-") -> str:
        return a + b

    assert _render('[{{ pair("a", b="b") }}, {{ "x,y".split(",") }}, {{ size("abc") }}]', pair=pair, size=len) == [
        "ab", ["x", "y"], 3]


def test_a_callable_that_raises_stop_iteration_gives_undefined_as_in_jinja() -> None:
    def empty() -> str:
        return next(iter([]))

    assert _render('{"x": {{ empty() is undefined }}}', empty=empty) == {"x": True}


def test_a_placed_block_comes_back_as_the_object_itself() -> None:
    block = {"type": "divider"}
    parsed = _render('{"blocks": [{{ b }}, {"type": "divider"}]}', b=block)
    assert parsed["blocks"][0] is block
    assert parsed["blocks"][1] == block and parsed["blocks"][1] is not block
