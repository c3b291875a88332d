"""The serving calibration tables in tests/cases/ are well formed: keys, ids, units, languages, sources.

These tests check the published facts as data (shape, units, internal arithmetic); they do not run the engine.
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "cases"
THROUGHPUT = CASES / "serving_throughput.jsonl"
MEMORY = CASES / "serving_memory.jsonl"
QUESTIONS = CASES / "serving_questions.jsonl"
SOURCE_MD = CASES / "serving_SOURCE.md"
GPUS_CSV = ROOT / "knowledge" / "data" / "gpus.csv"

ENGINES = {
    "vllm",
    "sglang",
    "tgi",
    "tensorrt-llm",
    "llama.cpp",
    "mlx",
    "ollama",
    "exllama",
    "nim",
    "mlc-llm",
}
LOADS = {"single-stream", "fixed-batch", "fixed-concurrency", "offline-max"}
THROUGHPUT_MEASURES = {
    "output_tokens_per_s_total", "output_tokens_per_s_per_user", "output_tokens_per_s_per_gpu",
    "prefill_tokens_per_s", "tpot_ms", "ttft_ms", "e2e_latency_ms",
}  # fmt: skip
MEMORY_KINDS = {
    "engine_log",
    "gguf_metadata",
    "file_size",
    "checkpoint",
    "mac_gpu_limit",
    "engine_default",
    "device_memory",
}
MEMORY_UNITS = {
    "GiB",
    "GB",
    "MiB",
    "MB",
    "tokens",
    "blocks",
    "x",
    "B params",
    "bpw",
    "fraction",
    "tokens/s",
}
LANGS = {"en", "zh", "ko", "ja", "es", "de", "fr", "vi"}
FULL_SHARE_LANGS = {"en", "zh", "ko", "ja"}
FITS_KEYS = {"fits_bf16", "fits_fp16", "fits_fp8", "fits_int8", "fits_4bit"}
SLUG = re.compile(r"^[a-z0-9][a-z0-9.-]*$")  # GPU ids, as in gpus.csv
ROW_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")  # row ids may carry quant names such as q4_k_m
YEAR = re.compile(r"\b(19|20)\d\d\b")
# One character each script must show, so a row tagged zh/ko/ja/vi is really written in that language.
SCRIPTS = {
    "zh": re.compile(r"[\u4e00-\u9fff]"),
    "ko": re.compile(r"[\uac00-\ud7a3]"),
    "ja": re.compile(r"[\u3040-\u30ff]"),
    "vi": re.compile(r"[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]", re.IGNORECASE),
}
GIB = 2**30

THROUGHPUT_KEYS = [
    "id", "engine", "engine_version", "gpu", "gpu_count", "model", "params_b", "active_params_b", "weights",
    "kv_cache_dtype", "concurrency", "load", "num_requests", "input_tokens", "output_tokens", "measured",
    "source", "date", "notes",
]  # fmt: skip
MEMORY_KEYS = [
    "id", "kind", "engine", "engine_version", "model", "params_b", "weights", "gpu", "gpu_count", "settings",
    "measured", "source", "date", "notes",
]  # fmt: skip
QUESTION_KEYS = ["id", "lang", "text", "expect", "inputs", "arithmetic", "sources"]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        assert line.strip(), f"{path.name}:{n}: blank line"
        row = json.loads(line)
        assert isinstance(row, dict), f"{path.name}:{n}: not an object"
        rows.append(row)
    return rows


def is_positive(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def is_count(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 1


@pytest.fixture(scope="module")
def throughput() -> list[dict[str, Any]]:
    return read_jsonl(THROUGHPUT)


@pytest.fixture(scope="module")
def memory() -> list[dict[str, Any]]:
    return read_jsonl(MEMORY)


@pytest.fixture(scope="module")
def questions() -> list[dict[str, Any]]:
    return read_jsonl(QUESTIONS)


@pytest.fixture(scope="module")
def catalog_gpus() -> set[str]:
    with GPUS_CSV.open(encoding="utf-8") as fh:
        return {row["id"] for row in csv.DictReader(fh)}


@pytest.fixture(scope="module")
def source_md() -> str:
    return SOURCE_MD.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", [THROUGHPUT, MEMORY, QUESTIONS], ids=lambda p: p.name)
def test_ids_unique_and_well_formed(path: Path) -> None:
    ids = [row["id"] for row in read_jsonl(path)]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    assert [i for i in ids if not ROW_ID.match(i)] == []


def check_source_and_date(row: dict[str, Any]) -> list[str]:
    problems = []
    if not (isinstance(row["source"], str) and len(row["source"]) > 10):
        problems.append("source")
    date = row["date"]
    if not (isinstance(date, str) and (YEAR.search(date) or date.startswith("undated"))):
        problems.append("date")
    if not (isinstance(row["notes"], str) and row["notes"].strip()):
        problems.append("notes")
    return problems


# ---------------------------------------------------------------- throughput


def test_throughput_size_and_keys(throughput: list[dict[str, Any]]) -> None:
    assert len(throughput) >= 40
    assert [r["id"] for r in throughput if list(r) != THROUGHPUT_KEYS] == []


def test_throughput_rows(throughput: list[dict[str, Any]]) -> None:
    bad = {}
    for r in throughput:
        problems = check_source_and_date(r)
        if r["engine"] not in ENGINES:
            problems.append("engine")
        if not (isinstance(r["gpu"], str) and SLUG.match(r["gpu"])) or not is_count(r["gpu_count"]):
            problems.append("gpu")
        if not is_positive(r["params_b"]):
            problems.append("params_b")
        active = r["active_params_b"]
        if active is not None and not (is_positive(active) and active < r["params_b"]):
            problems.append("active_params_b")
        if not (isinstance(r["weights"], str) and r["weights"]):
            problems.append("weights")
        if r["load"] not in LOADS:
            problems.append("load")
        if r["concurrency"] is not None and not is_count(r["concurrency"]):
            problems.append("concurrency")
        if r["concurrency"] is None and r["load"] != "offline-max":
            problems.append("concurrency missing")
        if r["load"] == "single-stream" and r["concurrency"] != 1:
            problems.append("single stream with concurrency != 1")
        for key in ("num_requests", "input_tokens", "output_tokens"):
            if r[key] is not None and not is_count(r[key]):
                problems.append(key)
        measured = r["measured"]
        if not (isinstance(measured, dict) and measured and set(measured) <= THROUGHPUT_MEASURES):
            problems.append("measured keys")
        elif not all(is_positive(v) for v in measured.values()):
            problems.append("measured values")
        elif {"output_tokens_per_s_total", "output_tokens_per_s_per_user"} <= set(measured) and (
            measured["output_tokens_per_s_per_user"] > measured["output_tokens_per_s_total"]
        ):
            problems.append("per user above total")
        if problems:
            bad[r["id"]] = problems
    assert bad == {}


def test_throughput_coverage(throughput: list[dict[str, Any]]) -> None:
    """The brief's four groups: consumer NVIDIA single user, Apple silicon, datacenter batch, fp8 next to bf16."""
    consumer = {
        r["gpu"] for r in throughput if r["gpu"].startswith("rtx-") and r["load"] == "single-stream"
    }
    assert {"rtx-3090", "rtx-4090"} <= consumer
    apple = [r for r in throughput if r["gpu"].startswith("apple-")]
    assert len({r["gpu"] for r in apple}) >= 5
    datacenter = {"a100-80gb", "h100-sxm-80gb", "h100-80gb", "h200", "b200", "mi300x"}
    batched = [r for r in throughput if r["gpu"] in datacenter and r["load"] != "single-stream"]
    assert {r["engine"] for r in batched} >= {"vllm", "sglang", "tensorrt-llm"}
    assert any(r["active_params_b"] for r in batched), "no MoE serving row"
    pairs: dict[tuple[str, str, str | None], set[str]] = {}
    for r in throughput:
        key = (r["engine"], r["gpu"], r["engine_version"])
        pairs.setdefault(key, set()).add(r["weights"].split("-")[0].replace("mxfp8", "fp8"))
    assert any({"bf16", "fp8"} <= ws for ws in pairs.values()), (
        "no fp8 and bf16 measured on the same engine and GPU"
    )


