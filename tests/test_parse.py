"""Parser unit tests: the pieces (language, sizes, money, counts) and the never-raise property."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.parse import Ask, ask_to_dict, ask_to_workload, parse
from bot.parse.parser import parse_strict
from bot.parse.language import detect_language
from bot.parse.sizes import find_sizes
from bot.parse.text import clean_text
from bot.parse.vocabulary import load_vocabulary
from knowledge.load import DATA_DIR, read_rows
from knowledge.resolve import normalise_gpu_name
from knowledge.snapshot import build_snapshot, gpu_spec, model_spec
from knowledge.tables import GpuAliasBase, GpuBase, ModelAliasBase, ModelPresetBase


@pytest.fixture(scope="session")
def catalog_snapshot() -> Any:
    """The catalog's GPUs, models and aliases from the reviewed CSV files (no database needed)."""
    gpus = [gpu_spec(r) for _, r in read_rows(DATA_DIR / "gpus.csv", GpuBase)]
    gpu_aliases = [
        r.model_copy(update={"alias": normalise_gpu_name(r.alias)})
        for _, r in read_rows(DATA_DIR / "gpu_aliases.csv", GpuAliasBase)
    ]
    models = [model_spec(r) for _, r in read_rows(DATA_DIR / "models.csv", ModelPresetBase)]
    model_aliases = [r for _, r in read_rows(DATA_DIR / "model_aliases.csv", ModelAliasBase)]
    return build_snapshot(gpus=gpus, models=models, gpu_aliases=gpu_aliases, model_aliases=model_aliases)


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("刚入坑，问下72B要多大GPU跑LoRA fine-tune", "zh-Hans"),
        ("請問用兩張4090微調13B模型夠嗎", "zh-Hant"),
        ("예산상 A6000이나 4090 3대가 될 것 같은데", "ko"),
        ("QLoRAで13Bをファインチューニングしたい", "ja"),
        ("Necesito hacer fine-tuning de un modelo de 7B, ¿qué GPU me recomiendan?", "es"),
        ("Welche GPU brauche ich für das Fine-Tuning von einem 7B Modell?", "de"),
        ("Quelle carte pour l'affinage d'un modèle 7B avec LoRA ?", "fr"),
        ("Mình cần GPU nào để tinh chỉnh mô hình 7B?", "vi"),
        ("which gpu for 7b lora", "en"),
    ],
)
def test_language_detection(text: str, language: str) -> None:
    assert detect_language(clean_text(text)[0], load_vocabulary()) == language


@pytest.mark.parametrize(
    ("text", "params_b"),
    [("13B", 13), ("13b", 13), ("13 billion", 13), ("1.5B", 1.5), ("130亿", 13), ("1300억", 130),
     ("130億", 13), ("7 billion params", 7), ("70b", 70), ("350M params", 0.35)],
)
def test_model_sizes_in_every_form(text: str, params_b: float) -> None:
    sizes = find_sizes(clean_text(text)[0])
    assert [s.params_b for s in sizes] == [params_b]


@pytest.mark.parametrize("text", ["1B tokens", "24GB", "RTX 4090", "$5b", "4-bit", "bf16"])
def test_not_model_sizes(text: str) -> None:
    assert find_sizes(clean_text(text)[0]) == []


def test_slack_markup_is_stripped_and_link_label_kept() -> None:
    text, cut = clean_text("<@U123> <!channel> see <https://x.example/y|Llama 3 8B> <#C1|gen>")
    assert "u123" not in text and "channel" not in text and "llama 3 8b" in text and not cut


def test_json_keys_are_the_documented_ones(catalog_snapshot: Any) -> None:
    keys = set(ask_to_dict(parse("2x 4090 for 13b lora, $2/hr", snapshot=catalog_snapshot)))
    assert keys == {
        "intent", "language", "model", "params_b", "method", "precision", "framework", "seq_len",
        "batch_size", "gpus", "gpu_count", "budget", "deadline_hours", "dataset_tokens", "spot",
        "objective", "ignored", "assumed",
        # the serving issue's fields (README "parse --json")
        "family", "concurrency", "requests_per_s", "context_tokens", "tokens_per_s", "tokens_per_s_scope",
        "quantization", "kv_cache_dtype", "engine", "priority",
        # issue 15: a count range, an RL run's parameter mode, a follow-up in a thread
        "gpu_count_range", "rl_tuning", "follow_up",
        # hours of audio a speech model transcribes (README "parse --json")
        "audio_hours",
    }


