"""Issue 19 in questions: numbers the parser used to misread or drop in silence now reach "I ignored: ...".

Each example of the issue is a named test on the parse and on the card, in English and in the reader's
language. Scientific notation is read as people mean it when it is a plausible size.
"""

from __future__ import annotations

import copy
import pickle
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from babel.numbers import format_decimal, get_currency_symbol

from bot.answer.ignored import localized_ignored
from bot.answer.pipeline import answer
from bot.parse import parse
from bot.parse.notes import Note, english
from bot.parse.parser import parse_strict
from bot.render.messages import BABEL_LOCALES, LANGUAGES, load_catalog
from test_parse import catalog_snapshot  # noqa: F401  (fixture)

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def ignored(text: str, snapshot: Any) -> list[str]:
    return list(parse(text, snapshot=snapshot).ignored)


# --- the examples --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "note"), [
    ("fine-tune a 1e308B model", "1e308B (more parameters than any model has; at most 5,000B)"),
    ("fine-tune a 1e12B model with LoRA", "1e12B (more parameters than any model has; at most 5,000B)"),
    ("pretrain a 20000B model", "20000B (more parameters than any model has; at most 5,000B)"),
], ids=["1e308B", "1e12B", "20000B"])
def test_an_absurd_model_size_is_said_not_misread(catalog_snapshot: Any, text: str, note: str) -> None:  # noqa: F811
    ask = parse(text, snapshot=catalog_snapshot)
    assert ask.params_b is None  # was 308 and 12: the digits after the "e"
    assert list(ask.ignored) == [note]


@pytest.mark.parametrize(("text", "params_b"), [
    ("fine-tune a 1.3e10 parameter model", 13.0),
    ("7e9 params with QLoRA", 7.0),
    ("a 1.5e0B model on a 4090", 1.5),
], ids=["1.3e10-parameter", "7e9-params", "1.5e0B"])
def test_scientific_notation_is_read_as_people_mean_it(catalog_snapshot: Any, text: str, params_b: float) -> None:  # noqa: F811
    ask = parse(text, snapshot=catalog_snapshot)
    assert ask.params_b == params_b and list(ask.ignored) == []


def test_a_learning_rate_is_not_a_model_size(catalog_snapshot: Any) -> None:  # noqa: F811
    ask = parse("lora on 7B with lr 2e-5 and wd 1e-2", snapshot=catalog_snapshot)
    assert ask.params_b == 7.0 and list(ask.ignored) == []


def test_minus_five_gpus_is_not_five(catalog_snapshot: Any) -> None:  # noqa: F811
    ask = parse("train 7B on -5 GPUs", snapshot=catalog_snapshot)
    assert ask.gpu_count is None  # was 5
    assert list(ask.ignored) == ["-5 GPUs (a GPU count must be at least 1)"]


def test_zero_gpus_is_said(catalog_snapshot: Any) -> None:  # noqa: F811
    ask = parse("fine-tune 13B on 0 GPUs", snapshot=catalog_snapshot)
    assert ask.gpu_count is None and list(ask.ignored) == ["0 GPUs (a GPU count must be at least 1)"]


def test_999999_h100_is_said_and_not_one_card(catalog_snapshot: Any) -> None:  # noqa: F811
    ask = parse("fine-tune Llama 3 8B on 999999 H100", snapshot=catalog_snapshot)
    assert ask.gpu_count is None and "gpu_count" not in ask.assumed  # was "one card", silently
    assert [g.gpu_id for g in ask.gpus] == ["h100-sxm-80gb"]
    assert list(ask.ignored) == ["999999 H100 (more than 1,024 GPUs in one plan; give GPUs per machine and machines)"]


@pytest.mark.parametrize(("text", "given"), [
    ("fine-tune 7B on H100 x999999", "H100 x999999"),
    ("999999张H100微调7B", "999999张H100"),
    ("fine-tune 7B on 2,000,000 GPUs", "2,000,000 GPUs"),
], ids=["after-x", "zh", "commas"])
def test_a_count_past_a_plan_is_said_however_written(catalog_snapshot: Any, text: str, given: str) -> None:  # noqa: F811
    ask = parse(text, snapshot=catalog_snapshot)
    assert ask.gpu_count is None
    assert list(ask.ignored) == [f"{given} (more than 1,024 GPUs in one plan; give GPUs per machine and machines)"]