# ---------------------------------------------------------------- memory


def test_memory_size_and_keys(memory: list[dict[str, Any]]) -> None:
    assert len(memory) >= 15
    assert [r["id"] for r in memory if list(r) != MEMORY_KEYS] == []


def test_memory_rows(memory: list[dict[str, Any]]) -> None:
    bad = {}
    for r in memory:
        problems = check_source_and_date(r)
        if r["kind"] not in MEMORY_KINDS:
            problems.append("kind")
        if r["gpu"] is not None and not (isinstance(r["gpu"], str) and SLUG.match(r["gpu"])):
            problems.append("gpu")
        if r["gpu_count"] is not None and not is_count(r["gpu_count"]):
            problems.append("gpu_count")
        if r["params_b"] is not None and not is_positive(r["params_b"]):
            problems.append("params_b")
        if not isinstance(r["settings"], dict):
            problems.append("settings")
        measured = r["measured"]
        if not (isinstance(measured, dict) and measured):
            problems.append("measured")
        else:
            for name, fact in measured.items():
                if not (isinstance(fact, dict) and set(fact) == {"value", "unit"}):
                    problems.append(f"{name}: shape")
                elif not is_positive(fact["value"]) or fact["unit"] not in MEMORY_UNITS:
                    problems.append(f"{name}: value/unit")
        if problems:
            bad[r["id"]] = problems
    assert bad == {}


