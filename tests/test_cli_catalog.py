"""The catalog CLI end to end: real database, real process entry point, the JSON keys other tools read."""

import io
import json

import pytest

from bot.cli import main

RESOLVE_KEYS = {"status", "gpu", "candidates", "suggestions"}
SPEC_KEYS = {
    "id", "name", "vendor", "architecture", "vram_gb", "memory_type", "memory_bandwidth_gbs",
    "bf16_dense_tflops", "fp8_dense_tflops", "fp32_tflops", "tdp_w", "release_year", "segment",
    "form_factor", "scaleup_link", "scaleup_bw_gbs", "source",
}


@pytest.fixture
def cli(loaded_engine, monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", loaded_engine.url.render_as_string(hide_password=False))

    def run(*argv, stdin=None):
        if stdin is not None:
            monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_resolve_json(cli):
    code, out, _ = cli("resolve", "rtx4090", "--json")
    result = json.loads(out)
    assert code == 0 and RESOLVE_KEYS <= set(result)
    assert result["status"] == "found" and result["gpu"]["id"] == "rtx-4090"


def test_bare_a100_is_ambiguous(cli):
    _, out, _ = cli("resolve", "A100", "--json")
    result = json.loads(out)
    assert result["status"] == "ambiguous" and result["gpu"] is None
    assert {"a100-sxm-40gb", "a100-sxm-80gb"} <= {c["id"] for c in result["candidates"]}


def test_stdin_gives_json_lines(cli):
    code, out, _ = cli("resolve", "-", stdin="h100\n\n8x H100 SXM\nzzzz qqqq\n")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [r["status"] for r in lines] == ["found", "found", "none"]
    assert lines[1]["count"] == 8


def test_specs_h100_matches_the_datasheet(cli):
    # NVIDIA H100 datasheet (nvidia.com/en-us/data-center/h100): SXM 80 GB HBM3, 3.35 TB/s,
    # BF16 tensor 1,979 TFLOPS *with sparsity* = 989 dense, FP8 3,958 sparse = 1,979 dense, 700 W.
    code, out, _ = cli("specs", "H100 SXM", "--json")
    spec = json.loads(out)
    assert code == 0 and SPEC_KEYS | RESOLVE_KEYS <= set(spec)
    assert spec["vram_gb"] == 80 and spec["tdp_w"] == 700
    assert spec["bf16_dense_tflops"] == pytest.approx(989, rel=0.01)
    assert spec["fp8_dense_tflops"] == pytest.approx(1979, rel=0.01)
    assert spec["memory_bandwidth_gbs"] == pytest.approx(3350, rel=0.01)


def test_compare_has_market_columns(cli):
    code, out, _ = cli("compare", "h100", "a100 80gb", "rtx 4090", "--json")
    gpus = json.loads(out)["gpus"]
    assert code == 0 and [g["id"] for g in gpus][0] == "h100-sxm-80gb"
    for g in gpus:
        assert SPEC_KEYS | {"cheapest_on_demand_usd_per_hour", "provider_count"} <= set(g)
        assert g["provider_count"] >= 1 and g["cheapest_on_demand_usd_per_hour"] > 0


def test_compare_terminal_table(cli):
    code, out, _ = cli("compare", "h100", "l40s")
    assert code == 0
    assert "Cheapest on-demand" in out and "Hopper" in out and "Ada Lovelace" in out


def test_compare_with_an_ambiguous_name_says_so(cli):
    code, _, err = cli("compare", "a100", "h100")
    assert code == 1 and "ambiguous" in err and "Traceback" not in err


def test_compare_needs_two_to_four(cli):
    code, _, err = cli("compare", "h100")
    assert code == 1 and "2 to 4" in err


def test_prices_import_bad_file_changes_nothing(cli, tmp_path):
    bad = tmp_path / "deal.csv"
    bad.write_text("provider,gpu,usd_per_hour\nlambda,H100 SXM,abc\n", encoding="utf-8")
    code, _, err = cli("prices", "import", str(bad), "--format", "csv")
    assert code == 1 and "nothing imported" in err and "deal.csv:2" in err


def test_prices_import_own_csv(cli, tmp_path):
    good = tmp_path / "deal.csv"
    good.write_text("provider,gpu,gpu_count,usd_per_hour\nlambda,H100 SXM,8,15.92\n", encoding="utf-8")
    code, out, _ = cli("prices", "import", str(good), "--json", "--observed-at", "2026-11-20T00:00:00Z")
    assert code == 0 and json.loads(out)["offers"] == 1


def test_db_upgrade_is_idempotent(cli):
    code, out, _ = cli("db", "upgrade", "--json")
    summary = json.loads(out)
    assert code == 0 and summary["catalog"]["gpus"] >= 45
    assert summary["imports"] == []  # bundled prices were already there: not imported twice
