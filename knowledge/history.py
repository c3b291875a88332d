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

from sqlalchemy import Engine, func, select

from knowledge import tables
from knowledge.db import as_utc, table_of
from knowledge.digest_tables import PriceSourceStatus
from knowledge.price_series import P10_MARK, series_prices
from rules.market.changes import (
    DigestInput,
    SeriesKey,
    SeriesPrice,
    SeriesState,
    SourceAge,
    Thresholds,
    build_digest_input,
    initial_states,
)

log = logging.getLogger(__name__)
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


def marketplace_ids(engine: Engine) -> frozenset[str]:
    t = table_of(tables.Provider)
    with engine.connect() as conn:
        return frozenset(conn.execute(select(t.c.id).where(t.c.kind == "marketplace")).scalars())


def prices_at(engine: Engine, at: datetime | None = None, *, gpu_ids: Iterable[str] = (), imports: list[ImportInfo] | None = None) -> dict[SeriesKey, SeriesPrice]:
    """Series prices in force at `at` (None = now): each provider's latest import by then.

    Read from the series each import stored when it was written (`knowledge.price_series`), not from every
    observation: a cloud's cheapest region, a marketplace's median, p10 and listing count.
    """
    imports = imports if imports is not None else list_imports(engine, until=at)
    ids = [i.id for i in latest_per_feed(imports, at).values()]
    return series_prices(engine, ids, gpu_ids, marketplace_ids(engine))


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
