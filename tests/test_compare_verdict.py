"""Comparison cards decide (issue 21 item 4): with a workload in the question or the thread, a verdict row; without
one, what each GPU is best at from the catalog and a question for the workload, never an invented job; the safety
margin named wherever a fit figure is shown.

Expected values are derived from the inputs (the contenders' costs and hours, the catalog rows, the rule tables),
never copied from a rendered card."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from bot.answer.pipeline import answer
from bot.answer.routes import comparison_view
from bot.render.limits import check_message
from bot.render.messages import Messages
from knowledge.rule_tables import load_rule_tables
from rules.plans.compare import SAME_PCT, Contender, catalog_strengths, decide_comparison
from rules.types import Workload

NOW = datetime(2025, 6, 3, 9, 0, tzinfo=UTC)


# --- the decision (rules) ------------------------------------------------------------------------------------


def test_the_cheaper_job_wins_and_is_told_against_the_runner_up() -> None:
    one, two = Contender("h200", 1, 30.0, Decimal("120")), Contender("h100", 2, 28.0, Decimal("174"))
    verdict = decide_comparison((two, one))
    assert (verdict.outcome, verdict.winner, verdict.runner_up) == ("pick", "h200", "h100")
    assert verdict.reasons == ("fewer_gpus", "cheaper", "slower")
    assert verdict.numbers["cheaper_pct"] == round(100 * (174 - 120) / 174)  # 31
    assert verdict.numbers["slower_pct"] == round(100 * (28 - 30) / 28) * -1  # takes 7 % longer
    assert (verdict.numbers["count"], verdict.numbers["other_count"]) == (1, 2)


def test_fastest_objective_picks_on_time() -> None:
    cheap_slow, dear_fast = Contender("a", 1, 40.0, Decimal("50")), Contender("b", 1, 10.0, Decimal("80"))
    assert decide_comparison((cheap_slow, dear_fast)).winner == "a"
    fastest = decide_comparison((cheap_slow, dear_fast), "fastest")
    assert fastest.winner == "b" and "faster" in fastest.reasons
    assert fastest.numbers["faster_pct"] == round(100 * (40 - 10) / 40)


def test_a_winner_on_more_gpus_says_so() -> None:
    verdict = decide_comparison((Contender("big", 1, 10.0, Decimal("100")), Contender("two", 2, 6.0, Decimal("60"))))
    assert verdict.winner == "two" and verdict.reasons[0] == "more_gpus"


def test_only_one_fits_and_none_fits() -> None:
    only = decide_comparison((Contender("a", None), Contender("b", 2, 5.0, Decimal("9"))))
    assert (only.outcome, only.winner, only.numbers["count"]) == ("only_fit", "b", 2)
    assert decide_comparison((Contender("a", None), Contender("b", None))).outcome == "none_fit"


def test_differences_under_the_noise_floor_are_no_reason_and_missing_figures_are_said() -> None:
    near = decide_comparison((Contender("a", 1, 10.0, Decimal("100")), Contender("b", 1, 10.1, Decimal("101"))))
    assert 100 * (101 - 100) / 101 < SAME_PCT and near.reasons == ("same",)
    blind = decide_comparison((Contender("a", 1), Contender("b", 1)))
    assert blind.reasons == ("unmeasured",)  # never "about the same" when nothing was measured


def test_strengths_are_leads_over_every_other_gpu_from_the_catalog(snapshot: Any) -> None:
    gpus = [snapshot.gpus["h100-sxm-80gb"], snapshot.gpus["h200"]]
    h100, h200 = gpus
    strengths = catalog_strengths(gpus, {"h100-sxm-80gb": Decimal("2.00"), "h200": Decimal("3.00")})
    codes = {g: {s.code for s in found} for g, found in strengths.items()}
    assert h200.vram_gb > h100.vram_gb and "most_memory" in codes["h200"]
    assert h200.memory_bandwidth_gbs > h100.memory_bandwidth_gbs and "fastest_memory" in codes["h200"]
    assert "cheapest_rent" in codes["h100-sxm-80gb"]
    # the same dense BF16 figure is a shared lead, which is no lead
    assert h100.bf16_dense_tflops == h200.bf16_dense_tflops and "most_bf16" not in codes["h100-sxm-80gb"] | codes["h200"]


# --- the card (answering layer and render) ---------------------------------------------------------------------


def _text(reply: Any) -> str:
    return json.dumps(reply.message(), ensure_ascii=False)


def test_with_a_workload_in_the_question_the_card_names_a_winner(snapshot: Any) -> None:
    reply = answer("compare H100 vs H200 for 70B LoRA", snapshot=snapshot, lang="en", now=NOW)
    assert reply.kind == "comparison" and check_message(reply.message()) == []
    view = comparison_view(("h100-sxm-80gb", "h200"), Workload(params_b=70, method="lora"), snapshot, "")
    assert view.verdict is not None and view.verdict.outcome == "pick"
    fits = {line.gpu_name: line for line in view.fit}
    winner = snapshot.gpus[view.verdict.winner].name
    cheapest = min((line for line in view.fit if line.cost_usd is not None), key=lambda line: line.cost_usd)
    assert winner == cheapest.gpu_name and fits[winner].count is not None  # the cheaper job per the fit lines
    assert f"For 70B · LoRA: {winner}" in _text(reply)


def test_the_thread_workload_is_used_when_the_question_has_none(snapshot: Any) -> None:
    first = answer("fine-tune a 70B model with LoRA", snapshot=snapshot, lang="en", now=NOW)
    follow = answer("compare H100 vs H200", snapshot=snapshot, lang="en", now=NOW, state=first.state)
    assert follow.kind == "comparison"
    assert "🏁" in _text(follow) and "70B" in _text(follow)


@pytest.mark.parametrize("question", ["compare H100 vs H200", "compare H100 vs H200 for inference",
                                      "H100 or H200, which one should I pick?"])
def test_without_a_workload_the_card_says_what_each_is_best_at_and_asks(snapshot: Any, question: str) -> None:
    reply = answer(question, snapshot=snapshot, lang="en", now=NOW)
    assert reply.kind == "comparison"
    text, en = _text(reply), Messages.for_language("en")
    assert "🏁" not in text and "fits on" not in text  # no verdict, no fit of a job nobody gave
    assert json.dumps(en.raw("compare.ask_workload"), ensure_ascii=False)[1:-1] in text
    assert f"*{snapshot.gpus['h200'].name}*: " in text  # each GPU's line of strengths


@pytest.mark.parametrize("lang", ["zh-Hans", "ko", "ja", "es", "de", "fr", "vi"])
def test_the_decided_parts_are_in_the_cards_language(snapshot: Any, lang: str) -> None:
    messages = Messages.for_language(lang)
    with_job = _text(answer("compare H100 vs H200 for 70B LoRA", snapshot=snapshot, lang=lang, now=NOW))
    without = _text(answer("compare H100 vs H200", snapshot=snapshot, lang=lang, now=NOW))
    assert messages.raw("compare.strengths.title").split("*")[1] in without
    assert "safety margin" not in with_job and "cheaper per job" not in with_job and "fits on" not in with_job


def test_a_fit_figure_names_the_safety_margin_from_the_rule_tables(snapshot: Any) -> None:
    headroom = load_rule_tables().headroom_fraction
    view = comparison_view(("h100-sxm-80gb", "h200"), Workload(params_b=70, method="lora"), snapshot, "")
    reply = answer("compare H100 vs H200 for 70B LoRA", snapshot=snapshot, lang="en", now=NOW)
    text = _text(reply)
    for line in view.fit:
        vram = snapshot.gpus["h200" if "H200" in line.gpu_name else "h100-sxm-80gb"].vram_gb
        usable, margin = vram * (1 - headroom), vram * headroom
        assert line.usable_gib == pytest.approx(usable, abs=0.05)
        assert f"{usable:.1f} GiB usable" in text and f"{margin:.1f} GiB of the {vram:g} GB kept free as safety margin" in text


# --- the safety margin wherever a fit figure is shown ----------------------------------------------------------


def test_a_need_the_card_seems_to_hold_says_the_rest_is_the_safety_margin() -> None:
    """The issue's case: "needs 78.1 of 80" read as a contradiction until the kept-free margin is named."""
    from bot.render.findings import reject_text
    from bot.render.formats import Formatter

    f = Formatter(Messages.for_language("en"))
    numbers = {"needed_gib": 78.1, "has_gib": 80, "usable_gib": 76.0, "gpus": 1}
    text = reject_text("fit.vram", numbers, f, gpu="H100 SXM 80GB")
    assert "78.1 GiB" in text and "76.0 GiB usable" in text and "4.0 GiB is kept free as safety margin" in text
    over = reject_text("fit.vram", {**numbers, "needed_gib": 145.1}, f, gpu="H100 SXM 80GB")
    assert "safety margin" not in over  # more than the whole card: nothing to explain
    de = reject_text("fit.vram", numbers, Formatter(Messages.for_language("de")), gpu="H100 SXM 80GB")
    assert "76,0 GiB" in de and "Sicherheitsreserve" in de


def test_the_engine_reports_the_usable_memory_behind_a_pinned_answer(snapshot: Any) -> None:
    from bot.answer.advice import evaluate

    headroom = load_rule_tables().headroom_fraction
    verdict = evaluate(Workload(params_b=70, method="full", gpu="rtx-4090", gpus=1), snapshot)
    pinned = next(x for x in verdict.findings if x.code == "fit.pinned")
    vram = snapshot.gpus["rtx-4090"].vram_gb
    assert pinned.outcome == "fail" and pinned.numbers["usable_gib"] == pytest.approx(vram * (1 - headroom), abs=0.05)
    fitted = evaluate(Workload(params_b=1, method="lora", gpu="rtx-4090", gpus=1), snapshot)
    passed = next(x for x in fitted.findings if x.code == "fit.pinned")
    assert passed.outcome == "pass" and passed.numbers["usable_gib"] == pytest.approx(vram * (1 - headroom), abs=0.05)
    reply = answer("lora on a 1B model on my rtx 4090", snapshot=snapshot, lang="en", now=NOW)
    assert f"{vram * (1 - headroom):.1f} GiB usable" in _text(reply) and "safety margin" in _text(reply)
