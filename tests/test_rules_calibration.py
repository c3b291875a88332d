"""Memory model vs published measured runs (tests/cases/memory_cases_dev.json): prints the report."""

from __future__ import annotations

import json

from rules.calibration import evaluate_cases, is_held_out, summaries
from test_rules_support import CASES

TARGET = {"median": 10.0, "p90": 25.0, "band": 0.80}


def _results():
    cases = json.loads((CASES / "memory_cases_dev.json").read_text())
    settings = json.loads((CASES / "memory_cases_settings.json").read_text())["cases"]
    models = json.loads((CASES / "memory_case_models.json").read_text())
    return cases, evaluate_cases(cases, settings, models)


def test_every_case_has_settings_and_a_model_shape():
    cases, results = _results()
    assert len(results) == len(cases) == 56


def test_holdout_is_a_fixed_third():
    cases, _ = _results()
    held = [c["id"] for c in cases if is_held_out(c["id"])]
    assert 12 <= len(held) <= 24


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
    # Regression guards at the level reached (docs/CALIBRATION.md); the target is not met everywhere.
    assert rows["all"].median_abs_pct <= 12.0
    assert rows["held-out"].median_abs_pct <= 14.0
    assert rows["all"].in_band / rows["all"].count >= 0.70
    assert rows["held-out"].p90_abs_pct <= 30.0


def test_claim_upper_bound_holds():
    """QLoRA paper: 65B fine-tunes in < 48 GB; the model must agree (an inequality, not a point)."""
    _, results = _results()
    claim = next(r for r in results if r.kind == "claim_upper_bound")
    assert claim.predicted_gib <= claim.measured_gib
