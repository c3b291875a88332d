"""Issue 19 at the command line: `estimate` flags and `--input` lines, strict `--json`, undecodable stdin.

Each example of the issue is a named test: a refused input exits 1 with one line naming the field and
its range, prints nothing on stdout, and leaves the database as it was.
"""

from __future__ import annotations

import io
import math
import os
import subprocess
import sys
from typing import Any

import pytest
from refusals import fingerprint, strict_json, strict_json_lines

from bot.cli import main
from bot.cli.context import CliError, find_non_finite, read_queries, to_json
from bot.cli.validate import BOUNDS, require_estimate_values


@pytest.fixture
def cli(loaded_engine: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    """`main(argv)` on a loaded database; returns (exit status, stdout, stderr)."""
    monkeypatch.setenv("DATABASE_URL", loaded_engine.url.render_as_string(hide_password=False))

    def run(*argv: str, stdin: bytes | None = None) -> tuple[int, str, str]:
        if stdin is not None:
            monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


# --- estimate flags: finite, positive, within physical ranges, the range in the message --------------


@pytest.mark.parametrize(("flags", "message"), [
    (["--params-b", "inf"], "--params-b: inf is not a finite number (a number from 0.001 to 10,000 billion parameters)"),
    (["--params-b", "7", "--tokens", "nan"], "--tokens: nan is not a finite number (a number from 1 to 1e+15"),
    (["--params-b", "7", "--epochs", "nan"], "--epochs: nan is not a finite number (a number from 0.001 to 1,000 epochs)"),
    (["--params-b", "1e308"], "--params-b: 1e+308 is out of range (a number from 0.001 to 10,000 billion parameters)"),
    (["--params-b", "7", "--gpus", "0"], "--gpus: must be positive, got 0 (a whole number from 1 to 100,000 GPUs)"),
    (["--params-b", "7", "--seq-len", "-4096"], "--seq-len: must be positive, got -4096"),
    (["--params-b", "7", "--budget-usd", "nan"], "--budget-usd: must be a positive amount, got 'nan'"),
    (["--params-b", "7", "--budget-usd", "$1e400"], "--budget-usd: '$1e400' is out of range"),
    (["--params-b", "7", "--deadline-hours=-inf"], "--deadline-hours: -inf is not a finite number"),
    (["--model", "llama-3.1-8b", "--method", "serving", "--concurrency", "1000000000"],
     "--concurrency: 1000000000 is out of range (a whole number from 1 to 1,000,000 sequences in flight)"),
], ids=["params-inf", "tokens-nan", "epochs-nan", "params-1e308", "gpus-0", "seq-negative", "budget-nan",
        "budget-1e400", "deadline-minus-inf", "concurrency-huge"])
def test_estimate_refuses_a_bad_flag_with_its_range(cli: Any, loaded_engine: Any, flags: list[str],
                                                    message: str) -> None:
    before = fingerprint(loaded_engine)
    code, out, err = cli("estimate", *flags, "--json")
    assert code == 1 and out == ""
    assert message in err and "Traceback" not in err
    assert fingerprint(loaded_engine) == before


def test_estimate_json_with_nan_or_inf_never_exits_0_with_non_json(cli: Any) -> None:
    """The issue's example: `estimate --json` with nan/inf printed NaN/Infinity and exited 0."""
    for flags in (["--params-b", "nan"], ["--params-b", "7", "--tokens", "inf"], ["--params-b", "7", "--epochs", "inf"],
                  ["--params-b", "7", "--tokens-per-s", "nan", "--method", "serving"]):
        code, out, _ = cli("estimate", *flags, "--json")
        assert code == 1 and "NaN" not in out and "Infinity" not in out, flags


def test_every_problem_is_named_at_once() -> None:
    with pytest.raises(CliError) as caught:
        require_estimate_values({"params_b": math.inf, "gpus": 0, "epochs": math.nan}, flags=True)
    assert str(caught.value).count("; ") == 2
    assert {"--params-b", "--gpus", "--epochs"} == {part.split(":")[0] for part in str(caught.value).split("; ")}


@pytest.mark.parametrize(("values", "message"), [
    ({"gpus": True}, "gpus: true is not a number"),
    ({"gpus": 2.5}, "gpus: 2.5 is not a whole number"),
    ({"gpus": 1e20}, "gpus: 1e+20 is out of range"),
    ({"samples": 10**30}, "samples: 1000000000000000000000000000000 is out of range"),
    ({"offload": "yes"}, "offload: 'yes' is not true or false"),
    ({"recipe": ["bf16"]}, "recipe: ['bf16'] is not text"),
    ({"model": "llama\x00"}, "model: contains control characters"),
    ({"gpu": "h" * 500}, "gpu: longer than 200 characters"),
    ({"budget_usd": {"usd": 5}}, "budget_usd: {'usd': 5} is not an amount in US dollars"),
    ({"gpu": "h100 \udcff"}, "gpu: contains bytes that are not UTF-8"),
], ids=["bool", "fraction", "1e20", "huge-int", "switch", "list", "nul", "long", "object", "undecodable"])
def test_input_line_values_are_typed(values: dict[str, Any], message: str) -> None:
    with pytest.raises(CliError) as caught:
        require_estimate_values(values)
    assert str(caught.value).startswith(message)


def test_good_values_pass_through_typed() -> None:
    checked = require_estimate_values({"params_b": "7", "gpus": 8.0, "budget_usd": "$1,500", "spot": True})
    assert checked["params_b"] == 7.0 and checked["gpus"] == 8 and isinstance(checked["gpus"], int)
    assert str(checked["budget_usd"]) == "1500" and checked["spot"] is True


@pytest.mark.parametrize("key", sorted(BOUNDS))
def test_every_bound_is_a_physical_range(key: str) -> None:
    bound = BOUNDS[key]
    assert 0 < bound.low < bound.high < 1e16 and math.isfinite(bound.high)
    assert f"{bound.low:g}"[0].isdigit() and key.replace("_", " ")  # the message can show it


# --- estimate --input: one JSON object per line, every bad line answered on its own ---------------------


def test_input_lines_refuse_nan_bad_bytes_and_deep_nesting_each_on_its_line(cli: Any, loaded_engine: Any) -> None:
    lines = b"\n".join([
        b'{"params_b": 7}',
        b'{"params_b": NaN}',
        b'{"params_b": 7, "epochs": Infinity}',
        b"\xff\xfe{}",
        b'{"params_b": 7, "gpus": 1e20}',
        b"[" * 100_000,
        b'{"params_b": 7, "gpus": true}',
        b'{"model": "llama-3.1-8b", "method": "qlora"}',
    ])
    before = fingerprint(loaded_engine)
    code, out, err = cli("estimate", "--input", "-", stdin=lines)
    rows = strict_json_lines(out)
    assert code == 1 and "Traceback" not in err
    assert [r.get("line") for r in rows] == [None, 2, 3, 4, 5, 6, 7, None]
    errors = {r["line"]: r["error"] for r in rows if "error" in r}
    assert errors[2] == "line 2: not JSON (NaN is not a JSON number)"
    assert errors[3] == "line 3: not JSON (Infinity is not a JSON number)"
    assert errors[4] == "line 4: not UTF-8 (byte 1: 0xff)"
    assert errors[5].startswith("gpus: 1e+20 is out of range (a whole number from 1 to 100,000 GPUs)")
    assert errors[6] == "line 6: not JSON (nested too deeply)"
    assert errors[7].startswith("gpus: true is not a number")
    assert rows[0]["memory"]["per_gpu_gib"] > 0 and rows[-1]["options"]
    assert fingerprint(loaded_engine) == before


# --- strict JSON out -------------------------------------------------------------------------------------


def test_a_non_finite_result_is_an_error_naming_where_it_is() -> None:
    result = {"options": [{"hours": 3.5}, {"hours": math.inf}], "memory": {"per_gpu_gib": 10.0}}
    assert find_non_finite(result) == "$.options[1].hours (inf)"
    with pytest.raises(CliError, match=r"non-finite number at \$\.options\[1\]\.hours \(inf\)"):
        to_json(result)
    assert strict_json(to_json({"ok": [1.5, None, "x"]})) == {"ok": [1.5, None, "x"]}


def test_lone_surrogates_become_replacement_characters() -> None:
    assert to_json({"q": "h100 \udcff"}) == '{"q": "h100 \ufffd"}'


@pytest.mark.parametrize("argv", [
    ["ask", "price 4090", "--json"],
    ["ask", "fine-tune 13B with QLoRA on a budget", "--json"],
    ["parse", "fine-tune a 1e308B model on -5 GPUs by yesterday", "--json"],
    ["resolve", "a100", "--json"],
    ["specs", "h100", "--json"],
    ["compare", "h100", "h200", "--json"],
    ["estimate", "--model", "llama-3.1-70b", "--method", "serving", "--gpu", "rtx 4090", "--json"],
    ["estimate", "--params-b", "13", "--method", "qlora", "--tokens", "1e15", "--epochs", "1000", "--json"],
    ["estimate", "--calibration-report", "--json"],
], ids=lambda argv: "-".join(a for a in argv[:2] if not a.startswith("--")))
def test_every_json_command_prints_strict_json(cli: Any, argv: list[str]) -> None:
    code, out, err = cli(*argv)
    assert code == 0, err
    strict_json(out)


# --- standard input: undecodable bytes replaced and said, never echoed raw -----------------------------


def test_ask_stdin_with_invalid_utf8_is_replaced_and_said(cli: Any, caplog: pytest.LogCaptureFixture) -> None:
    code, out, _ = cli("ask", "-", stdin=b"price 4090\nh100 \xff\xfe price\n\xef\xbb\xbfspecs l4\n")
    rows = strict_json_lines(out)
    assert code == 0 and len(rows) == 3
    assert rows[1]["question"] == "h100 \ufffd\ufffd price"
    assert rows[1]["input_note"] == "line 2: 2 byte(s) that are not UTF-8 replaced by U+FFFD"
    assert "input_note" not in rows[0] and "input_note" not in rows[2]
    assert any("line 2: 2 byte(s)" in r.getMessage() for r in caplog.records)  # said on stderr too


def test_parse_stdin_with_invalid_utf8_is_replaced_and_said(cli: Any) -> None:
    code, out, _ = cli("parse", "-", stdin=b"\xc3\x28 4090 price\n")
    [row] = strict_json_lines(out)
    assert code == 0 and row["input_note"].startswith("line 1: 1 byte(s)") and row["gpus"][0]["id"] == "rtx-4090"


def test_read_queries_keeps_valid_text_and_drops_a_bom() -> None:
    stream = io.TextIOWrapper(io.BytesIO("\ufeffprice 4090\n\n  \n用QLoRA微调\n".encode()), encoding="utf-8")
    assert [(q.text, q.note) for q in read_queries("-", stream)] == [("price 4090", None), ("用QLoRA微调", None)]


def test_the_real_process_never_writes_invalid_utf8(loaded_engine: Any, tmp_path: Any) -> None:
    """The issue's example end to end: bytes that are not UTF-8 on `ask -`, and in an argument."""
    env = {**os.environ, "DATABASE_URL": loaded_engine.url.render_as_string(hide_password=False),
           "GPU_ADVISOR_HOME": str(tmp_path)}
    command = [os.path.join(os.path.dirname(sys.executable), "gpu-advisor")]
    piped = subprocess.run([*command, "ask", "-"], input=b"price 4090 \xff\xfe\x80\n", capture_output=True,
                           env=env, timeout=120, check=False)
    argued = subprocess.run([*command, "parse", b"h100 \xff price", "--json"], capture_output=True, env=env,
                            timeout=120, check=False)
    for done in (piped, argued):
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    [asked] = strict_json_lines(piped.stdout)  # decodes strictly: a raw \xff would fail here
    [parsed] = strict_json_lines(argued.stdout)
    assert asked["question"] == "price 4090 \ufffd\ufffd\ufffd" and asked["input_note"].startswith("line 1: 3 byte(s)")
    assert parsed["input_note"] == "1 byte(s) that are not UTF-8 replaced by U+FFFD" and parsed["gpus"]


def test_json_output_escapes_the_line_breaks_json_allows_raw() -> None:
    """U+2028/U+2029/NEL are legal raw in JSON but split a line for str.splitlines() and JavaScript
    readers: a question holding one must still print as one line (found by the stdin property test)."""
    question = "price\u2028of a 4090\u0085 and\u2029 H100\x1c"
    out = to_json({"question": question})
    assert out.splitlines() == [out]
    assert "\\u2028" in out and "\\u0085" in out and "\\u2029" in out
    assert strict_json(out) == {"question": question}
