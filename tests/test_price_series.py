"""Each import's stored series prices (knowledge.price_series): the prices in force read from them are the
prices of every observation in force, on SQLite and PostgreSQL.

The reference is the rule the digest has always applied (`rules.market.changes.summarise` over all the
observations of the imports in force, then the marketplace p10 rows), worked by hand for a small history
and computed over the whole bundled catalog for the real one.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from sqlalchemy import Engine, func, insert, select, text
from sqlmodel import Session

from knowledge import tables
from knowledge.db import as_utc, table_of
from knowledge.history import latest_per_feed, list_imports, marketplace_ids, prices_at
from knowledge.price_series import P10_MARK
from rules.market.changes import PricePoint, SeriesKey, SeriesPrice, summarise
from test_digest_data import MONTH_START, Row, seed_catalog, write_import

OBS = table_of(tables.PriceObservation)
RUNS = table_of(tables.ImportRun)
SERIES = table_of(tables.PriceSeries)
H100, A10 = "h100-sxm-80gb", "a10"
T0, T1 = MONTH_START, MONTH_START + timedelta(hours=6)


def _custom_file(engine: Engine, name: str, rows: list[Row], at: object) -> int:
    """A user's own price file: an import with no provider of its own (its feed is the file)."""
    with Session(engine) as s, s.begin():
        run = tables.ImportRun(source="csv", source_version="test", provider_id=None, file_name=name, observed_at=at,
                               imported_at=at, rows_read=len(rows), offers_written=len(rows), unmapped_json="{}")
        s.add(run)
        s.flush()
        s.execute(insert(tables.PriceObservation), [
            {"import_id": run.id, "provider_id": r.provider_id, "instance_type": r.instance_type, "gpu_id": r.gpu_id,
             "gpu_count": r.gpu_count, "region": r.region, "tier": r.tier, "usd_per_hour": r.usd_per_hour,
             "observed_at": at, "source": "csv", "source_version": "test"} for r in rows])
        assert run.id is not None
        return run.id


def _history(engine: Engine) -> None:
    """Two feeds per provider: lambda's and vast's catalogs at T0, and a user's file at T1 with rows of both."""
    seed_catalog(engine)
    d = Decimal
    write_import(engine, "lambda", [
        Row("lambda", "gpu_1x_h100", H100, 1, "us-east-1", "on-demand", d("3.29")),
        Row("lambda", "gpu_1x_h100", H100, 1, "us-west-1", "on-demand", d("3.10")),
        Row("lambda", "gpu_1x_a10", A10, 1, "us-east-1", "on-demand", d("0.75")),
    ], T0)
    write_import(engine, "vast", [
        Row("vast", "1x H100 a", H100, 1, "any", "on-demand", d("2.00")),
        Row("vast", "1x H100 b", H100, 1, "any", "on-demand", d("2.40")),
        Row("vast", f"1x {H100} {P10_MARK}", H100, 1, "any", "on-demand", d("1.90")),
    ], T0)
    _custom_file(engine, "mine.csv", [
        Row("lambda", "gpu_1x_h100_b", H100, 1, "eu-central-1", "on-demand", d("3.10")),  # ties us-west-1
        Row("vast", "1x H100 c", H100, 1, "any", "on-demand", d("3.00")),
    ], T1)


def test_series_across_feeds_are_worked_out_as_over_every_observation(engine: Engine) -> None:
    _history(engine)
    prices = prices_at(engine)
    assert set(prices) == {SeriesKey(H100, "lambda", 1, "on-demand"), SeriesKey(A10, "lambda", 1, "on-demand"),
                           SeriesKey(H100, "vast", 1, "on-demand")}
    cloud = prices[SeriesKey(H100, "lambda", 1, "on-demand")]
    # $3.10 in two regions: the tie goes to the region first by code point, eu-central-1 (the user's file).
    assert (cloud.usd_per_hour, cloud.region, cloud.instance_type, cloud.listings) == \
        (Decimal("3.10"), "eu-central-1", "gpu_1x_h100_b", 3)
    assert cloud.observed_at == T1
    market = prices[SeriesKey(H100, "vast", 1, "on-demand")]
    # The median of all three listings (2.00, 2.40, 3.00), not a merge of each import's median (2.20 and 3.00);
    # the p10 is the one vast's feed carried.
    assert (market.usd_per_hour, market.listings, market.p10_usd_per_hour, market.region) == \
        (Decimal("2.40"), 3, Decimal("1.90"), "any")
    assert prices[SeriesKey(A10, "lambda", 1, "on-demand")].usd_per_hour == Decimal("0.75")
    only = prices_at(engine, gpu_ids=[A10])
    assert set(only) == {SeriesKey(A10, "lambda", 1, "on-demand")}


def test_an_import_written_before_the_table_gets_its_series_once(engine: Engine) -> None:
    _history(engine)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(SERIES)).scalar_one() == 0
    first = prices_at(engine, T0 + timedelta(hours=1))  # the two feeds in force then
    with engine.connect() as conn:
        stored = dict(conn.execute(select(RUNS.c.file_name, RUNS.c.series_stored)).all())
        rows = conn.execute(select(func.count()).select_from(SERIES)).scalar_one()
    assert stored == {"lambda.csv": True, "vast.csv": True, "mine.csv": False}
    assert rows == 2 + 1 + 1  # lambda's two series, vast's one series and its p10 row
    assert prices_at(engine, T0 + timedelta(hours=1)) == first  # now read from what was stored
    assert first[SeriesKey(H100, "vast", 1, "on-demand")].usd_per_hour == Decimal("2.20")  # median of 2.00, 2.40


