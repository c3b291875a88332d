"""The request corpus (issue 15) is well formed: ids, languages, the split, and labels in the agreed terms.

This checks the measuring instrument, and (last test) the parser's floor on the dev part: accuracy on
the corpus is printed by tests/score_requests.py. No floor is ever set on the final part, which is
scored once at the end and never tuned against.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

import pytest

from score_requests import DEV, FIELDS, FINAL, LANGS, is_final, load_cases

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "knowledge" / "data"
OLD_TABLES = (
    Path(__file__).parent / "cases" / "parse_cases.jsonl",
    Path(__file__).parent / "cases" / "parse_heldout.jsonl",
)

INTENTS = {"advise", "compare", "price", "specs", "help", "explain", "digest", "alert", "language"}
METHODS = {"full", "pretrain", "lora", "qlora", "rl", "serving", "running", None}
SEGMENTS = {"consumer", "workstation", "datacenter", "apple"}
QUANTIZATIONS = {
    "bf16",
    "fp16",
    "fp8",
    "int8",
    "int4",
    "nf4",
    "awq",
    "gptq",
    "exl2",
    "mxfp4",
    "nvfp4",
    "gguf",
    "gguf-q4_k_m",
    "gguf-q5_k_m",
    "gguf-q8_0",
}
ENGINES = {
    "vllm",
    "sglang",
    "tgi",
    "tensorrt-llm",
    "llama.cpp",
    "ollama",
    "mlx",
    "lmstudio",
    "transformers",
    "exllama",
}
KINDS = {
    "count",
    "gpu-class",
    "method-context",
    "fit-yes-no",
    "price",
    "explain",
    "follow-up",
    "serving",
    "running",
    "quant",
    "unknown-model",
    "new-model",
    "compare",
    "specs",
    "training",
    "diffusion",
    "rl",
    "pretrain",
    "other-intent",
    "budget",
    "ambiguous",
}
MODEL_ID = re.compile(r"^[a-z0-9][a-z0-9.\-]*[a-z0-9]$")
NOVELTY_RATIO = (
    0.6  # a request "in other words" shares under 60 % of its characters' order with every old case
)


def _ids(path: Path) -> set[str]:
    with path.open(encoding="utf-8") as f:
        return {row["id"] for row in csv.DictReader(f)}


GPU_IDS = _ids(DATA / "gpus.csv")
MODEL_PARAMS = {
    row["id"]: row["params_b"]
    for row in csv.DictReader((DATA / "models.csv").open(encoding="utf-8"))
}
CURRENCIES = set(
    json.loads((ROOT / "bot" / "parse" / "lexicon" / "currency.json").read_text(encoding="utf-8"))[
        "usd_per_unit"
    ]
)


def all_cases() -> list[dict[str, Any]]:
    return load_cases(DEV) + load_cases(FINAL)


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def gpu_label_problem(label: Any) -> str | None:
    if isinstance(label, str):
        return None if label in GPU_IDS else f"{label!r} is not a GPU id in knowledge/data/gpus.csv"
    if not isinstance(label, dict) or len(label) != 1:
        return f"{label!r}: a GPU label is an id or one of ambiguous/unknown/class"
    ((kind, value),) = label.items()
    if kind == "ambiguous":
        return None if isinstance(value, str) and value else f"{label!r}: ambiguous needs the name"
    if kind == "unknown":
        if not isinstance(value, str) or not value or value in GPU_IDS:
            return f"{label!r}: unknown needs a name the catalog does not hold"
        return None
    if (
        kind == "class"
        and isinstance(value, dict)
        and value
        and set(value) <= {"memory_gb", "segment"}
    ):
        if "memory_gb" in value and not _positive(value["memory_gb"]):
            return f"{label!r}: memory_gb must be a positive number"
        if "segment" in value and value["segment"] not in SEGMENTS:
            return f"{label!r}: segment must be one of {sorted(SEGMENTS)}"
        return None
    return f"{label!r}: unreadable GPU label"


def _money_problem(value: Any) -> str | None:
    if _positive(value):
        return None
    if (
        isinstance(value, list)
        and len(value) == 2
        and _positive(value[0])
        and value[1] in CURRENCIES
    ):
        return None
    return f"{value!r}: money is a USD amount or [amount, currency] with a known currency"


def label_problems(expect: dict[str, Any]) -> list[str]:
    """What is wrong with one request's labels (empty when they are in the agreed terms)."""
    problems = [f"unknown field {k!r}" for k in expect if k not in FIELDS]
    if expect.get("intent") not in INTENTS:
        problems.append(f"intent {expect.get('intent')!r} not in {sorted(INTENTS)}")
    if "method" in expect and expect["method"] not in METHODS:
        problems.append(f"method {expect['method']!r}")
    if "family" in expect and expect["family"] != "diffusion":
        problems.append("family is only ever 'diffusion'")
    if "params_b" in expect and not _positive(expect["params_b"]):
        problems.append("params_b must be positive")
    model = expect.get("model")
    if model is not None:
        if not isinstance(model, str) or not MODEL_ID.match(model):
            problems.append(f"model id {model!r} is not in the style of models.csv")
        elif (
            model in MODEL_PARAMS
            and "params_b" in expect
            and MODEL_PARAMS[model] not in ("", "llm")
        ):
            preset = float(MODEL_PARAMS[model])
            if abs(preset - expect["params_b"]) > 0.15 * preset:
                problems.append(
                    f"params_b {expect['params_b']} far from the {model} preset ({preset})"
                )
    if "gpus" in expect:
        if not isinstance(expect["gpus"], list):
            problems.append("gpus must be a list")
        else:
            problems += [p for g in expect["gpus"] if (p := gpu_label_problem(g))]
    count = expect.get("gpu_count")
    if "gpu_count" in expect:
        ranged = isinstance(count, dict) and list(count) == ["range"] and len(count["range"]) == 2
        if ranged:
            lo, hi = count["range"]
            ranged = isinstance(lo, int) and isinstance(hi, int) and 0 < lo < hi
        if not ranged and not (
            isinstance(count, int) and not isinstance(count, bool) and count > 0
        ):
            problems.append(f"gpu_count {count!r}")
    for name in (
        "concurrency",
        "requests_per_s",
        "context_tokens",
        "tokens_per_s",
        "deadline_hours",
    ):
        if name in expect and not _positive(expect[name]):
            problems.append(f"{name} must be positive")
    if ("tokens_per_s" in expect) != ("tokens_per_s_scope" in expect):
        problems.append("tokens_per_s and tokens_per_s_scope go together")
    if "tokens_per_s_scope" in expect and expect["tokens_per_s_scope"] not in ("per_user", "total"):
        problems.append("tokens_per_s_scope is per_user or total")
    if "quantization" in expect and expect["quantization"] not in QUANTIZATIONS:
        problems.append(f"quantization {expect['quantization']!r}")
    if "engine" in expect and expect["engine"] not in ENGINES:
        problems.append(f"engine {expect['engine']!r}")
    if "priority" in expect and expect["priority"] not in ("throughput", "latency"):
        problems.append(f"priority {expect['priority']!r}")
    for name in ("budget_usd", "budget_usd_per_hour"):
        if name in expect and (p := _money_problem(expect[name])):
            problems.append(f"{name}: {p}")
    if "follow_up" in expect and expect["follow_up"] is not True:
        problems.append("follow_up is labelled only when true")
    return problems


