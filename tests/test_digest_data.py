"""A simulated month of prices built from the real SkyPilot snapshots, written as imports (+ its own checks).

Base prices are the real rows of lambda.csv and vast.csv (skypilot-org/skypilot-catalog,
catalogs/v7, see /work/shared/data/prices/skypilot-v7/SOURCE.md). On top of them a script
of known events is played day by day, so each test knows exactly what changed and when.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from sqlalchemy import Engine, func, insert, select
from sqlmodel import Session

from knowledge import tables

SHARED = Path("/work/shared/data/prices/skypilot-v7")
BUNDLED = Path(__file__).resolve().parents[1] / "knowledge" / "data" / "prices" / "skypilot-v7"
PRICES_DIR = BUNDLED if (BUNDLED / "lambda.csv").is_file() else SHARED
GPUS_CSV = Path(__file__).resolve().parents[1] / "knowledge" / "data" / "gpus.csv"
MONTH_START = datetime(2025, 5, 1, 6, 0, tzinfo=UTC)  # one import per provider per day at 06:00 UTC

# SkyPilot accelerator names of the rows we use → catalog GPU ids (lambda's A100 is the 40 GB SXM part;
# its GpuInfo says SizeInMiB 40960).
SKY_TO_GPU = {"H100": "h100-sxm-80gb", "A100": "a100-sxm-40gb", "A100-80GB": "a100-sxm-80gb", "A10": "a10",
              "GH200": "gh200", "A6000": "rtx-a6000", "RTX4090": "rtx-4090", "RTX3090": "rtx-3090"}
PROVIDERS = {"lambda": "cloud", "vast": "marketplace", "aws": "cloud"}


@dataclass(frozen=True, slots=True)
class Row:
    provider_id: str
    instance_type: str
    gpu_id: str
    gpu_count: int
    region: str
    tier: str
    usd_per_hour: Decimal


def real_rows(provider: str) -> list[Row]:
    """The real on-demand rows of one SkyPilot file whose accelerator we map (vast: only unambiguous names)."""
    out = []
    with (PRICES_DIR / f"{provider}.csv").open(encoding="utf-8", newline="") as fh:
        for r in csv.DictReader(fh):
            gpu = SKY_TO_GPU.get(r["AcceleratorName"])
            if provider == "vast" and r["AcceleratorName"] in ("A100", "A10"):
                continue  # vast's A100 memory size varies by listing; not needed here
            if gpu and r["Price"] and Decimal(r["Price"]) > 0:
                out.append(Row(provider, r["InstanceType"], gpu, int(float(r["AcceleratorCount"])),
                               r["Region"], "on-demand", Decimal(r["Price"])))
    return out


def seed_catalog(engine: Engine) -> None:
    """The GPUs and providers the month needs (GPU rows straight from knowledge/data/gpus.csv)."""
    wanted = set(SKY_TO_GPU.values())
    with GPUS_CSV.open(encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["id"] in wanted]
    with Session(engine) as s, s.begin():
        if s.execute(select(func.count()).select_from(tables.Gpu)).scalar_one():
            return
        for r in rows:
            values = {k: (None if v == "" else v) for k, v in r.items()}
            s.add(tables.Gpu.model_validate(tables.GpuBase.model_validate(values).model_dump()))
        for pid, kind in PROVIDERS.items():
            s.add(tables.Provider(id=pid, name=pid.title(), kind=kind, billing_increment_s=1,
                                  multi_gpu_interconnect="NVLink", source="https://example.org/test-seed"))


def write_import(engine: Engine, provider: str, rows: Iterable[Row], at: datetime, source: str = "skypilot") -> int:
    """One import run with its observations, as the price importer stores them."""
    rows = list(rows)
    with Session(engine) as s, s.begin():
        run = tables.ImportRun(source=source, source_version="test-month", provider_id=provider,
                               file_name=f"{provider}.csv", observed_at=at, imported_at=at,
                               rows_read=len(rows), offers_written=len(rows), unmapped_json=json.dumps({}))
        s.add(run)
        s.flush()
        if rows:
            s.execute(insert(tables.PriceObservation), [
                {"import_id": run.id, "provider_id": r.provider_id, "instance_type": r.instance_type,
                 "gpu_id": r.gpu_id, "gpu_count": r.gpu_count, "region": r.region, "tier": r.tier,
                 "usd_per_hour": r.usd_per_hour, "observed_at": at, "source": source, "source_version": "test-month"}
                for r in rows
            ])
        assert run.id is not None
        return run.id


def scale(rows: Iterable[Row], gpu_id: str, factor: str, count: int | None = None) -> list[Row]:
    f = Decimal(factor)
    return [Row(r.provider_id, r.instance_type, r.gpu_id, r.gpu_count, r.region, r.tier,
                (r.usd_per_hour * f).quantize(Decimal("0.0001")))
            if r.gpu_id == gpu_id and (count is None or r.gpu_count == count) else r for r in rows]


def lambda_day(day: int, base: list[Row]) -> list[Row]:
    """The scripted month on lambda (day 0 = the real snapshot):
    - H100 ×1 drops 10 % on day 5 and stays there;
    - A10 flaps +20 % on odd days from day 10 to day 19;
    - GH200 vanishes on day 20;
    - A100 ×8 creeps +1 % a day from day 1 (compounded).
    """
    rows = list(base)
    if day >= 5:
        rows = scale(rows, "h100-sxm-80gb", "0.90", count=1)
    if 10 <= day <= 19 and day % 2 == 1:
        rows = scale(rows, "a10", "1.20")
    if day >= 20:
        rows = [r for r in rows if r.gpu_id != "gh200"]
    if day >= 1:
        rows = scale(rows, "a100-sxm-40gb", str(Decimal("1.01") ** day), count=8)
    return rows


def play_month(engine: Engine, days: int = 30) -> list[datetime]:
    """Imports lambda and vast once a day for `days` days; returns the import times."""
    seed_catalog(engine)
    base_lambda, base_vast = real_rows("lambda"), real_rows("vast")
    times = []
    for day in range(days):
        at = MONTH_START + timedelta(days=day)
        write_import(engine, "lambda", lambda_day(day, base_lambda), at)
        write_import(engine, "vast", base_vast, at)
        times.append(at)
    return times


def test_real_rows_are_the_published_prices() -> None:
    """Spot-check against the source file by eye: lambda lists gpu_1x_h100_sxm5 at $3.29 (SkyPilot v7)."""
    rows = {(r.instance_type, r.region): r.usd_per_hour for r in real_rows("lambda")}
    h100 = {p for (inst, _), p in rows.items() if inst == "gpu_1x_h100_sxm5"}
    assert h100, "lambda.csv has gpu_1x_h100_sxm5 rows"
    raw = {r["Price"] for r in csv.DictReader((PRICES_DIR / "lambda.csv").open()) if r["InstanceType"] == "gpu_1x_h100_sxm5"}
    assert h100 == {Decimal(p) for p in raw}


def test_script_applies_the_events() -> None:
    base = real_rows("lambda")
    day4, day5 = lambda_day(4, base), lambda_day(5, base)
    h4 = min(r.usd_per_hour for r in day4 if r.gpu_id == "h100-sxm-80gb" and r.gpu_count == 1)
    h5 = min(r.usd_per_hour for r in day5 if r.gpu_id == "h100-sxm-80gb" and r.gpu_count == 1)
    assert h5 == (h4 * Decimal("0.9")).quantize(Decimal("0.0001"))
    assert not [r for r in lambda_day(20, base) if r.gpu_id == "gh200"]
