"""Prepare a database for use: schema at head, catalog loaded, bundled prices imported once."""

from __future__ import annotations

import csv
import logging
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, func, select
from sqlmodel import col

from knowledge import tables
from knowledge.db import make_engine, schema_is_current, upgrade_schema

if TYPE_CHECKING:  # loading and importing run only on an empty database: imported there
    from knowledge.load import LoadReport
    from knowledge.prices import ImportReport

log = logging.getLogger(__name__)
BUNDLED_PRICES = Path(__file__).parent / "data" / "prices" / "skypilot-v7"


@dataclass(slots=True)
class SetupReport:
    catalog: LoadReport | None = None
    imports: list[ImportReport] = field(default_factory=list)


SNAPSHOTS = BUNDLED_PRICES / "snapshots.csv"
# Bumped when the import of the same snapshot gives different rows (0005: market kinds, GCP host VMs), so an
# upgraded database re-imports its bundled baseline once.
BUNDLED_IMPORT_REVISION = "r3"


@dataclass(frozen=True, slots=True)
class BundledSnapshot:
    """One bundled catalog file and its source's own date (snapshots.csv, explained in SOURCE.md)."""

    path: Path
    provider_id: str
    commit: str
    source_date: date
    date_basis: str

    @property
    def observed_at(self) -> datetime:
        return datetime.combine(self.source_date, time(0, 0), tzinfo=UTC)

    @property
    def source_version(self) -> str:
        return f"skypilot-catalog {self.commit[:12]}; bundled {BUNDLED_IMPORT_REVISION}"


def bundled_snapshots() -> list[BundledSnapshot]:
    """The bundled snapshots with their source dates; a file without a dated row stops the import, named."""
    with SNAPSHOTS.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        rows = {r["file"]: (reader.line_num, r) for r in reader}
    out = []
    for path in sorted(BUNDLED_PRICES.glob("*.csv")):
        if path.name == SNAPSHOTS.name:
            continue
        if path.name not in rows:
            raise ValueError(f"{SNAPSHOTS.name}: no source date for {path.name}; add its commit and date")
        line, r = rows[path.name]
        try:
            when = date.fromisoformat(r["source_date"])
        except ValueError:
            raise ValueError(f"{SNAPSHOTS.name}:{line}: source_date {r['source_date']!r} is not YYYY-MM-DD") from None
        out.append(BundledSnapshot(path, r["provider"], r["commit"], when, r["date_basis"]))
    return out


def bundled_price_files() -> list[Path]:
    return [s.path for s in bundled_snapshots()]


def import_bundled_prices(engine: Engine, *, only_missing: bool = True) -> list[ImportReport]:
    """Import each bundled snapshot not imported yet in this version, observed at its source's date, as a baseline.

    A bundled import never replaces a user's or a live source's prices and never makes a digest change on its own.
    """
    from knowledge.prices import ImportPolicy, import_prices

    with engine.connect() as conn:
        done = set(conn.execute(select(col(tables.ImportRun.provider_id), col(tables.ImportRun.source_version))).all())
    # A release's snapshot may rename offers (GCP rows now name their host VM): switching off the old names is meant.
    release = ImportPolicy(allow_deactivate=True)
    return [
        import_prices(engine, snap.path, fmt="skypilot", provider=snap.provider_id, observed_at=snap.observed_at,
                      bundled=True, source_version=snap.source_version, policy=release)
        for snap in bundled_snapshots()
        if not (only_missing and (snap.provider_id, snap.source_version) in done)
    ]


def upgrade_and_load(engine: Engine) -> SetupReport:
    """`gpu-advisor db upgrade`: migrate, refresh the catalog from the data files, add missing prices."""
    from knowledge.load import load_catalog

    upgrade_schema(engine)
    report = SetupReport(catalog=load_catalog(engine))
    report.imports = import_bundled_prices(engine)
    return report


def prepare_database(database_url: str) -> Engine:
    """An engine ready for queries; a new or empty database is set up on first use."""
    engine = make_engine(database_url)
    upgraded = not schema_is_current(engine)
    if upgraded:
        log.info("database schema is not current: upgrading")
        upgrade_schema(engine)
    with engine.connect() as conn:
        has_catalog = conn.execute(select(func.count()).select_from(tables.Gpu)).scalar_one() > 0
    if not has_catalog or upgraded:
        from knowledge.load import load_catalog

        # A newer release brings its schema and its catalog files together: a database it upgraded gets
        # the catalog the code expects (new columns filled, new GPUs and models), as `db upgrade` does.
        log.info("%s: loading the catalog data files", "schema upgraded" if has_catalog else "empty catalog")
        load_catalog(engine)
        import_bundled_prices(engine)
    return engine
