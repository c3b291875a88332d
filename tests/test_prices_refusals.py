"""Issue 19's price-file examples, as named regressions: each is refused with a clear one-line message, through the
CLI as a user runs it, and nothing in the database changes (no traceback, exit 1)."""

from __future__ import annotations

import csv
import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from bot.cli import main
from knowledge import tables
from knowledge.setup import BUNDLED_PRICES

LAMBDA = (BUNDLED_PRICES / "lambda.csv").read_text(encoding="utf-8")
HEADER, FIRST = LAMBDA.splitlines()[0], next(ln for ln in LAMBDA.splitlines()[1:] if ",H100," in ln)
OWN = "provider,instance_type,gpu,gpu_count,region,tier,usd_per_hour\n"


def state(engine: Engine) -> tuple[Any, ...]:
    """Everything an import can change: offers (with prices and flags), observations, import runs."""
    with engine.connect() as conn:
        offers = conn.execute(select(tables.Offer.__table__.c.instance_type, tables.Offer.__table__.c.usd_per_hour,  # type: ignore[attr-defined]
                                     tables.Offer.__table__.c.active).order_by(tables.Offer.__table__.c.id)).all()  # type: ignore[attr-defined]
        obs = conn.execute(select(func.count()).select_from(tables.PriceObservation)).scalar_one()
        runs = conn.execute(select(func.count()).select_from(tables.ImportRun)).scalar_one()
    return tuple(offers), obs, runs


def run(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        *argv: str) -> tuple[int, str, str]:
    monkeypatch.setenv("DATABASE_URL", engine.url.render_as_string(hide_password=False))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue(), capsys.readouterr().err


def lambda_with(cell: str, value: str) -> str:
    cells = FIRST.split(",")
    cells[HEADER.split(",").index(cell)] = value
    return HEADER + "\n" + ",".join(cells) + "\n" + "\n".join(LAMBDA.splitlines()[2:]) + "\n"


CASES: list[tuple[str, bytes, tuple[str, ...], str]] = [
    ("empty-skypilot", (HEADER + "\n").encode(), (), r"none kept .* would switch off lambda's offers"),
    ("nan-price", lambda_with("Price", "NaN").encode(), (), r"lambda\.csv:2: price 'NaN' is not a number \(NaN\)"),
    ("snan-price", lambda_with("Price", "sNaN").encode(), (), r"lambda\.csv:2: price 'sNaN' is not a number \(NaN\)"),
    ("inf-price", lambda_with("Price", "inf").encode(), (), r"lambda\.csv:2: price 'inf' is not finite"),
    ("negative-price", lambda_with("Price", "-1").encode(), (), r"price '-1' is negative"),
    ("absurd-price", lambda_with("Price", "1e9").encode(), (), r"per GPU-hour, outside 0\.001-500"),
    ("nan-count", lambda_with("AcceleratorCount", "nan").encode(), (), r"GPU count 'nan' is not a whole number"),
    ("inf-count", lambda_with("AcceleratorCount", "inf").encode(), (), r"GPU count 'inf' is not a whole number"),
    ("1e20-count", lambda_with("AcceleratorCount", "1e20").encode(), (), r"GPU count '1e20' is not a whole number from 1 to 1024"),
    ("half-count", lambda_with("AcceleratorCount", "0.5").encode(), (), r"GPU count '0\.5'"),
    ("latin-1", lambda_with("Region", "Zürich").encode("latin-1"), (), r"not UTF-8 text: byte \d+ is 0xfc"),
    ("utf-16", LAMBDA.encode("utf-16"), (), r"not UTF-8 text \(it looks like UTF-16\): byte 0"),
    ("stray-byte", LAMBDA.encode()[:500] + b"\xff" + LAMBDA.encode()[500:], (), r"not UTF-8 text: byte 500 is 0xff"),
    ("nul-byte", lambda_with("InstanceType", "gpu_1x\x00h100").encode(), (), r"lambda\.csv:2: InstanceType has a control character U\+0000"),
    ("surplus-cells", (HEADER + "\n" + FIRST + ",extra,cells\n").encode(), (), r"lambda\.csv:2: row has \d+ cells, the header has \d+"),
    ("own-nan", (OWN + "lambda,x,H100 SXM,1,us,on-demand,NaN\n").encode(), ("--format", "csv"), r"usd_per_hour 'NaN' is not a number"),
    ("own-1e20", (OWN + "lambda,x,H100 SXM,1e20,us,on-demand,2.0\n").encode(), ("--format", "csv"), r"GPU count '1e20'"),
    ("own-empty", OWN.encode(), ("--format", "csv"), r"none kept"),
    ("json-nan", b'[{"provider": "lambda", "gpu": "H100 SXM", "usd_per_hour": NaN}]', ("--format", "json"),
     r"JSON value NaN is not a number we accept"),
    ("json-deep", b"[" * 100_000 + b"]" * 100_000, ("--format", "json"), r"nested deeper than 64 levels"),
    ("json-unknown-field", b'[{"provider": "lambda", "gpu": "H100 SXM", "usd_per_hour": 2, "discount": 1}]',
     ("--format", "json"), r"unknown field\(s\) 'discount'"),
]


