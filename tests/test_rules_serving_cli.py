"""`gpu-advisor estimate` for serving: the new flags, and the `--json` keys scripting users rely on (issue 14)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.cli import build_parser
from bot.cli.context import CliError
from bot.cli.estimate import INPUT_KEYS, _run, build_workload
from knowledge.rule_tables import load_rule_tables

THROUGHPUT_KEYS = {"concurrency", "output_tokens_per_s", "output_tokens_per_s_per_user", "prefill_tokens_per_s"}
PINNED_KEYS = {"gpu", "count", "fits", "precision", "needed_gib", "has_gib", "offload_gib", "throughput"}


def values(**given: Any) -> dict[str, Any]:
    return {key: given.get(key) for key in INPUT_KEYS}


def test_serving_flags_parse():
    args = build_parser().parse_args([
        "estimate", "--model", "llama-3.1-70b", "--method", "serving", "--concurrency", "100", "--context", "8192",
        "--quantization", "fp8", "--kv-cache-dtype", "fp8", "--engine", "vllm", "--tokens-per-s", "20",
        "--tokens-per-s-scope", "per_user"])
    assert (args.concurrency, args.context_tokens, args.quantization, args.kv_cache_dtype, args.engine,
            args.tokens_per_s, args.tokens_per_s_scope) == (100, 8192, "fp8", "fp8", "vllm", 20.0, "per_user")


@pytest.mark.parametrize(("given", "message"), [
    ({"quantization": "int3"}, "quantization: 'int3' is not one of"),
    ({"kv_cache_dtype": "fp4"}, "kv_cache_dtype: 'fp4' is not one of"),
    ({"engine": "magic"}, "engine: 'magic' is not one of"),
    ({"concurrency": 0}, "concurrency: must be positive"),
])
def test_bad_serving_values_are_clear_errors(snapshot, given, message):
    with pytest.raises(CliError, match=message):
        build_workload(values(params_b=8, **given), snapshot)


def test_json_shape_for_the_pinned_running_question(snapshot):
    """'Can I run Llama 3.1 70B on a single RTX 4090?' as estimate flags."""
    result = _run(values(model="llama-3.1-70b", method="running", gpu="rtx 4090", gpus=1), snapshot,
                  load_rule_tables())
    assert result["assumptions"]["method"] == "running"
    assert {"concurrency", "context_tokens", "quantization"} <= set(result["assumptions"])
    assert "kv_cache" in result["memory"]["breakdown"]
    assert set(result["pinned"]) == PINNED_KEYS and result["pinned"]["fits"] is False
    assert THROUGHPUT_KEYS <= set(result["pinned"]["throughput"])
    assert result["command"]["argv"][0] == "llama-server" and result["command"]["line"].startswith("llama-server")
    # offloaded, it still runs on the card named: the line is for that hardware, and says so
    assert (result["command"]["gpu"], result["command"]["gpus"]) == ("rtx-4090", 1)
    assert {"precision", "fits", "needed_gib"} <= set(result["precisions"][0])
    for option in result["options"]:
        assert THROUGHPUT_KEYS <= set(option["throughput"]) and "usd_per_million_output_tokens" in option


def test_training_json_keeps_its_shape(snapshot):
    result = _run(values(model="llama-3.1-8b", method="qlora"), snapshot, load_rule_tables())
    assert "pinned" not in result and "command" not in result and "precisions" not in result
    assert "kv_cache" not in result["memory"]["breakdown"]
    assert all("throughput" not in option for option in result["options"])


def test_training_with_named_hardware_has_a_pinned_verdict(snapshot):
    # 405B full fine-tuning on one 24 GB card: no saver or offload makes it fit (70B on 8x A100 40GB now
    # does, with the training planner's savers, as torchtune's published runs show)
    result = _run(values(params_b=405, method="full", gpu="rtx 4090", gpus=1), snapshot, load_rule_tables())
    pinned = result["pinned"]
    assert set(pinned) == PINNED_KEYS and pinned["fits"] is False and pinned["count"] == 1
    assert pinned["throughput"] is None


def test_flag_help_lists_every_accepted_value():
    """The help text is spelled out (bot.cli stays light to import); it must name what the engine accepts."""
    from rules.workload.formats import KV_CACHE_DTYPES, WEIGHT_FORMATS
    from rules.workload.serving import ENGINES

    helps = {a.dest: a.help for a in build_parser()._subparsers._group_actions[0].choices["estimate"]._actions}
    for dest, names in (("quantization", WEIGHT_FORMATS), ("kv_cache_dtype", KV_CACHE_DTYPES), ("engine", ENGINES)):
        listed = {n.strip() for n in helps[dest].split(":", 1)[1].split(",")}
        assert listed == set(names), dest


# "How many 4090s ...?": the GPU is named, its count is the question. Llama 3 70B (80 layers, 8 KV heads of 128,
# meta-llama/Meta-Llama-3-70B config.json) in AWQ 4-bit is ~35 GiB of weights (70.6e9 x 4.25 bits) and its KV
# cache 0.3125 MiB per token (2 x 80 x 8 x 128 x 2 B); 20 users at 2k tokens or more add >= 12.5 GiB. On two
# cards that is >= 17.5 + 6.25 GiB per card, over a 4090's ~22 GiB usable; four cards (tensor parallelism must
# divide the 64 heads: 1, 2, 4, 8) hold it. Before, the answer opened with "No" for one card.
HOW_MANY = [("en", "how many 4090s to serve llama 3 70b to 20 users?"),
            ("zh-Hans", "给20个用户部署Llama 3 70B需要几张4090？")]


@pytest.mark.parametrize(("language", "question"), HOW_MANY, ids=[lang for lang, _ in HOW_MANY])
def test_how_many_of_a_named_card_is_answered_with_the_count(snapshot, language, question):
    from datetime import UTC, datetime

    from bot.answer.pipeline import answer
    from bot.parse import parse
    from rules.serialize import verdict_to_json

    assert parse(question, snapshot=snapshot).gpu_count is None  # the parser leaves the count open
    reply = answer(question, snapshot=snapshot, now=datetime(2026, 11, 26, tzinfo=UTC))
    assert reply.language == language and reply.verdict is not None
    pinned = verdict_to_json(reply.verdict, snapshot.gpus)["pinned"]
    assert (pinned["gpu"]["id"], pinned["count"], pinned["fits"]) == ("rtx-4090", 4, True)
    assert "4× GeForce RTX 4090" in reply.text[:400]  # the verdict the card opens with


@pytest.mark.parametrize("question", ["can my macbook pro m3 max 36gb run mixtral?",
                                      "can I run mixtral on my rtx 4090 laptop?"])
def test_a_one_gpu_machine_is_never_told_to_add_cards(snapshot, question):
    """A Mac (unified memory) or a laptop has one GPU: 'with 2x Apple M3 Max it fits' is no advice."""
    from datetime import UTC, datetime

    from bot.answer.pipeline import answer
    from rules.plans.serving import valid_counts
    from rules.workload.shapes import typical_shape

    reply = answer(question, snapshot=snapshot, now=datetime(2026, 11, 26, tzinfo=UTC))
    assert reply.verdict is not None and reply.verdict.pinned is not None
    gpu = snapshot.gpus[reply.verdict.pinned.gpu]
    assert gpu.unified_memory or gpu.laptop
    assert reply.verdict.pinned.count == 1 and not reply.verdict.pinned.fits
    assert "pinned.more_gpus" not in {f.code for f in reply.verdict.findings}
    assert all(o.gpu_id != gpu.id or o.count == 1 for o in reply.verdict.options)
    assert valid_counts(gpu, typical_shape(8.0), "llama.cpp", (1, 2, 4, 8)) == (1,)
