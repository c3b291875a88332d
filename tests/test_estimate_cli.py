"""`gpu-advisor estimate`: input validation and the calibration report (no database needed)."""

from __future__ import annotations

import pytest

from bot.cli import main
from bot.cli.context import CliError
from bot.cli.estimate import _parse_line, build_workload


class _NoCatalog:
    """A snapshot stand-in whose indexes find nothing."""

    class _Index:
        def resolve(self, name):
            from types import SimpleNamespace
            return SimpleNamespace(status="none", model_id=None, gpu_id=None, candidates=(), suggestions=(), count=None)

    model_index = _Index()
    gpu_index = _Index()
    models: dict = {}


def test_calibration_report_prints_groups(capsys):
    assert main(["estimate", "--calibration-report"]) == 0
    out = capsys.readouterr().out
    assert "held-out" in out and "median" in out


@pytest.mark.parametrize(("line", "message"), [
    ("not json", "line 3: not JSON"),
    ("[1]", "line 3: expected a JSON object"),
    ('{"modle": "x"}', "line 3: unknown keys modle"),
])
def test_bad_input_lines(line, message):
    with pytest.raises(CliError, match=message):
        _parse_line(line, 3)


@pytest.mark.parametrize(("values", "message"), [
    ({"seq_len": "long"}, "seq_len: 'long' is not a number"),
    ({"batch_size": -1}, "batch_size: must be positive"),
    ({"method": "distill"}, "method: 'distill' is not one of"),
    ({"budget_usd": "lots"}, "budget_usd: 'lots' is not an amount"),
    ({"model": "no-such-model"}, "unknown model 'no-such-model'"),
    ({"gpu": "rtx 9999"}, "unknown GPU 'rtx 9999'"),
])
def test_bad_values_are_clear_errors(values, message):
    with pytest.raises(CliError, match=message):
        build_workload(values, _NoCatalog())


def test_unknown_model_with_params_b_is_fine():
    workload = build_workload({"model": "my-private-7b", "params_b": 7, "method": "qlora"}, _NoCatalog())
    assert workload.model is None and workload.params_b == 7.0
