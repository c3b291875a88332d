"""Price history queries: the prices in force at a time, daily cheapest series, and each source's age.

The prices "at" a time are, per provider, the observations of its latest import observed at or
before that time, so a source that failed since keeps its last data (and shows its age).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from sqlalchemy import ColumnElement, Engine, func, or_, select, type_coerce
from sqlalchemy.types import NullType

from knowledge import tables
from knowledge.db import as_utc, table_of
from knowledge.digest_tables import PriceSourceStatus
from rules.market.changes import (
    DigestInput,
    PricePoint,
    SeriesKey,
    SeriesPrice,
    SeriesState,
    SourceAge,
    Thresholds,
    build_digest_input,
    initial_states,
    summarise,
)

log = logging.getLogger(__name__)
P10_MARK = "(marketplace p10)"
OBS = table_of(tables.PriceObservation)
RUNS = table_of(tables.ImportRun)


@dataclass(frozen=True, slots=True)
class ImportInfo:
    id: int
    source: str
    source_version: str
    provider_id: str | None
    file_name: str
    observed_at: datetime
    bundled: bool = False  # a snapshot shipped with the release: a baseline, never a change on its own

    @property
    def rank(self) -> tuple[bool, datetime, int]:
        """The import in force for its feed: a user's or live one before any bundled one, then the newest."""
        return (not self.bundled, self.observed_at, self.id)

    @property
    def feed(self) -> str:
        """What an import replaces: a provider's catalog, or one custom file."""
        return self.provider_id or f"{self.source}:{self.file_name}"


def list_imports(engine: Engine, *, until: datetime | None = None, since: datetime | None = None) -> list[ImportInfo]:
    """Every import observed in [since, until], oldest first."""
    q = select(RUNS.c.id, RUNS.c.source, RUNS.c.source_version, RUNS.c.provider_id, RUNS.c.file_name, RUNS.c.observed_at,
               RUNS.c.bundled)
    if until is not None:
        q = q.where(RUNS.c.observed_at <= until)
    if since is not None:
        q = q.where(RUNS.c.observed_at >= since)
    with engine.connect() as conn:
        rows = conn.execute(q.order_by(RUNS.c.observed_at, RUNS.c.id)).all()
    return [ImportInfo(r[0], r[1], r[2], r[3], r[4], as_utc(r[5]), bool(r[6])) for r in rows]


def latest_per_feed(imports: Iterable[ImportInfo], at: datetime | None = None) -> dict[str, ImportInfo]:
    """Per provider (feed), the import in force at `at`: its newest user or live import by then, else its newest
    bundled snapshot (a baseline never outranks what the user or a live source gave us)."""
    latest: dict[str, ImportInfo] = {}
    for imp in imports:
        if at is not None and imp.observed_at > at:
            continue
        cur = latest.get(imp.feed)
        if cur is None or imp.rank > cur.rank:
            latest[imp.feed] = imp
    return latest


def points_for_imports(engine: Engine, import_ids: Sequence[int], gpu_ids: Iterable[str] = ()) -> tuple[list[PricePoint], dict[SeriesKey, Decimal]]:
    """Observations of these imports as points, and marketplace p10 prices by series."""
    if not import_ids:
        return [], {}
    cols = (OBS.c.gpu_id, OBS.c.provider_id, OBS.c.instance_type, OBS.c.gpu_count, OBS.c.region, OBS.c.tier,
            OBS.c.usd_per_hour, OBS.c.observed_at, OBS.c.market)
    q = select(*cols).where(OBS.c.import_id.in_(list(import_ids)))
    gpus = list(gpu_ids)
    if gpus:
        q = q.where(OBS.c.gpu_id.in_(gpus))
    points: list[PricePoint] = []
    p10: dict[SeriesKey, Decimal] = {}
    with engine.connect() as conn:
        for g, prov, inst, count, region, tier, usd, at, market in conn.execute(q):
            usd = usd if isinstance(usd, Decimal) else Decimal(str(usd))
            if inst.endswith(P10_MARK):
                p10[SeriesKey(g, prov, count, tier, market)] = usd
                continue
            points.append(PricePoint(g, prov, inst, count, region, tier, usd, as_utc(at), market))
    return points, p10


def marketplace_ids(engine: Engine) -> frozenset[str]:
    t = table_of(tables.Provider)
    with engine.connect() as conn:
        return frozenset(conn.execute(select(t.c.id).where(t.c.kind == "marketplace")).scalars())