@pytest.mark.parametrize("path", [DEV, FINAL], ids=["dev", "final"])
def test_every_line_is_a_labelled_request(path: Path) -> None:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        case = json.loads(line)
        assert {"id", "lang", "text", "seen", "expect"} <= set(case), (
            f"{path.name}:{number} misses keys"
        )
        assert case["lang"] in LANGS, f"{case['id']}: lang {case['lang']!r}"
        assert case["text"].strip() and case["seen"].strip(), f"{case['id']}: empty text or seen"
        assert set(case.get("kinds", [])) <= KINDS, f"{case['id']}: kinds {case.get('kinds')}"
        assert not (problems := label_problems(case["expect"])), f"{case['id']}: {problems}"


def test_ids_are_unique_and_each_is_in_the_part_its_hash_says() -> None:
    dev, final = load_cases(DEV), load_cases(FINAL)
    ids = [c["id"] for c in dev + final]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    assert not [c["id"] for c in dev if is_final(c["id"])], "a final request sits in the dev file"
    assert not [c["id"] for c in final if not is_final(c["id"])], (
        "a dev request sits in the final file"
    )
    assert 0.2 <= len(final) / len(ids) <= 0.3


def test_the_corpus_covers_the_languages_issue_15_asks_for() -> None:
    langs = Counter(c["lang"] for c in all_cases())
    assert sum(langs.values()) >= 400
    for lang in ("en", "ko", "ja"):
        assert langs[lang] >= 60, f"{lang}: {langs[lang]}"
    assert langs["zh-Hans"] + langs["zh-Hant"] >= 60 and langs["zh-Hant"] >= 3
    for lang in ("es", "de", "fr", "vi"):
        assert langs[lang] >= 25, f"{lang}: {langs[lang]}"