@pytest.mark.parametrize(("body", "flags", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_price_file_is_refused_and_changes_nothing(loaded_engine: Engine, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str],
                                                       body: bytes, flags: tuple[str, ...], message: str) -> None:
    path = tmp_path / ("lambda.json" if "json" in flags else "lambda.csv")
    path.write_bytes(body)
    before = state(loaded_engine)
    code, out, err = run(loaded_engine, tmp_path, monkeypatch, capsys, "prices", "import", str(path), *flags)
    assert code == 1 and out == ""
    assert err.startswith("gpu-advisor: nothing imported: ") and "Traceback" not in err
    assert err.count("\n") == 1  # one line
    assert re.search(message, err), err
    assert state(loaded_engine) == before


@pytest.mark.parametrize(("value", "message"), [
    ("2099-01-01T00:00:00Z", r"--observed-at 2099-01-01 is in the future"),
    ("9999-12-31T23:59:59+00:00", r"--observed-at 9999-12-31 is in the future"),
    ("0001-01-01T00:00:00+00:00", r"--observed-at 0001-01-01 is before \d{4}-01-01, the release of the oldest GPU"),
    ("0001-01-01T00:00:00+01:00", r"outside the calendar|before"),
    ("2026-13-01", r"is not ISO-8601"),
    ("2026-11-01T00:00:00", r"needs a time zone"),
    ("yesterday", r"is not ISO-8601"),
    ("2026-11-01\x00", r"control character U\+0000"),
], ids=["2099", "calendar-max", "calendar-min", "calendar-min-offset", "month-13", "naive", "word", "nul"])
def test_observed_at_is_refused(loaded_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str], value: str, message: str) -> None:
    before = state(loaded_engine)
    code, _, err = run(loaded_engine, tmp_path, monkeypatch, capsys, "prices", "import",
                       str(BUNDLED_PRICES / "lambda.csv"), "--observed-at", value)
    assert code == 1 and "Traceback" not in err and re.search(message, err), err
    assert state(loaded_engine) == before


def test_empty_file_with_explicit_flag_switches_the_provider_off(loaded_engine: Engine, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "lambda.csv"
    path.write_text(HEADER + "\n", encoding="utf-8")
    active = sum(1 for o in state(loaded_engine)[0] if o[2])
    code, out, _ = run(loaded_engine, tmp_path, monkeypatch, capsys, "prices", "import", str(path),
                       "--allow-deactivate", "--json")
    report = json.loads(out)
    assert code == 0 and report["rows_read"] == 0 and report["rows_kept"] == 0
    # One offer per instance type and region of lambda.csv's accelerator rows (lambda has no spot prices).
    rows = [r for r in csv.DictReader(io.StringIO(LAMBDA)) if r["AcceleratorName"]]
    lambda_active = len({(r["InstanceType"], r["Region"]) for r in rows})
    assert report["deactivated"] == lambda_active
    assert sum(1 for o in state(loaded_engine)[0] if o[2]) == active - lambda_active


def test_shrinking_past_the_share_is_refused_with_counts(loaded_engine: Engine, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    lines = LAMBDA.splitlines()
    path = tmp_path / "lambda.csv"
    path.write_text("\n".join([lines[0]] + [ln for ln in lines[1:] if ",H100," in ln]) + "\n", encoding="utf-8")
    before = state(loaded_engine)
    code, _, err = run(loaded_engine, tmp_path, monkeypatch, capsys, "prices", "import", str(path),
                       "--max-deactivated-pct", "50")
    offers = len({(r["InstanceType"], r["Region"]) for r in csv.DictReader(io.StringIO(LAMBDA)) if r["AcceleratorName"]})
    assert code == 1 and re.search(rf"would switch off \d+ of lambda's {offers} offers", err), err
    assert state(loaded_engine) == before
    code, _, _ = run(loaded_engine, tmp_path, monkeypatch, capsys, "prices", "import", str(path))
    assert code == 0  # the default refuses only switching off all of them

