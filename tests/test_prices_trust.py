"""Issue 18's done-when: true dates, whole-machine prices, market kinds, dated imports compared, charts posted.

Expected values come from the data files (snapshots.csv, gcp.csv, mithril.csv, lambda.csv) or hand arithmetic.
"""

from __future__ import annotations

import csv
import json
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlmodel import Session
from test_digest_cli import run_cli  # the CLI run with this engine, its output captured

from knowledge import tables
from knowledge.prices import import_prices
from knowledge.setup import BUNDLED_PRICES

SNAPSHOTS = {r["provider"]: r for r in csv.DictReader((BUNDLED_PRICES / "snapshots.csv").open(encoding="utf-8"))}


def offers(engine: Engine, provider: str) -> list[tables.Offer]:
    with Session(engine) as s:
        return list(s.execute(select(tables.Offer).where(tables.Offer.provider_id == provider)).scalars())


def test_bundled_offers_are_observed_at_their_source_date(loaded_engine: Engine) -> None:
    for provider in ("lambda", "gcp", "mithril", "vast"):
        expected = date.fromisoformat(SNAPSHOTS[provider]["source_date"])
        assert {o.observed_at.date() for o in offers(loaded_engine, provider)} == {expected}, provider
    with Session(loaded_engine) as s:
        runs = s.execute(select(tables.ImportRun)).scalars().all()
    assert runs and all(r.bundled for r in runs)
    assert all(r.source_version.startswith("skypilot-catalog ") for r in runs)