def _every_observation_in_force(engine: Engine) -> dict[SeriesKey, SeriesPrice]:
    """The reference: `summarise` over all observations of the imports in force, p10 rows applied after."""
    ids = [i.id for i in latest_per_feed(list_imports(engine)).values()]
    markets = marketplace_ids(engine)
    points: list[PricePoint] = []
    p10: dict[SeriesKey, Decimal] = {}
    with engine.connect() as conn:
        for r in conn.execute(select(OBS).where(OBS.c.import_id.in_(ids))).mappings():
            point = PricePoint(r["gpu_id"], r["provider_id"], r["instance_type"], r["gpu_count"], r["region"], r["tier"],
                               Decimal(str(r["usd_per_hour"])), as_utc(r["observed_at"]), r["market"])
            if point.instance_type.endswith(P10_MARK):
                p10[point.key] = point.usd_per_hour
            else:
                points.append(point)
    out = summarise(points, markets)
    return {key: replace(price, p10_usd_per_hour=p10[key]) if key in p10 else price for key, price in out.items()}


def test_the_importer_stores_each_imports_series(loaded_engine: Engine) -> None:
    """The bundled catalog, imported through knowledge.prices.write_rows: every import stored its series, and
    the prices in force read from them are those of every observation in force."""
    with loaded_engine.connect() as conn:
        runs = conn.execute(select(RUNS.c.id, RUNS.c.series_stored)).all()
        observations = conn.execute(select(func.count()).select_from(OBS)).scalar_one()
        series = conn.execute(select(func.count()).select_from(SERIES)).scalar_one()
    assert runs and all(stored for _, stored in runs)
    assert 0 < series < observations
    expected = _every_observation_in_force(loaded_engine)
    assert len(expected) > 100 and any(p.p10_usd_per_hour is not None for p in expected.values())
    assert prices_at(loaded_engine) == expected


def test_a_failed_import_leaves_no_series(loaded_engine: Engine) -> None:
    """The series are written in the import's own transaction: an import refused half way leaves none behind."""
    from knowledge.prices import ImportPolicy, ImportReport, PriceImportError, PriceRow, write_rows
    from knowledge.snapshot import load_snapshot

    snap = load_snapshot(loaded_engine)
    with loaded_engine.connect() as conn:
        before = conn.execute(select(func.count()).select_from(SERIES)).scalar_one()
    report = ImportReport(file_name="lambda.csv", provider_id="lambda", source="skypilot", source_version="t",
                          observed_at=T1 + timedelta(days=400))
    row = PriceRow("lambda", "gpu_1x_h100_sxm5", H100, 1, "us-east-1", "on-demand", Decimal("2.99"), "on-demand")
    try:
        # One row where lambda lists dozens: refused after the observations and series were written.
        write_rows(loaded_engine, report, [row], snap.providers, policy=ImportPolicy(max_deactivated_share=Decimal("0.5")))
    except PriceImportError as refused:
        assert "switch off" in str(refused)
    else:
        raise AssertionError("an import switching off most of lambda's offers was accepted")
    with loaded_engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(SERIES)).scalar_one() == before


def test_a_database_at_0009_keeps_its_history_and_reads_it_after_the_upgrade(tmp_path: Path) -> None:
    """Imports written before migration 0010 are marked as without series; the first digest read stores them."""
    from alembic import command

    from knowledge.db import alembic_config, make_engine, upgrade_schema

    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    command.upgrade(alembic_config(engine), "0009")
    seed_catalog(engine)
    with engine.begin() as conn:  # an import as 0009 stored it: no series_stored column yet
        conn.execute(text("INSERT INTO import_run (id, source, source_version, provider_id, file_name, observed_at, "
                          "imported_at, rows_read, offers_written, unmapped_json, bundled, skipped_json, current) "
                          "VALUES (7, 'skypilot', 'v', 'lambda', 'lambda.csv', :at, :at, 1, 1, '{}', 0, '{}', 1)"),
                     {"at": T0})
        conn.execute(text("INSERT INTO price_observation (import_id, provider_id, instance_type, gpu_id, gpu_count, "
                          "region, tier, usd_per_hour, observed_at, source, source_version, market) VALUES "
                          "(7, 'lambda', 'gpu_1x_a10', 'a10', 1, 'us-east-1', 'on-demand', 0.75, :at, 'skypilot', "
                          "'v', 'on-demand')"), {"at": T0})
    upgrade_schema(engine)
    with engine.connect() as conn:
        assert conn.execute(select(RUNS.c.series_stored)).scalars().all() == [False]
    price = prices_at(engine)[SeriesKey(A10, "lambda", 1, "on-demand")]
    assert (price.usd_per_hour, price.region, price.observed_at) == (Decimal("0.75"), "us-east-1", T0)
    with engine.connect() as conn:
        assert conn.execute(select(RUNS.c.series_stored)).scalars().all() == [True]
        assert conn.execute(select(SERIES.c.import_id, SERIES.c.usd_per_hour)).all() == [(7, Decimal("0.75"))]
