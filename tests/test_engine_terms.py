"""Every engine term that reaches a card is in the card's language (issue 21 item 2): codes such as "hf",
"adamw", "bf16_in_backward", "tensor_parallel" are shown as words of each locale, never as the engine spells them.

The code lists are the engine's own (rules/), so a new framework, optimizer, engine or plan without words in
every locale fails here."""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from typing import Any, get_args

import pytest

from bot.answer.pipeline import answer
from bot.render.findings import CODED_FIELDS
from bot.render.messages import LANGUAGES, Messages
from rules.types import Checkpointing, Sharding
from rules.workload.frameworks import FRAMEWORKS, OPTIMIZERS
from rules.workload.serving import ENGINES
from rules.workload.setup import _RECIPE_ALIASES

NOW = datetime(2025, 6, 3, 9, 0, tzinfo=UTC)
# Plans the engine builds beyond the user's sharding choices: vLLM-style tensor parallelism for inference
# (rules/plans/fit.py) and llama.cpp's layer split (rules/memory/serving.py `sharding_of`).
ENGINE_SHARDINGS = ("tensor_parallel", "layer_split")
CODES = {
    "framework": FRAMEWORKS,
    "optimizer": OPTIMIZERS,
    "engine": ENGINES,
    "recipe": tuple(sorted(set(_RECIPE_ALIASES.values()))),
    "sharding": (*get_args(Sharding), *ENGINE_SHARDINGS),
    "grad_checkpointing": get_args(Checkpointing),
    "family": ("diffusion",),
    "memory_basis": ("allocated", "reserved"),
}


def test_the_code_lists_cover_every_coded_field() -> None:
    assert set(CODES) == set(CODED_FIELDS) and all(len(codes) >= 1 for codes in CODES.values())
    assert "hf" in CODES["framework"] and "tensor_parallel" in CODES["sharding"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_engine_code_has_words_in_every_locale(lang: str) -> None:
    messages = Messages.for_language(lang)
    missing = [f"value.{field}.{code}" for field, codes in CODES.items() for code in codes
               if not messages.has(f"value.{field}.{code}")]
    assert missing == []


def _corpus() -> list[str]:
    from importlib import resources

    text = resources.files("bot.bench").joinpath("corpus.jsonl").read_text(encoding="utf-8")
    return [json.loads(line)["text"] for line in text.splitlines() if line.strip()]


def test_no_card_of_the_bench_corpus_shows_an_engine_code(snapshot: Any, caplog: pytest.LogCaptureFixture) -> None:
    """449 real-style questions answered in all eight languages: no code fell through to a card."""
    questions = _corpus()
    assert len(questions) > 400
    caplog.set_level(logging.WARNING, logger="bot.render.findings")
    snake = re.compile(r"(?<![\w./-])[a-z][a-z0-9]*_[a-z0-9_]+(?![\w/-])")  # tensor_parallel, bf16_in_backward
    shown: dict[str, str] = {}
    for question in questions:
        for lang in LANGUAGES:
            reply = answer(question, snapshot=snapshot, lang=lang, now=NOW)
            visible = re.sub(r"`[^`]*`|<[^>]*>", " ", "\n".join(_texts(reply.blocks)))  # code spans are commands
            shown.update({code: question for code in snake.findall(visible)})
    untranslated = [r.getMessage() for r in caplog.records if r.getMessage().startswith("no words for")]
    assert untranslated == [] and shown == {}


def _texts(node: Any) -> list[str]:
    """The text a person sees in Block Kit: every "text" string, not ids or button values."""
    if isinstance(node, dict):
        return [t for k, v in node.items() if k not in ("value", "action_id", "block_id", "url")
                for t in ([v] if k == "text" and isinstance(v, str) else _texts(v))]
    if isinstance(node, list):
        return [t for v in node for t in _texts(v)]
    return []


@pytest.mark.parametrize("lang", ["de", "fr", "ja"])
def test_the_assumed_line_names_framework_recipe_and_optimizer_in_words(snapshot: Any, lang: str) -> None:
    reply = answer("fine-tune llama 3.1 70b with LoRA on 2 A100 80GB, 1B tokens", snapshot=snapshot, lang=lang,
                   now=NOW)
    messages = Messages.for_language(lang)
    text = json.dumps(reply.message(), ensure_ascii=False)
    assert messages.raw("value.framework.hf") in text and messages.raw("value.optimizer.adamw") in text
    assert not re.search(r"\b(hf|adamw)\b", text)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_refused_budget_names_its_limit_as_money_of_the_locale(snapshot: Any, lang: str) -> None:
    """"at most $10,000,000,000" was a hand-written dollar sign before a locale number ("$10.000.000.000")."""
    from babel import Locale
    from babel.numbers import format_decimal, get_currency_symbol

    from bot.answer.ignored import localized_ignored
    from bot.parse import parse
    from bot.parse.money import MAX_USD
    from bot.render.messages import BABEL_LOCALES

    locale = BABEL_LOCALES[lang]
    ask = parse("fine-tune 7b, budget $999999999999", snapshot=snapshot)
    (note,) = localized_ignored(ask.ignored, lang)
    limit = note[note.index(")") + 1:] if note.startswith("(") else note.split("(", 1)[-1].split("（", 1)[-1]
    assert format_decimal(int(MAX_USD), locale=locale) in limit and get_currency_symbol("USD", locale) in limit, note
    symbol_first = Locale.parse(locale).currency_formats["standard"].pattern.startswith("¤")
    assert symbol_first or not re.search(r"\$\s?\d", limit), note  # "10.000.000.000 $", never "$10.000.000.000"


def test_a_figure_before_a_change_is_written_in_its_unit() -> None:
    """`hours_from` (deadline.scaled, speed.scaled) is the plan's hours before it grew: written as hours, like
    `hours`, not as a bare 302.96."""
    from bot.render.findings import format_number
    from bot.render.formats import Formatter

    f = Formatter(Messages.for_language("en"))
    assert format_number("hours_from", 302.96, f) == format_number("hours", 302.96, f) == f.hours(302.96)
    assert format_number("gpus_from", 1, f) == format_number("gpus", 1, f)
