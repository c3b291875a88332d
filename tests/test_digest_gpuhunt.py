"""`prices refresh` through gpuhunt's own loader on a recorded offline catalog; failures keep the last data.

The recorded catalogs (tests/cases/gpuhunt_lambdalabs.csv, gpuhunt_runpod.csv) are gpuhunt v2
catalog CSVs (gpuhunt._internal.storage.CATALOG_V2_FIELDS) written from the real SkyPilot v7 rows
of lambda.csv (one row per instance type) and runpod.csv (one row per instance type, with its spot
price as a second item). They are served the way gpuhunt publishes them:
`{base}/{provider}/version` and `{base}/{provider}/{version}/catalog.zip` (a file:// base here).
"""

from __future__ import annotations

import zipfile
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from sqlmodel import Session

import knowledge.prices
from knowledge import tables
from knowledge.gpuhunt_source import refresh
from knowledge.history import prices_at, source_ages

CASES = Path(__file__).parent / "cases"
NOW = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1)  # after the bundled imports (observed at load time)


def publish(base: Path, provider: str, version: str) -> None:
    (base / provider / version).mkdir(parents=True, exist_ok=True)
    (base / provider / "version").write_text(version + "\n")
    with zipfile.ZipFile(base / provider / version / "catalog.zip", "w") as z:
        z.write(CASES / f"gpuhunt_{provider}.csv", f"{provider}.csv")


def counts(engine: Engine) -> tuple[int, int, int]:
    with Session(engine) as s:
        return tuple(s.execute(select(func.count()).select_from(t)).scalar_one()  # type: ignore[return-value]
                     for t in (tables.ImportRun, tables.PriceObservation, tables.Offer))


def test_refresh_imports_recorded_catalog_with_source_version_and_time(loaded_engine: Engine, tmp_path: Path) -> None:
    publish(tmp_path, "lambdalabs", "20261101-rec")
    publish(tmp_path, "runpod", "20261101-rec")
    results = {r.provider: r for r in refresh(loaded_engine, catalog_url=tmp_path.as_uri(),
                                              providers=["lambdalabs", "runpod", "aws"], now=NOW)}
    assert results["lambdalabs"].ok and results["runpod"].ok, results
    assert not results["aws"].ok and results["aws"].error  # not in the recorded tree: a failed source
    with Session(loaded_engine) as s:
        obs = s.execute(select(tables.PriceObservation).where(tables.PriceObservation.source == "gpuhunt")).scalars().all()
    assert {o.source_version for o in obs} == {"gpuhunt 0.1.34; catalog 20261101-rec"}
    # Observed at the source's date: gpuhunt versions start with the UTC day they were collected (YYYYMMDD-RUN).
    assert {o.observed_at.replace(tzinfo=UTC) for o in obs} == {datetime(2026, 11, 1, tzinfo=UTC)}
    # lambda.csv lists gpu_1x_h100_sxm5 at $3.29/h (europe-central-1, its first row): the same price arrives.
    h100 = [o for o in obs if o.instance_type == "gpu_1x_h100_sxm5"]
    assert [(o.gpu_id, Decimal(o.usd_per_hour), o.tier) for o in h100] == [("h100-sxm-80gb", Decimal("3.29"), "on-demand")]
    # runpod's 1x_A100-80GB_SECURE: $1.64 on-demand and $1.19 spot in runpod.csv (CA row).
    a100 = sorted((o.tier, Decimal(o.usd_per_hour)) for o in obs if o.instance_type == "1x_A100-80GB_SECURE")
    assert a100 == [("on-demand", Decimal("1.64")), ("spot", Decimal("1.19"))]
    # aws failed: its bundled SkyPilot prices stay in force, flagged as failing with their age.
    assert any(k.provider_id == "aws" for k in prices_at(loaded_engine, NOW))
    aws = next(a for a in source_ages(loaded_engine, now=NOW) if a.provider_id == "aws")
    assert aws.failing and aws.error and aws.age_hours > 0


def test_failed_refresh_keeps_last_good_data(loaded_engine: Engine, tmp_path: Path) -> None:
    publish(tmp_path, "lambdalabs", "v1")
    (first,) = refresh(loaded_engine, catalog_url=tmp_path.as_uri(), providers=["lambdalabs"], now=NOW)
    assert first.ok
    before = prices_at(loaded_engine, NOW + timedelta(days=2))
    (tmp_path / "lambdalabs" / "v1" / "catalog.zip").write_bytes(b"not a zip")  # the source breaks
    (second,) = refresh(loaded_engine, catalog_url=tmp_path.as_uri(), providers=["lambdalabs"], now=NOW + timedelta(days=2))
    assert not second.ok
    after = prices_at(loaded_engine, NOW + timedelta(days=2))
    lam = {k: v.usd_per_hour for k, v in before.items() if k.provider_id == "lambda"}
    assert lam and lam == {k: v.usd_per_hour for k, v in after.items() if k.provider_id == "lambda"}
    age = next(a for a in source_ages(loaded_engine, now=NOW + timedelta(days=2)) if a.provider_id == "lambda")
    assert (age.failing, age.age_hours) == (True, 48.0)


def test_import_failing_halfway_leaves_previous_data_intact(loaded_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    publish(tmp_path, "runpod", "v2")
    before_counts = counts(loaded_engine)
    before = prices_at(loaded_engine, NOW)

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full while writing offers")  # after the run and observations were written

    monkeypatch.setattr(knowledge.prices, "_upsert_offers", crash)
    (res,) = refresh(loaded_engine, catalog_url=tmp_path.as_uri(), providers=["runpod"], now=NOW)
    assert not res.ok and "disk full" in (res.error or "")
    assert counts(loaded_engine) == before_counts
    assert prices_at(loaded_engine, NOW) == before
    assert any(k.provider_id == "runpod" and k.tier == "spot" for k in before)  # the bundled runpod data stays
