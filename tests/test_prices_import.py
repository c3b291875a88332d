"""Price imports: real SkyPilot snapshots, our CSV/JSON, one transaction, nothing silently dropped."""

import csv
import json
import statistics
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from sqlalchemy import func, select
from sqlmodel import Session

from knowledge import tables
from knowledge.prices import PriceImportError, import_prices
from knowledge.setup import BUNDLED_PRICES

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _count(engine, table, *where):
    with Session(engine) as s:
        return s.execute(select(func.count()).select_from(table).where(*where)).scalar_one()


def _accelerator_rows(path):
    with path.open(encoding="utf-8", newline="") as fh:
        return [r for r in csv.DictReader(fh) if (r.get("AcceleratorName") or "").strip()]


@pytest.mark.parametrize("provider", ["aws", "lambda", "runpod", "gcp"])
def test_every_accelerator_is_mapped_or_reported(engine, provider):
    from knowledge.load import load_catalog

    load_catalog(engine)
    path = BUNDLED_PRICES / f"{provider}.csv"
    report = import_prices(engine, path, fmt="skypilot", observed_at=T0)
    rows = _accelerator_rows(path)
    names = {r["AcceleratorName"] for r in rows}
    with Session(engine) as s:
        mapped = set(s.execute(select(tables.PriceObservation.instance_type).where(
            tables.PriceObservation.import_id == report.import_id)).scalars())
    assert report.rows_read == len(rows)
    unmapped_rows = sum(report.unmapped.values())
    assert unmapped_rows < len(rows)
    # Names that never produced an observation must be in the unmapped report.
    assert set(report.unmapped) <= names
    assert mapped, "some offers were imported"
    if provider == "aws":
        # AWS's Inferentia and Trainium are not GPUs: reported, not dropped silently.
        assert {"Inferentia2", "Trainium"} <= set(report.unmapped)


def test_marketplace_is_summarised_as_median(engine):
    from knowledge.load import load_catalog

    load_catalog(engine)
    path = BUNDLED_PRICES / "vast.csv"
    import_prices(engine, path, fmt="skypilot", observed_at=T0)
    h100 = [Decimal(r["Price"]) for r in _accelerator_rows(path)
            if r["AcceleratorName"] == "H100" and float(r["AcceleratorCount"]) == 1 and Decimal(r["Price"]) > 0]
    assert len(h100) >= 2
    with Session(engine) as s:
        offers = s.execute(select(tables.Offer).where(
            tables.Offer.provider_id == "vast", tables.Offer.gpu_count == 1, tables.Offer.tier == "on-demand",
            tables.Offer.gpu_id.like("h100%"))).scalars().all()
    assert len(offers) == 1, "one summary per GPU × count × tier, never single machines"
    assert offers[0].usd_per_hour == pytest.approx(statistics.median(h100), abs=Decimal("0.0001"))


def test_reimport_keeps_history_and_deactivates_vanished(engine, tmp_path):
    from knowledge.load import load_catalog

    load_catalog(engine)
    src = BUNDLED_PRICES / "lambda.csv"
    import_prices(engine, src, fmt="skypilot", observed_at=T0)
    offers = _count(engine, tables.Offer, tables.Offer.active == True)  # noqa: E712
    obs = _count(engine, tables.PriceObservation)
    # Drop the H100 rows: those offers vanished from the provider's catalog.
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [lines[0]] + [ln for ln in lines[1:] if ",H100," not in ln]
    assert len(kept) < len(lines)
    smaller = tmp_path / "lambda.csv"
    smaller.write_text("".join(kept), encoding="utf-8")
    report = import_prices(engine, smaller, fmt="skypilot", observed_at=datetime(2026, 11, 2, tzinfo=UTC))
    assert report.offers_deactivated > 0
    assert _count(engine, tables.Offer, tables.Offer.active == True) == offers - report.offers_deactivated  # noqa: E712
    assert _count(engine, tables.PriceObservation) == obs + report.observations


def test_bad_row_changes_nothing_and_is_named(engine, tmp_path):
    from knowledge.load import load_catalog

    load_catalog(engine)
    import_prices(engine, BUNDLED_PRICES / "lambda.csv", fmt="skypilot", observed_at=T0)
    before = (_count(engine, tables.Offer), _count(engine, tables.PriceObservation), _count(engine, tables.ImportRun))
    lines = (BUNDLED_PRICES / "runpod.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    bad_line = len(lines) // 2
    header = lines[0].rstrip("\r\n").split(",")
    cells = next(csv.reader([lines[bad_line - 1]]))
    cells[header.index("Price")] = "cheap"
    out = tmp_path / "runpod.csv"
    out.write_text("".join(lines[: bad_line - 1]) + ",".join(cells) + "\n" + "".join(lines[bad_line:]), encoding="utf-8")
    with pytest.raises(PriceImportError, match=rf"runpod\.csv:{bad_line}: price 'cheap' is not a number"):
        import_prices(engine, out, fmt="skypilot", observed_at=T0)
    after = (_count(engine, tables.Offer), _count(engine, tables.PriceObservation), _count(engine, tables.ImportRun))
    assert after == before


def test_own_csv_and_json_formats(engine, tmp_path):
    from knowledge.load import load_catalog

    load_catalog(engine)
    (tmp_path / "deal.csv").write_text(
        "provider,instance_type,gpu,gpu_count,region,tier,usd_per_hour\n"
        "lambda,negotiated-8x,H100 SXM,8,us-east,reserved,14.40\n"
        "runpod,,RTX 4090,1,eu,spot,0.29\n", encoding="utf-8")
    report = import_prices(engine, tmp_path / "deal.csv", fmt="csv", observed_at=T0)
    assert report.offers_written == 2
    (tmp_path / "deal.json").write_text(json.dumps({"offers": [
        {"provider": "aws", "gpu": "p5.48xlarge", "usd_per_hour": "55.04", "gpu_count": 8}]}), encoding="utf-8")
    assert import_prices(engine, tmp_path / "deal.json", fmt="json", observed_at=T0).offers_written == 1
    with Session(engine) as s:
        row = s.execute(select(tables.Offer).where(tables.Offer.instance_type == "negotiated-8x")).scalar_one()
    assert (row.gpu_id, row.gpu_count, row.tier, row.usd_per_hour) == ("h100-sxm-80gb", 8, "reserved", Decimal("14.40"))


@pytest.mark.parametrize(
    "body, message",
    [
        ("provider,gpu,usd_per_hour\nlambda,Voodoo 5,1.0\n", r"deal\.csv:2: gpu 'Voodoo 5' is none"),
        ("provider,gpu,usd_per_hour\nlambda,A100,1.0\n", r"deal\.csv:2: gpu 'A100' is ambiguous"),
        ("provider,gpu,usd_per_hour,tier\nlambda,H100 SXM,1.0,cheap\n", r"tier 'cheap'"),
        ("provider,gpu,usd_per_hour\nnowhere,H100 SXM,1.0\n", r"provider 'nowhere' is not in the catalog"),
        ("provider,gpu,usd_per_hour\nlambda,H100 SXM,-3\n", r"negative"),
    ],
)
def test_own_format_errors(engine, tmp_path, body, message):
    from knowledge.load import load_catalog

    load_catalog(engine)
    (tmp_path / "deal.csv").write_text(body, encoding="utf-8")
    with pytest.raises(PriceImportError, match=message):
        import_prices(engine, tmp_path / "deal.csv", fmt="csv", observed_at=T0)
    assert _count(engine, tables.Offer) == 0
