"""Per provider, where its prices stand: how many offers, observed when (the source's date), from which source,
the last live refresh and its last error. `gpu-advisor prices status` prints it; the clock reads it to know
when a refresh is due.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, func, select

from knowledge import tables
from knowledge.db import as_utc, table_of
from knowledge.digest_tables import PriceSourceStatus
from knowledge.history import latest_per_feed, list_imports


@dataclass(frozen=True, slots=True)
class ProviderStatus:
    provider_id: str
    offers: int  # active offers
    observed_at: datetime | None  # of the data in force
    source: str | None  # skypilot, gpuhunt, csv, json
    bundled: bool  # the data in force is the release's bundled snapshot
    age_days: float | None
    last_refresh_at: datetime | None  # last successful live refresh
    last_failure_at: datetime | None
    last_error: str | None  # set while the last live attempt failed
    stale: bool


def provider_status(engine: Engine, *, now: datetime, stale_after_days: int) -> list[ProviderStatus]:
    """Every provider of the catalog with its data in force and its live source's health, by provider id."""
    offer = table_of(tables.Offer)
    with engine.connect() as conn:
        providers = list(conn.execute(select(table_of(tables.Provider).c.id)).scalars())
        counts: dict[str, int] = dict(conn.execute(select(offer.c.provider_id, func.count()).where(offer.c.active == True)  # noqa: E712
                                   .group_by(offer.c.provider_id)).all())
        health = {r.provider_id: r for r in conn.execute(select(table_of(PriceSourceStatus))).all()}
    in_force = {imp.provider_id: imp for imp in latest_per_feed(list_imports(engine)).values() if imp.provider_id}
    out = []
    for pid in sorted(providers):
        imp = in_force.get(pid)
        st = health.get(pid)
        success = as_utc(st.last_success_at) if st is not None else None
        failure = as_utc(st.last_failure_at) if st is not None else None
        failing = failure is not None and (success is None or failure > success)
        age = (now - imp.observed_at).total_seconds() / 86400 if imp is not None else None
        out.append(ProviderStatus(
            pid, int(counts.get(pid, 0)), imp.observed_at if imp else None, imp.source if imp else None,
            bool(imp and imp.bundled), round(age, 1) if age is not None else None, success, failure,
            st.last_error if failing and st is not None else None, age is not None and age > stale_after_days,
        ))
    return out


def last_refresh_attempt(engine: Engine, source: str = "gpuhunt") -> datetime | None:
    """When the live source was last tried (success or failure), for the clock's schedule."""
    t = table_of(PriceSourceStatus)
    with engine.connect() as conn:
        row = conn.execute(select(func.max(t.c.last_success_at), func.max(t.c.last_failure_at))
                           .where(t.c.source == source)).one()
    times = [as_utc(v) for v in row if v is not None]
    return max(times) if times else None