@pytest.mark.parametrize(("text", "given"), [
    ("fine-tune 13B budget $-100", "$-100"),
    ("fine-tune 13B, budget -$100", "-$100"),
    ("fine-tune 13B with $0", "$0"),
    ("预算-100，微调7B", "预算-100"),
], ids=["dollar-minus", "minus-dollar", "zero", "zh-minus"])
def test_a_budget_of_zero_or_less_is_said(catalog_snapshot: Any, text: str, given: str) -> None:  # noqa: F811
    ask = parse(text, snapshot=catalog_snapshot)
    assert ask.budget.usd_total is None and ask.budget.usd_per_hour is None  # "-$100" was read as $100
    assert list(ask.ignored) == [f"{given} (a budget must be more than zero)"]


@pytest.mark.parametrize(("text", "given"), [
    ("fine-tune 7B with a budget of $999999999999999", "$999999999999999"),
    ("budget 100000000000000000000000000", "budget 100000000000000000000000000"),  # found by hypothesis
], ids=["15-digits", "27-digits-decimal-overflow"])
def test_an_absurd_budget_is_said(catalog_snapshot: Any, text: str, given: str) -> None:  # noqa: F811
    ask = parse_strict(text, snapshot=catalog_snapshot)  # the parser itself, without its safety net
    assert ask.budget.usd_total is None
    assert list(ask.ignored) == [f"{given} (more than any GPU job costs; at most $10,000,000,000)"]


@pytest.mark.parametrize(("text", "given"), [
    ("fine-tune 13B by yesterday", "by yesterday"),
    ("fine-tune 13B in 0 hours", "in 0 hours"),
    ("fine-tune 13B in -3 days", "-3 days"),
    ("13B LoRA, deadline: 2 days ago", "deadline: 2 days ago"),
    ("微调13B，昨天之前要完成", "昨天之前"),
    ("13B 파인튜닝 어제까지", "어제까지"),
    ("13BをLoRAで昨日までに", "昨日までに"),
    ("LoRA 13B bis gestern", "bis gestern"),
], ids=["by-yesterday", "zero-hours", "minus-3-days", "ago", "zh", "ko", "ja", "de"])
def test_a_deadline_in_the_past_is_said(catalog_snapshot: Any, text: str, given: str) -> None:  # noqa: F811
    ask = parse(text, snapshot=catalog_snapshot)
    assert ask.deadline_hours is None  # "in 0 hours" was 0.0 and "-3 days" 72 h
    assert list(ask.ignored) == [f"{given} (a deadline must be in the future)"]


@pytest.mark.parametrize(("text", "field", "given"), [
    ("fine-tune 13B on -5B tokens", "dataset_tokens", "-5B tokens"),
    ("fine-tune 13B for -3 epochs", "epochs", "-3 epochs"),
    ("fine-tune 13B, batch 0", "batch_size", "batch 0"),
    ("fine-tune 13B seq -4096", "seq_len", "seq -4096"),
    ("serve Llama 3 8B to -50 users", "concurrency", "-50 users"),
    ("LoRA rank 0 on 7B", "lora_rank", "LoRA rank 0"),
    ("fine-tune a -7B model", "params_b", "-7B"),
], ids=["tokens", "epochs", "batch", "seq", "users", "rank", "size"])
def test_other_quantities_below_one_are_said_not_read_as_positive(
    catalog_snapshot: Any, text: str, field: str, given: str  # noqa: F811
) -> None:
    ask = parse(text, snapshot=catalog_snapshot)
    assert getattr(ask, field) is None  # "-5B tokens" was 5B tokens, "-50 users" 50 users, "-7B" 7B
    assert list(ask.ignored) == [f"{given} (must be more than zero)"]


def test_names_with_hyphens_are_not_signs(catalog_snapshot: Any) -> None:  # noqa: F811
    for text, params_b in (("qwen2.5-7b lora", 7.62), ("llama-3-8b qlora", 8.03)):
        ask = parse(text, snapshot=catalog_snapshot)
        assert ask.params_b == params_b and list(ask.ignored) == []


def test_a_past_day_that_is_not_a_deadline_is_not_a_note(catalog_snapshot: Any) -> None:  # noqa: F811
    assert ignored("I fine-tuned it yesterday; now 13B with QLoRA", catalog_snapshot) == []