def test_fresh_install_card_names_the_snapshot_date_and_says_it_is_old(
        loaded_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = run_cli(loaded_engine, tmp_path, monkeypatch, "ask", "price H100", "--json")
    assert code == 0
    card = json.dumps(json.loads(out)["blocks"], ensure_ascii=False)
    # snapshots.csv dates every bundled file 2025-11-12; today is past 14 days after it.
    assert "Nov 12, 2025" in card
    assert "older than 14 days" in card and "gpu-advisor prices refresh" in card
    monkeypatch.setenv("PRICE_STALE_DAYS", "3650")  # the threshold is a setting
    code, out = run_cli(loaded_engine, tmp_path, monkeypatch, "ask", "price H100", "--json")
    card = json.dumps(json.loads(out)["blocks"], ensure_ascii=False)
    assert "Prices as of Nov 12, 2025" in card and "older than" not in card


def _gcp_rows() -> list[dict[str, str]]:
    return list(csv.DictReader((BUNDLED_PRICES / "gcp.csv").open(encoding="utf-8", newline="")))


def test_gcp_prices_are_whole_machines(loaded_engine: Engine) -> None:
    rows = _gcp_rows()
    # By hand from gcp.csv: us-central1-a, 8x H100 accelerator + its host a3-highgpu-8g.
    acc = next(r for r in rows if r["AcceleratorName"] == "H100" and r["AcceleratorCount"] == "8"
               and r["AvailabilityZone"] == "us-central1-a")
    host = next(r for r in rows if r["InstanceType"] == "a3-highgpu-8g" and r["AvailabilityZone"] == "us-central1-a")
    whole = Decimal(acc["Price"]) + Decimal(host["Price"])
    # And an L4 by hand: us-central1-a, one L4 + g2-standard-4.
    l4 = next(r for r in rows if r["AcceleratorName"] == "L4" and r["AcceleratorCount"] == "1"
              and r["AvailabilityZone"] == "us-central1-a")
    g2 = next(r for r in rows if r["InstanceType"] == "g2-standard-4" and r["AvailabilityZone"] == "us-central1-a")
    gcp = offers(loaded_engine, "gcp")
    assert [Decimal(o.usd_per_hour) for o in gcp if o.instance_type == "g2-standard-4 + 1x L4"
            and o.region == "us-central1" and o.tier == "on-demand"] == [Decimal(l4["Price"]) + Decimal(g2["Price"])]
    assert gcp and all(" + " in o.instance_type for o in gcp), "every GCP offer names its host VM"
    h100 = [o for o in gcp if o.instance_type == "a3-highgpu-8g + 8x H100" and o.region == "us-central1"
            and o.tier == "on-demand"]
    # The offer is the cheapest zone of the region; every us-central1 zone lists the same prices in this snapshot.
    assert [Decimal(o.usd_per_hour) for o in h100] == [whole]
    assert Decimal(o.usd_per_hour if (o := h100[0]) else 0) > Decimal(acc["Price"])


def test_gcp_rows_without_a_host_are_dropped_and_counted(engine: Engine) -> None:
    from knowledge.load import load_catalog

    load_catalog(engine)
    report = import_prices(engine, BUNDLED_PRICES / "gcp.csv", observed_at=datetime(2025, 11, 12, tzinfo=UTC))
    rows = _gcp_rows()
    hosts = {r["InstanceType"] for r in rows if r["InstanceType"]}
    # T4/V100/P100/P4 (n1) and B200 (a4) rows have no host VM rows in this copy of the catalog.
    assert not any(h.startswith(("n1-", "a4-")) for h in hosts)
    # GCP's machine families (https://cloud.google.com/compute/docs/gpus): A100 on A2, H100/H200 on A3, L4 on G2
    # (one L4: the smallest G2, g2-standard-4, the cheapest of them in every zone of gcp.csv).
    family = {("A100", "16"): "a2-megagpu-16g", ("H100-MEGA", "8"): "a3-megagpu-8g", ("H200", "8"): "a3-ultragpu-8g",
              ("L4", "1"): "g2-standard-4", ("L4", "2"): "g2-standard-24", ("L4", "4"): "g2-standard-48",
              ("L4", "8"): "g2-standard-96"}
    for n in ("1", "2", "4", "8"):
        family |= {("A100", n): f"a2-highgpu-{n}g", ("A100-80GB", n): f"a2-ultragpu-{n}g", ("H100", n): f"a3-highgpu-{n}g"}
    zones = {(r["InstanceType"], r["AvailabilityZone"]) for r in rows if r["InstanceType"]}
    gpu_rows = [r for r in rows if r["AcceleratorName"] and not r["AcceleratorName"].startswith("tpu")]
    hostless = [r for r in gpu_rows
                if (family.get((r["AcceleratorName"], r["AcceleratorCount"])), r["AvailabilityZone"]) not in zones]
    assert report.skipped.get("no_host_vm") == len(hostless)
    assert report.rows_kept > 0


def test_auction_prices_are_never_on_demand(loaded_engine: Engine) -> None:
    mithril = offers(loaded_engine, "mithril")
    rows = list(csv.DictReader((BUNDLED_PRICES / "mithril.csv").open(encoding="utf-8", newline="")))
    assert mithril and {(o.tier, o.market) for o in mithril} == {("spot", "auction")}
    # mithril.csv: h100-80gb.sxm.8x in us-central1-b at $8.00 per 8 GPUs = $1.00 per GPU-hour.
    row = next(r for r in rows if r["InstanceType"] == "h100-80gb.sxm.8x" and r["Region"] == "us-central1-b")
    offer = next(o for o in mithril if o.instance_type == "h100-80gb.sxm.8x" and o.region == "us-central1-b")
    assert Decimal(offer.usd_per_hour) / offer.gpu_count == Decimal(row["Price"]) / 8 == Decimal("1")
    with Session(loaded_engine) as s:
        on_demand_kinds = set(s.execute(select(tables.Offer.market).where(tables.Offer.tier == "on-demand")).scalars())
    assert on_demand_kinds <= {"on-demand", "marketplace"}


def test_marketplaces_are_labelled(loaded_engine: Engine) -> None:
    for provider in ("vast", "simplepod", "primeintellect", "shadeform"):
        got = {o.market for o in offers(loaded_engine, provider)}
        assert got == {"marketplace"}, provider


def _changed_lambda(tmp_path: Path) -> tuple[Path, Path, dict[str, Decimal]]:
    """Two dated lambda files: the bundled one, and one with gpu_1x_a10 −20 %, gpu_1x_a6000 +10 %, and every
    gpu_8x_v100 row gone. Returns both paths and the old per-instance prices (one price in every region)."""
    src = BUNDLED_PRICES / "lambda.csv"
    rows = list(csv.DictReader(src.open(encoding="utf-8", newline="")))
    old = {}
    for name in ("gpu_1x_a10", "gpu_1x_a6000", "gpu_8x_v100"):
        prices = {Decimal(r["Price"]) for r in rows if r["InstanceType"] == name}
        assert len(prices) == 1, (name, prices)
        old[name] = prices.pop()
    changed = []
    for r in rows:
        if r["InstanceType"] == "gpu_8x_v100":
            continue
        r = dict(r)
        if r["InstanceType"] == "gpu_1x_a10":
            r["Price"] = str(old["gpu_1x_a10"] * Decimal("0.8"))
        if r["InstanceType"] == "gpu_1x_a6000":
            r["Price"] = str(old["gpu_1x_a6000"] * Decimal("1.1"))
        changed.append(r)
    first, second = tmp_path / "a" / "lambda.csv", tmp_path / "b" / "lambda.csv"
    for path, data in ((first, rows), (second, changed)):
        path.parent.mkdir()
        with path.open("w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(data)
    return first, second, old


@pytest.mark.parametrize("year", [2026, 2025], ids=["after-bundled", "before-bundled"])
def test_digest_of_two_dated_imports_reports_exactly_their_changes(
        loaded_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, year: int) -> None:
    first, second, old = _changed_lambda(tmp_path)
    # 2025-06: before the bundled snapshot's date; the user's own files still are what is compared.
    t1 = datetime(year, 6 if year == 2025 else 11, 1, tzinfo=UTC)
    t2 = t1 + timedelta(days=7)
    for path, when in ((first, t1), (second, t2)):
        code, out = run_cli(loaded_engine, tmp_path, monkeypatch, "prices", "import", str(path), "--observed-at",
                            when.isoformat(), "--json")
        assert code == 0, out
    code, out = run_cli(loaded_engine, tmp_path, monkeypatch, "digest", "preview", "--json")
    assert code == 0
    changes = json.loads(out)["changes"]
    got = sorted((c["kind"], c["gpu"]["id"], c["gpu_count"], c["tier"]) for c in changes)
    # Each of these instances is the only one of its GPU × count on lambda, so its series is exactly it.
    assert got == sorted([("drop", "a10", 1, "on-demand"), ("rise", "rtx-a6000", 1, "on-demand"),
                          ("gone", "v100-16gb", 8, "on-demand")])
    by_kind = {c["kind"]: c for c in changes}
    assert Decimal(by_kind["drop"]["new_usd_per_hour"]) == old["gpu_1x_a10"] * Decimal("0.8")
    assert by_kind["drop"]["change_pct"] == -20.0
    assert Decimal(by_kind["rise"]["new_usd_per_hour"]) == old["gpu_1x_a6000"] * Decimal("1.1")
    assert by_kind["rise"]["change_pct"] == 10.0
    assert Decimal(by_kind["gone"]["old_usd_per_hour"]) == old["gpu_8x_v100"]
    assert all(c["provider"] == "lambda" and c["market"] == "on-demand" for c in changes)


def test_a_bundled_snapshot_never_makes_a_change_on_its_own(
        loaded_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from knowledge.setup import import_bundled_prices

    import_bundled_prices(loaded_engine, only_missing=False)  # a release re-imports its baseline
    code, out = run_cli(loaded_engine, tmp_path, monkeypatch, "digest", "preview", "--since", "2025-01-01T00:00:00Z",
                        "--json")
    assert code == 0 and json.loads(out)["changes"] == []


def test_an_older_import_is_history_only(loaded_engine: Engine, tmp_path: Path) -> None:
    first, second, old = _changed_lambda(tmp_path)
    import_prices(loaded_engine, second, observed_at=datetime(2026, 11, 8, tzinfo=UTC))
    report = import_prices(loaded_engine, first, observed_at=datetime(2026, 11, 1, tzinfo=UTC))
    assert not report.current and report.offers_written == 0 and report.observations > 0
    a10 = [o for o in offers(loaded_engine, "lambda") if o.instance_type == "gpu_1x_a10" and o.active]
    assert {Decimal(o.usd_per_hour) for o in a10} == {old["gpu_1x_a10"] * Decimal("0.8")}


def test_a_new_release_reimports_its_baseline_even_when_offers_are_renamed(loaded_engine: Engine) -> None:
    """An older release stored GCP accelerator-only offers; the new snapshot names host VMs instead, so every
    old GCP offer is switched off by the re-import: meant for a release's baseline, never refused."""
    import knowledge.setup as setup

    with Session(loaded_engine) as s:
        gcp_runs = [r.id for r in s.execute(select(tables.ImportRun).where(tables.ImportRun.provider_id == "gcp"))
                    .scalars()]
        for o in s.execute(select(tables.Offer).where(tables.Offer.provider_id == "gcp")).scalars():
            o.instance_type = f"{o.gpu_count}x {o.gpu_id} (accelerator only) {o.id}"  # what release r1 stored
        s.commit()
    old = setup.BUNDLED_IMPORT_REVISION
    try:
        setup.BUNDLED_IMPORT_REVISION = "r-next"
        reports = {r.provider_id: r for r in setup.import_bundled_prices(loaded_engine)}
    finally:
        setup.BUNDLED_IMPORT_REVISION = old
    assert gcp_runs and reports["gcp"].offers_deactivated == reports["gcp"].offers_written
    assert all(" + " in o.instance_type for o in offers(loaded_engine, "gcp") if o.active)