def test_memory_vllm_kv_pool_matches_blocks(memory: list[dict[str, Any]]) -> None:
    """Where a vLLM log prints both, blocks x 16 tokens x KV bytes/token is the printed pool (Llama 3.1 8B shape)."""
    row = next(r for r in memory if r["id"] == "vllm-rtx3090-llama31-8b-maxlen20000")
    kv_per_token = 2 * 32 * 8 * 128 * 2
    pool_gib = row["measured"]["gpu_blocks"]["value"] * 16 * kv_per_token / GIB
    assert pool_gib == pytest.approx(row["measured"]["kv_cache_size"]["value"], abs=0.01)


# ---------------------------------------------------------------- questions


def test_questions_size_and_languages(questions: list[dict[str, Any]]) -> None:
    assert len(questions) >= 60
    counts = {lang: sum(q["lang"] == lang for q in questions) for lang in LANGS}
    assert {lang for lang in FULL_SHARE_LANGS if counts[lang] < 10} == set()
    assert {lang for lang in LANGS if counts[lang] < 5} == set()


def test_questions_rows(questions: list[dict[str, Any]]) -> None:
    bad = {}
    for q in questions:
        problems = []
        if list(q) != QUESTION_KEYS:
            problems.append("keys")
        if q["lang"] not in LANGS:
            problems.append("lang")
        if not (isinstance(q["text"], str) and q["text"].strip()):
            problems.append("text")
        script = SCRIPTS.get(q["lang"])
        if script and not script.search(q["text"]):
            problems.append("text not in the tagged language")
        if not (isinstance(q["arithmetic"], str) and len(q["arithmetic"]) > 20):
            problems.append("arithmetic")
        if not (
            isinstance(q["sources"], list)
            and q["sources"]
            and all(isinstance(s, str) and s for s in q["sources"])
        ):
            problems.append("sources")
        e = q["expect"]
        if e.get("method") not in {"serving", "running"}:
            problems.append("method")
        pinned = e.get("pinned", "missing")
        if pinned is not None and not (
            isinstance(pinned, dict)
            and SLUG.match(str(pinned.get("gpu")))
            and is_count(pinned.get("count"))
        ):
            problems.append("pinned")
        fits = {k: v for k, v in e.items() if k.startswith("fits_")}
        if set(fits) - FITS_KEYS or not all(isinstance(v, bool) for v in fits.values()):
            problems.append("fits_*")
        if fits and pinned is None:
            problems.append("fits_* without pinned hardware")
        omitted = e.get("omitted", {})
        if (
            set(omitted) - FITS_KEYS
            or set(omitted) & set(fits)
            or not all(isinstance(v, str) and v for v in omitted.values())
        ):
            problems.append("omitted")
        for key in ("min_weights_gib", "kv_gib_per_1k_tokens_per_seq"):
            if not is_positive(e.get(key)):
                problems.append(key)
        if problems:
            bad[q["id"]] = problems
    assert bad == {}


