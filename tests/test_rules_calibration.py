"""Memory model vs published measured runs (tests/cases/memory_cases_dev.json): prints the report."""

from __future__ import annotations

import json

from bot.cli.estimate import load_memory_cases
from rules.memory.calibration import evaluate_cases, is_held_out, summaries
from test_rules_support import CASES

TARGET = {"median": 10.0, "p90": 25.0, "band": 0.80}


def _results():
    cases = load_memory_cases(CASES)
    settings = json.loads((CASES / "memory_cases_settings.json").read_text())["cases"]
    models = json.loads((CASES / "memory_case_models.json").read_text())
    return cases, evaluate_cases(cases, settings, models)


def test_every_case_has_settings_and_a_model_shape():
    cases, results = _results()
    assert len(results) == len(cases) == 56 + 25


def test_holdout_is_a_fixed_third():
    cases, _ = _results()
    held = [c["id"] for c in cases if is_held_out(c["id"])]
    assert len(cases) / 5 <= len(held) <= len(cases) / 2  # about a third


def test_calibration_report(capsys):
    """Prints the figures; guards against regressions (the issue's target is printed beside them)."""
    _, results = _results()
    rows = {s.label: s for s in summaries(results)}
    with capsys.disabled():
        print(f"\n{'group':30s}   n median|%|  p90|%| in-band   (target median<={TARGET['median']}, "
              f"p90<={TARGET['p90']}, band>={TARGET['band']:.0%})")
        for s in rows.values():
            if s.count:
                print(f"{s.label:30s} {s.count:3d} {s.median_abs_pct:8.1f} {s.p90_abs_pct:7.1f} {s.in_band:3d}/{s.count}")
    # The target on the held-out third (docs/CALIBRATION.md), and guards on the whole set.
    held = rows["held-out"]
    assert held.median_abs_pct <= TARGET["median"]
    assert held.p90_abs_pct <= TARGET["p90"]
    assert held.in_band / held.count >= TARGET["band"]
    assert rows["all"].median_abs_pct <= TARGET["median"]
    assert rows["all"].in_band / rows["all"].count >= TARGET["band"]
    assert rows["all"].p90_abs_pct <= TARGET["p90"]
    # Per method and framework (issue 17 item 3): every group with enough runs keeps a median within target.
    for label, s in rows.items():
        if label.startswith(("method:", "framework:")) and not label.endswith("held-out") and s.count >= 8:
            assert s.median_abs_pct <= 15.0, label


def test_unknown_settings_widen_the_band_to_cover_every_alternative():
    """A source that does not state checkpointing gets a band spanning AC on and off."""
    cases, _ = _results()
    settings = json.loads((CASES / "memory_cases_settings.json").read_text())["cases"]
    models = json.loads((CASES / "memory_case_models.json").read_text())
    case = next(c for c in cases if c["id"] == "tt-l31-8b-lora-a6000")
    known = {k: v for k, v in settings[case["id"]].items() if k != "unknown"}
    narrow = evaluate_cases([case], {case["id"]: known}, models)[0]
    wide = evaluate_cases([case], settings, models)[0]
    assert wide.predicted_gib == narrow.predicted_gib
    # Expected at AC off; AC on (the config default) drops 32 layers x 4096 tokens x ~84k elements x 2 B of
    # saved activations, so the band's low end falls well below the AC-off one.
    assert wide.high_gib >= narrow.high_gib and wide.low_gib < 0.75 * narrow.low_gib


def test_claim_upper_bound_holds():
    """QLoRA paper: 65B fine-tunes in < 48 GB; the model must agree (an inequality, not a point)."""
    _, results = _results()
    claim = next(r for r in results if r.kind == "claim_upper_bound")
    assert claim.predicted_gib <= claim.measured_gib
