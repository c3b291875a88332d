"""`gpu-advisor digest preview --json` after importing a changed SkyPilot snapshot, and `digest run --dry-run`."""

from __future__ import annotations

import csv
import io
import json
from contextlib import redirect_stdout
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine

from bot.cli import main
from knowledge.prices import import_prices
from knowledge.setup import BUNDLED_PRICES

KEYS = {"gpu", "provider", "gpu_count", "tier", "market", "kind", "old_usd_per_hour", "new_usd_per_hour", "change_pct"}


def run_cli(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str]:
    monkeypatch.setenv("DATABASE_URL", engine.url.render_as_string(hide_password=False))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


def changed_lambda(tmp_path: Path) -> tuple[Path, Decimal]:
    """lambda.csv with gpu_1x_h100_sxm5 cut by 20 % in every region (the real file otherwise)."""
    src = BUNDLED_PRICES / "lambda.csv"
    rows = list(csv.DictReader(src.open(encoding="utf-8", newline="")))
    old = {Decimal(r["Price"]) for r in rows if r["InstanceType"] == "gpu_1x_h100_sxm5"}
    assert len(old) == 1, old  # one price in every region in this snapshot
    for r in rows:
        if r["InstanceType"] == "gpu_1x_h100_sxm5":
            r["Price"] = str(Decimal(r["Price"]) * Decimal("0.8"))
    dst = tmp_path / "lambda.csv"
    with dst.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return dst, old.pop()


def test_preview_json_after_a_changed_snapshot(loaded_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, old = changed_lambda(tmp_path)
    # Observed now: after the bundled snapshots (dated by their source), and not in the future (refused since issue 19).
    later = datetime.now(UTC)
    import_prices(loaded_engine, path, fmt="skypilot", provider="lambda", observed_at=later)
    since = (later - timedelta(hours=1)).isoformat()
    code, out = run_cli(loaded_engine, tmp_path, monkeypatch, "digest", "preview", "--since", since, "--json")
    assert code == 0
    result = json.loads(out)
    assert set(result) == {"changes", "card"} and set(result["card"]) == {"text", "blocks"}
    assert all(set(c) == KEYS for c in result["changes"])
    mine = [c for c in result["changes"] if c["provider"] == "lambda" and c["gpu"]["id"] == "h100-sxm-80gb" and c["gpu_count"] == 1]
    # The lambda 1× H100 SXM series is the cheapest region of gpu_1x_h100_sxm5 (and any other 1× H100 SXM instance).
    assert [c["kind"] for c in mine] == ["drop"]
    (c,) = mine
    assert Decimal(c["new_usd_per_hour"]) <= old * Decimal("0.8")
    assert c["change_pct"] < -5
    assert result["card"]["text"] and result["card"]["blocks"]
    from slack_sdk.models.blocks import Block

    assert all(Block.parse(b) is not None for b in result["card"]["blocks"])  # valid Block Kit


def test_preview_bad_input_is_one_line(loaded_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--since", "yesterday"], ["--gpus", "zz-unknown-9"], ["--threshold-pct", "abc"]):
        code, _ = run_cli(loaded_engine, tmp_path, monkeypatch, "digest", "preview", *argv)
        assert code == 1
        err = capsys.readouterr().err
        assert err.startswith("gpu-advisor: ") and "Traceback" not in err


def test_run_dry_run_claims_nothing(loaded_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from knowledge import digest_store as store
    from knowledge.digest_store import SubscriptionSettings

    settings = SubscriptionSettings("daily", 0, 0, "UTC", 0, Decimal(5), Decimal("0.05"), (), "en")
    store.upsert_subscription(loaded_engine, team_id="T1", channel_id="C1", settings=settings, user_id="U1",
                              now=datetime.now(UTC) - timedelta(days=1))
    code, out = run_cli(loaded_engine, tmp_path, monkeypatch, "digest", "run", "--dry-run", "--json")
    assert code == 0
    result = json.loads(out)
    assert set(result["outcomes"]) <= {"would_post", "would_skip_empty"}
    assert store.period_rows(loaded_engine) == []
