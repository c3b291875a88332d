"""Prepare a database for use: schema at head, catalog loaded, bundled prices imported once."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
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


def bundled_price_files() -> list[Path]:
    return sorted(BUNDLED_PRICES.glob("*.csv"))


def import_bundled_prices(engine: Engine, *, only_missing: bool = True) -> list[ImportReport]:
    """Import each bundled SkyPilot snapshot whose provider has no import yet (or all of them)."""
    from knowledge.prices import import_prices

    with engine.connect() as conn:
        done = set(conn.execute(select(col(tables.ImportRun.provider_id))).scalars())
    return [
        import_prices(engine, path, fmt="skypilot")
        for path in bundled_price_files()
        if not (only_missing and path.stem in done)
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