def kv_gib_per_1k(shape: dict[str, int]) -> float:
    """KV cache of 1,000 tokens of one sequence: MLA caches its latent, other attention K and V per KV head."""
    if "kv_lora_rank" in shape:
        per_token = (
            (shape["kv_lora_rank"] + shape["qk_rope_head_dim"])
            * shape["layers"]
            * shape["kv_bytes"]
        )
    else:
        per_token = 2 * shape["layers"] * shape["kv_heads"] * shape["head_dim"] * shape["kv_bytes"]
    return per_token * 1000 / GIB


def test_questions_kv_matches_shape(questions: list[dict[str, Any]]) -> None:
    wrong = {
        q["id"]: (
            q["expect"]["kv_gib_per_1k_tokens_per_seq"],
            round(kv_gib_per_1k(q["inputs"]["shape"]), 4),
        )
        for q in questions
        if q["expect"]["kv_gib_per_1k_tokens_per_seq"]
        != pytest.approx(kv_gib_per_1k(q["inputs"]["shape"]), rel=0.005)
    }
    assert wrong == {}


def test_questions_weights_match_params(questions: list[dict[str, Any]]) -> None:
    bytes_per_param = {"bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}
    wrong = {}
    for q in questions:
        e = q["expect"]
        bpp = bytes_per_param.get(e["min_weights_precision"])
        if bpp is None:  # 4-bit sizes come from published GGUF files, not a formula
            continue
        expected = q["inputs"]["params_b"] * 1e9 * bpp / GIB
        if e["min_weights_gib"] != pytest.approx(expected, rel=0.01):
            wrong[q["id"]] = (e["min_weights_gib"], round(expected, 1))
    assert wrong == {}


def test_issue14_examples_present(questions: list[dict[str, Any]]) -> None:
    by_text = {q["text"]: q["expect"] for q in questions}
    run70 = by_text["Can I run Llama 3.1 70B on a single RTX 4090?"]
    assert run70["pinned"] == {"gpu": "rtx-4090", "count": 1} and run70["method"] == "running"
    assert not any(run70[k] for k in ("fits_bf16", "fits_fp8", "fits_int8", "fits_4bit"))
    serve100 = by_text["serve Llama 3.1 70B to 100 concurrent users at 8k context"]
    assert serve100["concurrency"] == 100 and serve100["min_total_gib"] >= 380
    t4 = by_text["Can I serve Llama 3 8B on my T4?"]
    assert t4["pinned"] == {"gpu": "t4", "count": 1}
    assert (t4["fits_fp16"], t4["fits_int8"], t4["fits_4bit"]) == (False, True, True)
    gemma = by_text["Gemma 2B on a T4"]
    assert gemma["method"] == "running" and gemma["pinned"] == {"gpu": "t4", "count": 1}
    assert any(
        q["inputs"]["model"] == "deepseek-ai/DeepSeek-V3"
        and q["expect"]["min_weights_precision"] == "fp8"
        for q in questions
    )
    assert any(
        str(q["expect"]["pinned"] and q["expect"]["pinned"]["gpu"]).startswith("apple-")
        for q in questions
    )
    assert any("kv_lora_rank" in q["inputs"]["shape"] for q in questions)


# ---------------------------------------------------------------- GPU ids


def test_gpu_ids_are_catalog_ids_or_documented(
    throughput: list[dict[str, Any]],
    memory: list[dict[str, Any]],
    questions: list[dict[str, Any]],
    catalog_gpus: set[str],
    source_md: str,
) -> None:
    """A GPU outside knowledge/data/gpus.csv (Macs, unspecified variants) is explained in serving_SOURCE.md."""
    used = {r["gpu"] for r in throughput} | {r["gpu"] for r in memory if r["gpu"]}
    used |= {q["expect"]["pinned"]["gpu"] for q in questions if q["expect"]["pinned"]}
    undocumented = sorted(g for g in used - catalog_gpus if f"`{g}`" not in source_md)
    assert undocumented == []
