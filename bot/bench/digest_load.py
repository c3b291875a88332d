"""A digest over 100,000 price observations: 30 days of daily imports per provider, then one digest."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, TypedDict

from sqlalchemy import Engine, delete, func, insert, select

from knowledge import price_series, tables
from knowledge.db import table_of
from knowledge.history import marketplace_ids
from rules.market.changes import PricePoint

if TYPE_CHECKING:
    from bot.bench.result import DigestTiming
    from knowledge.snapshot import Snapshot

OBS = table_of(tables.PriceObservation)
RUNS = table_of(tables.ImportRun)
SERIES = table_of(tables.PriceSeries)
START = datetime(2025, 5, 1, 6, 0, tzinfo=UTC)
_CENT = Decimal("0.000001")


def day_factor(day: int, row: int) -> Decimal:
    """A price drift per day and row: most rows move under 5 %, every 13th row moves 6-12 %."""
    step = (day * 3 + row) % 9 - 4  # -4..4 %
    if row % 13 == 0:
        step = step * 2 + (6 if step >= 0 else -6)
    return Decimal(100 + step) / 100


class ObservationRow(TypedDict):
    """An imported observation's columns that the filled history copies."""

    provider_id: str
    instance_type: str
    gpu_id: str
    gpu_count: int
    region: str
    tier: str
    usd_per_hour: Decimal


def real_rows(engine: Engine) -> dict[str, list[ObservationRow]]:
    """The observations already imported (the bundled prices), per provider, in a stable order."""
    cols = (OBS.c.provider_id, OBS.c.instance_type, OBS.c.gpu_id, OBS.c.gpu_count, OBS.c.region, OBS.c.tier,
            OBS.c.usd_per_hour)
    with engine.connect() as conn:
        rows = conn.execute(select(*cols).order_by(OBS.c.provider_id, OBS.c.id)).mappings().all()
    per: dict[str, list[ObservationRow]] = {}
    for r in rows:
        per.setdefault(r["provider_id"], []).append(ObservationRow(
            provider_id=r["provider_id"], instance_type=r["instance_type"], gpu_id=r["gpu_id"],
            gpu_count=r["gpu_count"], region=r["region"], tier=r["tier"], usd_per_hour=r["usd_per_hour"]))
    return per


def widened(per_provider: dict[str, list[ObservationRow]], copies: int) -> dict[str, list[ObservationRow]]:
    """Each provider's rows `copies` times over, copy c in region "<region>~c": a catalog that many times larger
    (a live multi-cloud feed), with every offer distinct, as an import holds them."""
    return {provider: [ObservationRow(**{**r, "region": r["region"] if c == 0 else f"{r['region']}~{c}"})
                       for c in range(copies) for r in rows]
            for provider, rows in per_provider.items()}


def fill(engine: Engine, total: int = 100_000, per_provider: dict[str, list[ObservationRow]] | None = None) -> int:
    """Replace the price history with daily imports of the real rows until `total` observations exist.

    `per_provider`: the real rows (`real_rows` of the database as imported); read from `engine` when not given,
    which is right only while it holds the imported prices, not a history this function filled.
    """
    per_provider = per_provider if per_provider is not None else real_rows(engine)
    markets = marketplace_ids(engine)
    with engine.begin() as conn:
        conn.execute(delete(SERIES))
        conn.execute(delete(OBS))
        conn.execute(delete(RUNS))
    written, day = 0, 0
    while written < total:
        at = START + timedelta(days=day)
        with engine.begin() as conn:
            for provider, rows in per_provider.items():
                rows = rows[: total - written]
                if not rows:
                    break
                run_key = conn.execute(insert(RUNS).values(
                    source="bench", source_version=f"day{day}", provider_id=provider, file_name=f"{provider}.csv",
                    observed_at=at, imported_at=at, rows_read=len(rows), offers_written=len(rows))).inserted_primary_key
                if run_key is None:
                    raise RuntimeError("the import run was inserted without a primary key")
                run_id = run_key[0]
                observed = [{**r, "import_id": run_id, "observed_at": at, "source": "bench",
                             "source_version": f"day{day}",
                             "usd_per_hour": (r["usd_per_hour"] * day_factor(day, i)).quantize(_CENT)}
                            for i, r in enumerate(rows)]
                conn.execute(insert(OBS), observed)
                # Its series, as the importer (knowledge.prices.write_rows) stores them with every import.
                price_series.store(conn, run_id, price_series.of_points(
                    (PricePoint(o["gpu_id"], o["provider_id"], o["instance_type"], o["gpu_count"], o["region"],
                                o["tier"], o["usd_per_hour"], at) for o in observed), markets))
                written += len(rows)
        day += 1
    return written


def observation_count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(OBS)).scalar_one())


def time_digest(engine: Engine, snapshot: Snapshot, *, repeat: int = 3) -> DigestTiming:
    """compute_digest (24 h back from the newest import) + render_digest; best and median of `repeat`."""
    from bot.digest.card import render_digest
    from knowledge.history import compute_digest, list_imports
    from rules.market.changes import Thresholds

    newest = max(i.observed_at for i in list_imports(engine))
    times: list[float] = []
    changes = 0
    for _ in range(repeat):
        started = time.perf_counter()
        digest = compute_digest(engine, since=newest - timedelta(hours=24), thresholds=Thresholds(),
                                gpu_order=tuple(snapshot.gpus))
        render_digest(digest, gpus=snapshot.gpus, providers=snapshot.providers, lang="en")
        times.append(time.perf_counter() - started)
        changes = digest.change_count
    times.sort()
    return {"median_s": round(times[len(times) // 2], 3), "best_s": round(times[0], 3),
            "observations": observation_count(engine), "gpus_reported": len(digest.gpus), "changes": changes}