def test_a_request_rate_is_an_output_rate_to_sustain(catalog_snapshot: Any) -> None:
    """200 requests/s x 203 output tokens a request (vLLM's ShareGPT serving benchmark: 203,068 tokens over 1,000
    requests, vllm PR #18566) = 40,600 output tokens/s in all; a rate the user gave is kept as theirs."""
    ask = parse("Best GPU to serve Mistral 7B at 200 requests per second?", snapshot=catalog_snapshot)
    assert (ask.requests_per_s, ask.tokens_per_s, ask.tokens_per_s_scope) == (200, 40_600, "total")
    assert "40,600 output tokens/s in all" in ask.assumed["tokens_per_s"]
    given = parse("serve Mistral 7B at 200 requests per second, 30 tokens/s per user", snapshot=catalog_snapshot)
    assert (given.tokens_per_s, given.tokens_per_s_scope) == (30, "per_user")


def test_budget_in_yuan_is_converted_with_the_dated_rate(catalog_snapshot: Any) -> None:
    ask = parse("2w左右的预算，想微调一个7B模型", snapshot=catalog_snapshot)
    rate = load_vocabulary().usd_per_unit["CNY"]
    assert ask.budget.usd_total == (Decimal(20000) * rate).quantize(Decimal("0.01"))
    assert "exchange_rate" in ask.assumed and "CNY" in ask.assumed["exchange_rate"]


def test_unknown_config_keys_are_reported_ignored(catalog_snapshot: Any) -> None:
    ask = parse("finetuning_type: lora\nlearning_rate: 2e-4\nwarmup_ratio: 0.1", snapshot=catalog_snapshot)
    assert ask.method == "lora"
    assert any(i.startswith("learning_rate") for i in ask.ignored)


def test_ambiguous_gpu_becomes_a_question_not_a_guess(catalog_snapshot: Any) -> None:
    ask = parse("llama 3.1 8b lora on an a100", snapshot=catalog_snapshot)
    assert ask.gpus[0].status == "ambiguous" and ask.gpus[0].gpu_id is None
    assert ("gpu_ambiguous", "a100") in ask.clarifications


def test_workload_carries_the_ask(catalog_snapshot: Any) -> None:
    ask = parse("qlora llama 3.1 70b on 2x 4090, seq 2048, bs=1, spot ok", snapshot=catalog_snapshot)
    work = ask_to_workload(ask, catalog_snapshot)
    assert work.model is not None and work.model.id == "llama-3.1-70b"
    assert (work.method, work.gpu, work.gpus, work.seq_len, work.batch_size, work.spot) == (
        "qlora", "rtx-4090", 2, 2048, 1, True,
    )


SLACK_BITS = st.sampled_from(
    ["<@U123>", "<!channel>", "<!here>", "<https://x|y>", "<#C1|general>", "&lt;", "```", "\x00", "\u202e"]
)
CONFIG_BITS = st.sampled_from(
    ["model_name_or_path: x/y", '{"bf16": true, "deepspeed": "ds_z3.json"}', "cutoff_len: 99999999999",
     "lora_rank: -1", "per_device_train_batch_size: 0", "--num_gpus 8", "quantization_bit: 4", "$", "¥", "억"]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.one_of(st.text(max_size=400), SLACK_BITS, CONFIG_BITS), max_size=30).map("".join)
    | st.text(min_size=0, max_size=10_000)
)
def test_any_text_gives_an_ask(catalog_snapshot: Any, text: str) -> None:
    ask = parse_strict(text, snapshot=catalog_snapshot)  # no safety net: any bug fails here
    assert isinstance(ask, Ask)
    ask_to_dict(ask)  # serialisable shape, no exception
    assert ask.intent in ("advise", "compare", "price", "specs", "help", "digest", "alert", "language", "explain")


def test_never_raises_on_non_string(catalog_snapshot: Any) -> None:
    assert parse(None, snapshot=catalog_snapshot).intent == "help"  # type: ignore[arg-type]