def prices_at(engine: Engine, at: datetime | None = None, *, gpu_ids: Iterable[str] = (), imports: list[ImportInfo] | None = None) -> dict[SeriesKey, SeriesPrice]:
    """Series prices in force at `at` (None = now): each provider's latest import by then.

    Clouds' series (cheapest region) are grouped in SQL, about one row per series read instead of every
    observation; marketplaces' listings (median, p10) are read whole and summarised by `summarise` as before.
    """
    imports = imports if imports is not None else list_imports(engine, until=at)
    ids = [i.id for i in latest_per_feed(imports, at).values()]
    gpus = list(gpu_ids)
    markets = marketplace_ids(engine)
    points, p10 = _marketplace_points(engine, ids, gpus, markets)
    prices = summarise(points, markets)
    prices.update(_cloud_prices(engine, ids, gpus, markets))
    for key, value in p10.items():
        if key in prices:
            prices[key] = replace(prices[key], p10_usd_per_hour=value)
    return prices


def _marketplace_points(
    engine: Engine, import_ids: list[int], gpu_ids: list[str], markets: frozenset[str]
) -> tuple[list[PricePoint], dict[SeriesKey, Decimal]]:
    """What `points_for_imports` gives for the marketplaces' rows, and the p10 rows of every provider (one read)."""
    if not import_ids:
        return [], {}
    cols = (OBS.c.gpu_id, OBS.c.provider_id, OBS.c.instance_type, OBS.c.gpu_count, OBS.c.region, OBS.c.tier,
            OBS.c.usd_per_hour, OBS.c.observed_at, OBS.c.market)
    q = select(*cols).where(OBS.c.import_id.in_(import_ids), or_(OBS.c.provider_id.in_(list(markets)), _p10_match(engine)))
    if gpu_ids:
        q = q.where(OBS.c.gpu_id.in_(gpu_ids))
    points: list[PricePoint] = []
    p10: dict[SeriesKey, Decimal] = {}
    with engine.connect() as conn:
        for g, prov, inst, count, region, tier, usd, at, market in conn.execute(q):
            if inst.endswith(P10_MARK):
                p10[SeriesKey(g, prov, count, tier, market)] = _decimal(usd)
            elif prov in markets:
                points.append(PricePoint(g, prov, inst, count, region, tier, _decimal(usd), as_utc(at), market))
    return points, p10


def _p10_match(engine: Engine) -> ColumnElement[bool]:
    """instance_type ends with P10_MARK, case-sensitive as `str.endswith` (SQLite's LIKE ignores case; GLOB does not)."""
    if engine.dialect.name == "sqlite":
        return OBS.c.instance_type.op("GLOB", is_comparison=True)("*" + P10_MARK)
    return OBS.c.instance_type.endswith(P10_MARK, autoescape=True)


def _in_force(import_ids: list[int], gpu_ids: list[str], markets: frozenset[str]) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = [OBS.c.import_id.in_(import_ids), OBS.c.provider_id.not_in(list(markets))]
    return where + ([OBS.c.gpu_id.in_(gpu_ids)] if gpu_ids else [])


def _cloud_prices(
    engine: Engine, import_ids: list[int], gpu_ids: list[str], markets: frozenset[str]
) -> dict[SeriesKey, SeriesPrice]:
    """Per cloud series, what `summarise` gives: its cheapest observation by (price, region, instance type),
    the newest observation time and the count.

    The database groups (one row per series) and then returns only the rows at some series' lowest price;
    the tie between regions is broken here, by code point as Python compares (no collation involved).
    """
    if not import_ids:
        return {}
    series = (OBS.c.gpu_id, OBS.c.provider_id, OBS.c.gpu_count, OBS.c.tier, OBS.c.market)
    where = (*_in_force(import_ids, gpu_ids, markets), ~_p10_match(engine))
    # The price as `summarise` compares it: read as Decimal with the column's 6 places. SQLite stores a REAL
    # that may carry more digits, so it is ranked rounded to 6 places there (PostgreSQL's NUMERIC(14,6) is exact).
    price = func.round(OBS.c.usd_per_hour, 6) if engine.dialect.name == "sqlite" else OBS.c.usd_per_hour
    low = func.min(price)
    grouped = (select(*series, type_coerce(low, OBS.c.usd_per_hour.type), type_coerce(low, NullType()),
                      func.max(OBS.c.observed_at), func.count())
               .where(*where).group_by(*series))
    best: dict[SeriesKey, tuple[str, str]] = {}
    with engine.connect() as conn:
        lows = {SeriesKey(g, prov, count, tier, market): (_decimal(usd), raw, as_utc(newest), int(n))
                for g, prov, count, tier, market, usd, raw, newest, n in conn.execute(grouped)}
        if not lows:
            return {}
        # Only the rows at some series' lowest price (the stored values as the database compares them).
        at_lows = select(*series, type_coerce(price, NullType()), OBS.c.region, OBS.c.instance_type).where(
            *where, price.in_([raw for _, raw, _, _ in lows.values()]))
        for g, prov, count, tier, market, raw, region, inst in conn.execute(at_lows):
            key = SeriesKey(g, prov, count, tier, market)
            if key not in lows or raw != lows[key][1]:
                continue  # another series' lowest price
            if key not in best or (region, inst) < best[key]:
                best[key] = (region, inst)
    return {key: SeriesPrice(key, usd, best[key][1], best[key][0], newest, n)
            for key, (usd, _, newest, n) in lows.items()}


