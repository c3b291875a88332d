"""The benchmark's own parts: corpus, synthetic offers, percentiles, budget verdicts, the CLI's argument check."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from decimal import Decimal
from typing import Any

from bot.bench.answers import load_corpus, percentile
from bot.bench.budgets import judge
from bot.bench.offers import scaled_offers, scaled_snapshot


def test_corpus_is_shipped_mixed_language_and_large_enough() -> None:
    corpus = load_corpus()
    assert len(corpus) >= 200
    languages = Counter(r.lang for r in corpus)
    assert {"en", "zh-Hans", "ko", "ja", "es", "de", "fr", "vi"} <= set(languages)
    assert len({r.text for r in corpus}) == len(corpus)  # no repeats inflating the count


def test_scaled_offers_are_exact_deterministic_and_near_real_prices(snapshot: Any) -> None:
    offers = scaled_offers(snapshot, 10_000)
    assert len(offers) == 10_000 and offers == scaled_offers(snapshot, 10_000)
    real = {(o.provider_id, o.instance_type, o.region, o.tier): o for g in snapshot.offers_by_gpu.values() for o in g}
    assert sum(1 for o in offers if o.source != "bench-synthetic") == len(real)
    for o in offers:
        if o.source == "bench-synthetic":
            base = real[(o.provider_id, o.instance_type, o.region.rsplit("-syn", 1)[0], o.tier)]
            ratio = o.usd_per_gpu_hour / base.usd_per_gpu_hour if base.usd_per_gpu_hour else Decimal(1)
            assert Decimal("0.89") <= ratio <= Decimal("1.11") and o.gpu_id == base.gpu_id


def test_scaled_snapshot_keeps_catalog_and_sorts_cheapest_first(snapshot: Any) -> None:
    big = scaled_snapshot(snapshot, 20_000)
    assert big.offer_count == 20_000 and big.gpus is snapshot.gpus
    for group in big.offers_by_gpu.values():
        prices = [o.usd_per_gpu_hour for o in group]
        assert prices == sorted(prices)


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]  # 1..100
    assert percentile(values, 50) == 50.0 and percentile(values, 99) == 99.0 and percentile(values, 100) == 100.0
    assert percentile([7.0], 99) == 7.0 and percentile([], 50) == 0.0


def test_budget_verdicts() -> None:
    """DESIGN §8 as issue 20 raised it: 2 ms / 3 ms answers, 25 ms acks, 1 s digests, 0.6 s start, 150 MB,
    and the SIGKILL run losing and doubling nothing."""
    result = {"answer_ms": {"p99": 1.9}, "answer_ms_100k": {"p99": 3.1}, "http": {"c50": {"p99_ms": 25.0}},
              "digest_100k_s": 0.6, "digest_1m_s": 1.2, "start_s": 0.7, "rss_mb": 150.0,
              "queue": {"kill9": {"lost_or_doubled": 0}}}
    verdicts = {row["budget"]: row["verdict"] for row in judge(result)}
    assert verdicts == {"answer_10k": "pass", "answer_100k": "miss", "http_c50": "pass", "digest_100k": "pass",
                        "digest_1m": "miss", "start": "miss", "start_http": "not measured", "rss": "pass",
                        "queue_kill9": "pass"}
    result["queue"] = {"kill9": {"lost_or_doubled": 1}}
    assert {row["budget"]: row["verdict"] for row in judge(result)}["queue_kill9"] == "miss"


def test_cli_rejects_an_unknown_part_without_a_traceback() -> None:
    done = subprocess.run([sys.executable, "-c", "import sys; from bot.cli import main; sys.exit(main())",
                           "bench", "--only", "answers,warp"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "--only takes answers, http, digest, start, queue" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_hotspots_rank_by_own_and_cumulative_time_and_keep_only_project_code():
    from bot.bench import hotspots
    from knowledge.resolve_readings import normalise_gpu_name

    def work():
        for _ in range(300):
            normalise_gpu_name("NVIDIA GeForce RTX 4090 24GB")

    own = hotspots.profile(work, top=5)
    assert [r["own_ms"] for r in own] == sorted((r["own_ms"] for r in own), reverse=True)
    mine = hotspots.cumulative(work, top=50)
    assert mine and all(r["where"].startswith(("bot/", "rules/", "knowledge/")) for r in mine)
    assert any("normalise_gpu_name" in r["where"] for r in mine)
    assert [r["cumulative_ms"] for r in mine] == sorted((r["cumulative_ms"] for r in mine), reverse=True)


def test_answer_times_report_the_threads_cpu_time_beside_the_wall_clock(snapshot: Any) -> None:
    """CPU time of the answering thread: never more than the wall time it ran in, and not zero."""
    from bot.bench.answers import Request, time_answers

    corpus = tuple(Request("en", text) for text in ("fine-tune 13B with QLoRA on a budget", "H100 vs H200",
                                                    "serve Llama 3.1 70B to 100 users at 8k"))
    times = time_answers(snapshot, corpus, rounds=2)
    assert times["requests"] == 6
    assert 0 < times["cpu_p50"] <= times["p50"] + 0.01 and 0 < times["cpu_p99"] <= times["max"] + 0.01


def test_machine_reports_the_hosts_speed_only_when_asked_and_the_report_prints_it() -> None:
    """The reference workload runs for the bench (five tries of ~60 ms) and not for every describe() call."""
    from bot.bench import machine
    from bot.bench.report import _machine

    plain, measured = machine.describe(), machine.describe(speed=True)
    assert "reference_ms" not in plain
    assert measured["reference_ms"] > 0
    assert f"reference workload {measured['reference_ms']} ms CPU" in _machine(measured)
    assert "reference workload" not in _machine(plain)
    import rules

    assert measured["engine"] == ("compiled" if rules.compiled() else "source")  # which engine the figures are of
    assert f"rule engine {measured['engine']}" in _machine(measured)


def test_start_up_is_timed_with_every_module_compiled_even_when_the_environment_forbids_writing_bytecode() -> None:
    """PYTHONDONTWRITEBYTECODE=1 would make every timed start compile the sources; the bench compiles them first."""
    import importlib.util
    from pathlib import Path

    from bot.bench.startup import PACKAGES, ensure_bytecode

    assert ensure_bytecode() is True
    sources = [p for name in PACKAGES
               for folder in importlib.util.find_spec(name).submodule_search_locations  # type: ignore[union-attr]
               for p in Path(folder).rglob("*.py") if "__pycache__" not in p.parts]
    assert len(sources) > 100
    missing = [p for p in sources if not Path(importlib.util.cache_from_source(str(p))).exists()]
    assert missing == []


def test_a_second_digest_history_is_filled_from_the_imported_prices_not_from_the_first_one(loaded_engine: Any) -> None:
    """The 1M digest history is daily imports of the bundled prices, as the 100k one is: each import holds at
    most one provider's real rows, however many histories were filled before it."""
    from sqlalchemy import func, select

    from bot.bench.digest_load import OBS, fill, real_rows

    imported = real_rows(loaded_engine)
    largest = max(len(rows) for rows in imported.values())
    total = sum(len(rows) for rows in imported.values())
    for wanted in (3 * total, 7 * total):  # a smaller history, then a larger one, as the bench does
        assert fill(loaded_engine, wanted, per_provider=imported) == wanted
        with loaded_engine.connect() as conn:
            sizes = conn.execute(select(func.count()).select_from(OBS).group_by(OBS.c.import_id)).scalars().all()
        assert sum(sizes) == wanted and max(sizes) <= largest


def test_a_widened_catalog_repeats_every_offer_in_its_own_region() -> None:
    from bot.bench.digest_load import ObservationRow, widened

    row = ObservationRow(provider_id="p", instance_type="i", gpu_id="g", gpu_count=1, region="r", tier="on-demand",
                         usd_per_hour=Decimal("1.5"))
    wide = widened({"p": [row, {**row, "instance_type": "j"}]}, 3)  # type: ignore[list-item]
    keys = [(r["instance_type"], r["region"]) for r in wide["p"]]
    assert len(keys) == 6 and len(set(keys)) == 6  # distinct offers, as one import holds them
    assert {r["region"] for r in wide["p"]} == {"r", "r~1", "r~2"}
    assert all(r["usd_per_hour"] == Decimal("1.5") and r["gpu_id"] == "g" for r in wide["p"])