@pytest.mark.parametrize(("text", "field", "value"), [
    ("2-4 H100 for 13B lora", "gpu_count", 4),
    ("fine-tune 7B for $100-200", "budget", Decimal("200.00")),
    ("fine-tune 70b, 8 H100, $5000 budget, 3 days", "deadline_hours", 72.0),
    ("8x H100 for a 70B full fine-tune", "gpu_count", 8),
    ("两张4090能不能全参微调Qwen2.5-7B？预算2w，3天内", "gpu_count", 2),
    ("H100 x8 for a 70B full fine-tune", "gpu_count", 8),
    ("2 nodes of 8 H100 for 405B", "gpu_count", 16),
], ids=["count-range", "money-range", "plain", "8x", "zh", "x8", "nodes"])
def test_ordinary_numbers_are_read_as_before(catalog_snapshot: Any, text: str, field: str, value: Any) -> None:  # noqa: F811
    ask = parse(text, snapshot=catalog_snapshot)
    got = ask.budget.usd_total if field == "budget" else getattr(ask, field)
    assert got == value and list(ask.ignored) == []


# --- on the card, in the reader's language ------------------------------------------------------------------


@pytest.mark.parametrize(("text", "lang", "shown"), [
    ("fine-tune a 1e308B model", "en", "I ignored: 1e308B (more parameters than any model has; at most 5,000B)"),
    ("train 7B on -5 GPUs", "en", "I ignored: -5 GPUs (a GPU count must be at least 1)"),
    ("fine-tune Llama 3 8B on 999999 H100", "de",
     "Nicht berücksichtigt: 999999 H100 (mehr als 1.024 GPUs in einem Plan"),
    ("fine-tune 13B budget $-100", "fr", "Non pris en compte : $-100 (le budget doit être supérieur à zéro)"),
    ("fine-tune 13B by yesterday", "ja", "使わなかった部分：by yesterday（締め切りは未来の日時にしてください）"),
    ("用QLoRA微调Qwen2.5-14B，用-5张4090", "zh-Hans", "已忽略：-5张4090（GPU 数量至少为 1）"),
], ids=["size-en", "count-en", "count-de", "budget-fr", "deadline-ja", "count-zh"])
def test_the_card_says_what_was_ignored(snapshot: Any, text: str, lang: str, shown: str) -> None:
    reply = answer(text, snapshot=snapshot, lang=lang, now=NOW)
    rendered = "\n".join(_texts(reply.blocks))
    assert shown in rendered.replace("&lt;", "<").replace("&gt;", ">"), rendered


def _texts(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["text"]] if isinstance(node.get("text"), str) else []
        return own + [t for v in node.values() for t in _texts(v)]
    if isinstance(node, (list, tuple)):
        return [t for v in node for t in _texts(v)]
    return []


# --- the note itself -------------------------------------------------------------------------------------


def test_a_note_is_a_string_that_keeps_its_key_through_copies() -> None:
    note = Note("count_too_large", given="999999 H100", max=1024)
    assert isinstance(note, str) and note == english()["count_too_large"].format(given="999999 H100", max="1,024")
    for again in (pickle.loads(pickle.dumps(note)), copy.deepcopy(note)):
        assert again == note and again.key == "count_too_large" and dict(again.limits) == {"max": 1024}


def test_a_long_quote_is_cut() -> None:
    note = Note("count_too_large", given="9" * 500 + " H100", max=1024)
    assert len(note.given) == 40 and note.given.endswith("…")


def test_the_original_spelling_is_quoted() -> None:
    note = Note("size_absurd", given="1e308b", max_b=5000)
    assert note.as_written("Fine-tune a 1E308B model").given == "1E308B"
    assert note.as_written("nothing like it") is note


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_note_has_a_message_in_every_language(lang: str) -> None:
    catalog = load_catalog(lang)
    notes = [Note(key, given="X", max_b=5000, max=1024, max_usd=10**10) for key in english()]
    assert len(notes) == 10  # the seven refused values, cpu_only and phone (bot/parse/cpu.py), media_length (deadline.py)
    localized = localized_ignored(notes, lang)
    assert all(f"ignored.{key}" in catalog for key in english())
    assert all("X" in line and "{" not in line for line in localized)
    if lang != "en":
        assert localized != tuple(notes)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_budget_limit_is_money_in_the_readers_format(lang: str) -> None:
    """The limit's dollars come from Babel (CLDR's symbol and its place), not a `$` written into the message."""
    note = Note("budget_too_large", given="$1e15", max_usd=10**10)
    (line,) = localized_ignored([note], lang)
    locale = BABEL_LOCALES[lang]
    symbol = get_currency_symbol("USD", locale=locale)  # "$", "US$" (ko, zh, es, vi), "$US" (fr)
    digits = format_decimal(10**10, locale=locale)
    assert symbol in line and digits in line
    assert line.replace("$1e15", "").count("$") == symbol.count("$")  # no second, hand-written $


def test_items_that_are_not_notes_stay_as_written() -> None:
    assert localized_ignored(["learning_rate (not a setting I use)"], "ko") == ("learning_rate (not a setting I use)",)