def _decimal(usd: object) -> Decimal:
    return usd if isinstance(usd, Decimal) else Decimal(str(usd))


def daily_cheapest(
    engine: Engine, *, until: datetime, days: int = 30, gpu_ids: Iterable[str] = (), imports: list[ImportInfo] | None = None
) -> dict[str, tuple[Decimal | None, ...]]:
    """Per GPU, the cheapest on-demand $/GPU-hour in force at the end of each of the last `days` days."""
    imports = imports if imports is not None else list_imports(engine, until=until)
    start = until - timedelta(days=days)
    # Imports inside the window plus, per feed, the one in force when it opened.
    relevant = {i.id: i for i in imports if start < i.observed_at <= until}
    relevant.update({i.id: i for i in latest_per_feed(imports, start).values()})
    mins = _min_per_gpu_hour(engine, list(relevant), list(gpu_ids))
    out: dict[str, list[Decimal | None]] = defaultdict(lambda: [None] * days)
    ends = [start + timedelta(days=d + 1) for d in range(days)]
    for d, end in enumerate(ends):
        for imp in latest_per_feed(relevant.values(), end).values():
            for gpu_id, usd in mins.get(imp.id, {}).items():
                cur = out[gpu_id][d]
                if cur is None or usd < cur:
                    out[gpu_id][d] = usd
    return {g: tuple(v) for g, v in out.items()}


def _min_per_gpu_hour(engine: Engine, import_ids: list[int], gpu_ids: list[str]) -> dict[int, dict[str, Decimal]]:
    if not import_ids:
        return {}
    per_gpu = func.min(OBS.c.usd_per_hour / OBS.c.gpu_count)
    q = (
        select(OBS.c.import_id, OBS.c.gpu_id, per_gpu)
        .where(OBS.c.import_id.in_(import_ids), OBS.c.tier == "on-demand", ~OBS.c.instance_type.endswith(P10_MARK))
        .group_by(OBS.c.import_id, OBS.c.gpu_id)
    )
    if gpu_ids:
        q = q.where(OBS.c.gpu_id.in_(gpu_ids))
    out: dict[int, dict[str, Decimal]] = defaultdict(dict)
    with engine.connect() as conn:
        for imp, gpu, usd in conn.execute(q):
            out[imp][gpu] = Decimal(str(usd)).quantize(Decimal("0.0001"))
    return out


def source_ages(engine: Engine, *, now: datetime | None = None, imports: list[ImportInfo] | None = None) -> list[SourceAge]:
    """Each feed's newest data and its age; live sources that failed since are flagged with the error."""
    now = now or datetime.now(UTC)
    imports = imports if imports is not None else list_imports(engine)
    with engine.connect() as conn:
        # A live source (gpuhunt) failing for a provider marks that provider's feed, whatever source it last came from.
        status = {r.provider_id: r for r in conn.execute(select(table_of(PriceSourceStatus))).all()}
    out = []
    for feed, imp in sorted(latest_per_feed(imports).items()):
        st = status.get(imp.provider_id or feed)
        failing = bool(
            st is not None and st.last_failure_at is not None
            and (st.last_success_at is None or as_utc(st.last_failure_at) > as_utc(st.last_success_at))
        )
        age_h = round((now - imp.observed_at).total_seconds() / 3600, 1)
        out.append(SourceAge(imp.source, feed, imp.observed_at, age_h, failing, st.last_error if failing and st else None))
    return out


def bundled_providers(imports: Iterable[ImportInfo], at: datetime | None) -> frozenset[str]:
    """Providers whose prices in force at `at` come from a bundled snapshot."""
    return frozenset(i.provider_id for i in latest_per_feed(imports, at).values() if i.bundled and i.provider_id)


def _without(prices: Mapping[SeriesKey, SeriesPrice], providers: frozenset[str]) -> dict[SeriesKey, SeriesPrice]:
    return {k: v for k, v in prices.items() if k.provider_id not in providers}


