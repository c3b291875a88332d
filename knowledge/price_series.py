"""Each import's series prices, stored beside its observations (table `price_series`, migration 0010).

A series is one GPU × provider × count × tier × market; its price in one import is what
`rules.market.changes.summarise` gives over that import's observations (a cloud's cheapest region, a
marketplace's median, p10 and listing count), and a marketplace p10 row the import carried is kept as its
own kind. An import never changes once written, so these rows are written with it (`store`) and the prices
in force at a time are read from them (`series_prices`): a few hundred rows per import instead of every
observation. Imports written before the table existed get theirs on the first read that needs them.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from decimal import Decimal

from sqlalchemy import Connection, Engine, insert, select, update

from knowledge import tables
from knowledge.db import as_utc, table_of
from rules.market.changes import PricePoint, SeriesKey, SeriesPrice, summarise

log = logging.getLogger(__name__)
P10_MARK = "(marketplace p10)"  # the instance type's ending of a marketplace p10 row (knowledge.prices)
OBS = table_of(tables.PriceObservation)
RUNS = table_of(tables.ImportRun)
SERIES = table_of(tables.PriceSeries)

ImportSeries = tuple[dict[SeriesKey, SeriesPrice], dict[SeriesKey, Decimal]]  # series prices, p10 rows


def of_points(points: Iterable[PricePoint], marketplaces: frozenset[str]) -> ImportSeries:
    """One import's series prices and p10 rows from its observations."""
    plain: list[PricePoint] = []
    p10: dict[SeriesKey, Decimal] = {}
    for p in points:
        if p.instance_type.endswith(P10_MARK):
            p10[p.key] = p.usd_per_hour
        else:
            plain.append(p)
    return summarise(plain, marketplaces), p10


def store(conn: Connection, import_id: int, series: ImportSeries) -> None:
    """Write one import's series rows and mark it stored (in the caller's transaction)."""
    prices, p10 = series
    rows = [_row(import_id, "series", k, v.usd_per_hour, v.instance_type, v.region, v.observed_at, v.listings,
                 v.p10_usd_per_hour) for k, v in prices.items()]
    rows += [_row(import_id, "p10", k, usd, "", "any", None, 1, None) for k, usd in p10.items()]  # no time of its own
    if rows:
        conn.execute(insert(SERIES), rows)
    conn.execute(update(RUNS).where(RUNS.c.id == import_id).values(series_stored=True))


def _row(import_id: int, kind: str, key: SeriesKey, usd: Decimal, instance_type: str, region: str,
         observed_at: datetime | None, listings: int, p10: Decimal | None) -> dict[str, object]:
    return {"import_id": import_id, "kind": kind, "gpu_id": key.gpu_id, "provider_id": key.provider_id,
            "gpu_count": key.gpu_count, "tier": key.tier, "market": key.market, "usd_per_hour": usd,
            "instance_type": instance_type, "region": region, "observed_at": observed_at,
            "listings": listings, "p10_usd_per_hour": p10}


def points_of(conn: Connection, import_ids: Sequence[int], providers: Iterable[str] = (),
              gpu_ids: Iterable[str] = ()) -> dict[int, list[PricePoint]]:
    """The observations of these imports as points, per import (optionally of some providers and GPUs only)."""
    q = select(OBS.c.import_id, OBS.c.gpu_id, OBS.c.provider_id, OBS.c.instance_type, OBS.c.gpu_count, OBS.c.region,
               OBS.c.tier, OBS.c.usd_per_hour, OBS.c.observed_at, OBS.c.market).where(OBS.c.import_id.in_(import_ids))
    if wanted := list(providers):
        q = q.where(OBS.c.provider_id.in_(wanted))
    if gpus := list(gpu_ids):
        q = q.where(OBS.c.gpu_id.in_(gpus))
    out: dict[int, list[PricePoint]] = {i: [] for i in import_ids}
    for imp, g, prov, inst, count, region, tier, usd, at, market in conn.execute(q):
        out[imp].append(PricePoint(g, prov, inst, count, region, tier, _decimal(usd), as_utc(at), market))
    return out


def _decimal(usd: object) -> Decimal:
    return usd if isinstance(usd, Decimal) else Decimal(str(usd))


def series_prices(engine: Engine, import_ids: Sequence[int], gpu_ids: Iterable[str],
                  marketplaces: frozenset[str]) -> dict[SeriesKey, SeriesPrice]:
    """The series prices over these imports together, as `summarise` gives them over all their observations
    (a cloud's cheapest region across them, a marketplace's median of all its listings), with p10 rows applied."""
    if not import_ids:
        return {}
    gpus = list(gpu_ids)
    per_import = _stored(engine, import_ids, gpus)
    missing = [i for i in import_ids if i not in per_import]
    if missing:
        per_import.update(_compute_and_store(engine, missing, gpus, marketplaces))
    return _merge(engine, per_import, gpus, marketplaces)