def test_the_texts_are_distinct_and_mostly_unlike_the_old_tables() -> None:
    cases = all_cases()
    texts = [" ".join(c["text"].lower().split()) for c in cases]
    assert len(texts) == len(set(texts)), "two requests share a text"
    old = [
        " ".join(json.loads(line)["text"].lower().split())
        for path in OLD_TABLES
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    novel = sum(
        max(SequenceMatcher(None, t, o).ratio() for o in old) < NOVELTY_RATIO for t in texts
    )
    assert novel / len(texts) >= 0.6, f"only {novel}/{len(texts)} requests are in new words"


def test_the_label_checker_refuses_what_it_should() -> None:
    assert label_problems(
        {"intent": "advise", "gpus": ["a100"]}
    )  # bare a100 is not an id: ambiguous
    assert label_problems({"intent": "advise", "method": "inference"})
    assert label_problems({"intent": "advise", "gpus": [{"unknown": "rtx-4090"}]})
    assert label_problems({"intent": "advise", "tokens_per_s": 20})
    assert label_problems({"intent": "advise", "model": "llama-3.1-70b", "params_b": 8})
    assert label_problems({"intent": "advise", "budget_usd": [100, "XYZ"]})
    assert not label_problems(
        {"intent": "advise", "gpus": [{"class": {"memory_gb": 24}}], "gpu_count": {"range": [2, 4]}}
    )


# The parser's floor on the dev part (issue 15 targets: intent 90, size 95, method 85, GPUs 90, count 85,
# every language 85), set at the level the parser reached (99.1 % of fields) less a small margin.
DEV_FLOOR_FIELDS = 0.98
DEV_FLOOR = {"intent": 0.97, "params_b": 0.98, "method": 0.98, "gpus": 0.98, "gpu_count": 0.98}
DEV_FLOOR_LANGUAGE = 0.97


def test_parser_floor_on_the_dev_part() -> None:
    from score_requests import load_snapshot, score

    tally = score(load_cases(DEV), load_snapshot())
    total = sum(tally.field_ok.values()) / sum(tally.field_all.values())
    assert total >= DEV_FLOOR_FIELDS, f"{total:.1%} of dev fields right"
    for name, floor in DEV_FLOOR.items():
        rate = tally.field_ok[name] / tally.field_all[name]
        assert rate >= floor, f"{name}: {rate:.1%} < {floor:.0%}"
    for lang, counts in tally.lang_fields.items():
        assert counts["ok"] / counts["all"] >= DEV_FLOOR_LANGUAGE, f"{lang}: {counts['ok']}/{counts['all']}"