def newest_observation(imports: Iterable[ImportInfo]) -> datetime | None:
    """When the newest data in force was observed: user and live imports first, else the bundled snapshots."""
    chosen = list(latest_per_feed(imports).values())
    own = [i.observed_at for i in chosen if not i.bundled]
    every = [i.observed_at for i in chosen]
    return max(own) if own else max(every) if every else None


def compute_digest(
    engine: Engine,
    *,
    since: datetime | None,
    thresholds: Thresholds,
    now: datetime | None = None,
    gpu_filter: frozenset[str] = frozenset(),
    believed: Mapping[SeriesKey, SeriesState] | None = None,
    gpu_order: Sequence[str] = (),
) -> DigestInput:
    """The digest between the prices at `since` (or what a channel believes) and those at `now` (None = latest)."""
    imports = list_imports(engine, until=now)  # now=None: the latest prices, whenever observed
    # A provider whose prices in force are a bundled snapshot has nothing to report: a release's snapshot is not news.
    baseline = bundled_providers(imports, now)
    now_prices = _without(prices_at(engine, now, imports=imports, gpu_ids=gpu_filter), baseline)
    now = now or datetime.now(UTC)
    if believed is None:
        old = prices_at(engine, since, imports=imports, gpu_ids=gpu_filter) if since is not None else {}
        believed = initial_states(old)
    held = {k: v for k, v in believed.items() if k.provider_id in baseline}  # carried over untouched
    believed = {k: v for k, v in believed.items() if k.provider_id not in baseline}
    sources = source_ages(engine, now=now, imports=imports)
    digest = build_digest_input(
        believed=believed, now_prices=now_prices, thresholds=thresholds, now=now, since=since,
        gpu_filter=gpu_filter, gpu_order=gpu_order, sources=sources,
    )
    if held:
        digest = replace(digest, states={**held, **digest.states})
    if not digest.gpus:
        return digest
    until = digest.prices_at or now
    series = daily_cheapest(engine, until=until, gpu_ids=[g.gpu_id for g in digest.gpus], imports=imports)
    gpus = tuple(replace(g, series_30d=series.get(g.gpu_id, ())) for g in digest.gpus)
    return replace(digest, gpus=gpus)


def chart_kind(tier: str, market: str) -> str:
    """How a chart tells prices apart: auction and marketplace by their market kind, the rest by tier."""
    return market if market in ("auction", "marketplace") else tier


def price_history(
    engine: Engine, gpu_id: str, *, until: datetime, days: int = 90, imports: list[ImportInfo] | None = None
) -> dict[str, list[tuple[datetime, Decimal]]]:
    """Per market kind (on-demand, spot, auction, marketplace), the cheapest $/GPU-hour of one GPU in force at the
    end of each of the last `days` days (days with no price left out), oldest first."""
    imports = imports if imports is not None else list_imports(engine, until=until)
    start = until - timedelta(days=days)
    relevant = {i.id: i for i in imports if start < i.observed_at <= until}
    relevant.update({i.id: i for i in latest_per_feed(imports, start).values()})
    mins = _min_per_kind(engine, list(relevant), gpu_id)
    out: dict[str, list[tuple[datetime, Decimal]]] = defaultdict(list)
    for d in range(days):
        end = start + timedelta(days=d + 1)
        best: dict[str, Decimal] = {}
        for imp in latest_per_feed(relevant.values(), end).values():
            for kind, usd in mins.get(imp.id, {}).items():
                if kind not in best or usd < best[kind]:
                    best[kind] = usd
        for kind, usd in best.items():
            out[kind].append((end, usd))
    return dict(out)


def _min_per_kind(engine: Engine, import_ids: list[int], gpu_id: str) -> dict[int, dict[str, Decimal]]:
    if not import_ids:
        return {}
    per_gpu = func.min(OBS.c.usd_per_hour / OBS.c.gpu_count)
    q = (
        select(OBS.c.import_id, OBS.c.tier, OBS.c.market, per_gpu)
        .where(OBS.c.import_id.in_(import_ids), OBS.c.gpu_id == gpu_id, ~OBS.c.instance_type.endswith(P10_MARK),
               OBS.c.tier != "reserved")
        .group_by(OBS.c.import_id, OBS.c.tier, OBS.c.market)
    )
    out: dict[int, dict[str, Decimal]] = defaultdict(dict)
    with engine.connect() as conn:
        for imp, tier, market, usd in conn.execute(q):
            kind = chart_kind(tier, market)
            value = Decimal(str(usd)).quantize(Decimal("0.0001"))
            if kind not in out[imp] or value < out[imp][kind]:
                out[imp][kind] = value
    return out