def _stored(engine: Engine, import_ids: Sequence[int], gpu_ids: list[str]) -> dict[int, ImportSeries]:
    """The stored series of those imports that have theirs."""
    with engine.connect() as conn:
        ready = list(conn.execute(select(RUNS.c.id).where(RUNS.c.id.in_(import_ids), RUNS.c.series_stored)).scalars())
        if not ready:
            return {}
        q = select(SERIES.c.import_id, SERIES.c.kind, SERIES.c.gpu_id, SERIES.c.provider_id, SERIES.c.gpu_count,
                   SERIES.c.tier, SERIES.c.market, SERIES.c.usd_per_hour, SERIES.c.instance_type, SERIES.c.region,
                   SERIES.c.observed_at, SERIES.c.listings, SERIES.c.p10_usd_per_hour).where(
            SERIES.c.import_id.in_(ready))
        if gpu_ids:
            q = q.where(SERIES.c.gpu_id.in_(gpu_ids))
        out: dict[int, ImportSeries] = {i: ({}, {}) for i in ready}
        for imp, kind, g, prov, count, tier, market, usd, inst, region, at, listings, p10 in conn.execute(q):
            key = SeriesKey(g, prov, count, tier, market)
            if kind == "p10":
                out[imp][1][key] = _decimal(usd)
            else:
                assert at is not None, "a series row has its newest observation's time"
                out[imp][0][key] = SeriesPrice(key, _decimal(usd), inst, region, as_utc(at), listings,
                                               None if p10 is None else _decimal(p10))
    return out


def _compute_and_store(engine: Engine, import_ids: list[int], gpu_ids: list[str],
                       marketplaces: frozenset[str]) -> dict[int, ImportSeries]:
    """Series of imports written before the table existed: computed from their observations, then stored once
    (another process storing the same import first is fine: the guarded flag lets one writer in)."""
    with engine.connect() as conn:
        points = points_of(conn, import_ids)
    computed = {i: of_points(p, marketplaces) for i, p in points.items()}
    for imp, series in computed.items():
        try:
            with engine.begin() as conn:
                claimed = conn.execute(update(RUNS).where(RUNS.c.id == imp, RUNS.c.series_stored.is_(False))
                                       .values(series_stored=True)).rowcount
                if claimed:
                    store(conn, imp, series)
        except Exception:  # a read-only database or a lost race: the prices computed here are still right
            log.warning("could not store the price series of import %s", imp, exc_info=True)
    return {i: _only(s, gpu_ids) for i, s in computed.items()}


def _only(series: ImportSeries, gpu_ids: list[str]) -> ImportSeries:
    if not gpu_ids:
        return series
    wanted = set(gpu_ids)
    prices, p10 = series
    return {k: v for k, v in prices.items() if k.gpu_id in wanted}, {k: v for k, v in p10.items() if k.gpu_id in wanted}


def _merge(engine: Engine, per_import: Mapping[int, ImportSeries], gpu_ids: list[str],
           marketplaces: frozenset[str]) -> dict[SeriesKey, SeriesPrice]:
    """One price per series across imports. A cloud series seen in several imports is their cheapest (ties by
    region, then instance type, as `summarise` sorts), newest and total count; a marketplace series seen in
    several imports is summarised again over all their listings (its median is not a merge of medians)."""
    seen: dict[SeriesKey, list[int]] = defaultdict(list)
    merged: dict[SeriesKey, SeriesPrice] = {}
    p10: dict[SeriesKey, Decimal] = {}
    for imp in sorted(per_import):  # a p10 row given by several imports: the newest import's (the highest id)
        prices, rows = per_import[imp]
        p10.update(rows)
        for key, price in prices.items():
            seen[key].append(imp)
            old = merged.get(key)
            if old is None:
                merged[key] = price
            else:
                best = min(old, price, key=lambda s: (s.usd_per_hour, s.region, s.instance_type))
                merged[key] = replace(best, observed_at=max(old.observed_at, price.observed_at),
                                      listings=old.listings + price.listings)
    spread = {k: imps for k, imps in seen.items() if len(imps) > 1 and k.provider_id in marketplaces}
    if spread:
        merged.update(_marketplace_again(engine, spread, gpu_ids, marketplaces))
    for key, value in p10.items():
        if key in merged:
            merged[key] = replace(merged[key], p10_usd_per_hour=value)
    return merged


def _marketplace_again(engine: Engine, spread: Mapping[SeriesKey, list[int]], gpu_ids: list[str],
                       marketplaces: frozenset[str]) -> dict[SeriesKey, SeriesPrice]:
    """Marketplace series that span imports, summarised over all their listings."""
    imports = sorted({i for imps in spread.values() for i in imps})
    providers = sorted({k.provider_id for k in spread})
    with engine.connect() as conn:
        points = [p for ps in points_of(conn, imports, providers, gpu_ids or sorted({k.gpu_id for k in spread})).values()
                  for p in ps]
    again, _ = of_points(points, marketplaces)
    return {k: again[k] for k in spread if k in again}
