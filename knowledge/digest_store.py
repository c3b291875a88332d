"""Stored digest state: subscriptions, the exactly-once period claims, personal alerts, hysteresis, source health."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TypedDict, TypeVar

from sqlalchemy import Engine, ScalarSelect, delete, func, insert, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from knowledge.digest_tables import (
    ChangeState,
    DigestPeriod,
    DigestSubscription,
    PriceAlert,
    PriceSourceStatus,
)
from rules.market.changes import SeriesKey, SeriesState

log = logging.getLogger(__name__)
CLAIM_LEASE = timedelta(minutes=5)  # a claim older than this whose owner never finished is taken over
MAX_ERROR_CHARS = 300
# Why a whole workspace is paused (bot.slack.listeners.lifecycle): its digests are not posted, its alerts do not fire.
PAUSE_REASONS = frozenset({"app_uninstalled", "token_revoked"})
# Two rows numbered at the same moment in one team take the same next number; the loser tries again.
NUMBERING_TRIES = 5
_Row = TypeVar("_Row")


@dataclass(frozen=True, slots=True)
class SubscriptionSettings:
    cadence: str  # daily, weekly
    local_hour: int
    local_minute: int
    timezone: str
    weekday: int
    threshold_pct: Decimal
    threshold_usd: Decimal
    gpu_filter: tuple[str, ...]
    language: str
    report_empty: bool = False


@dataclass(frozen=True, slots=True)
class Claim:
    """This process owns posting one period. `takeover` = an earlier attempt may have posted already."""

    period_id: int
    subscription_id: int
    period_key: str
    attempts: int
    takeover: bool
    claimed_at: datetime


class _SettingsColumns(TypedDict):
    """The columns a (re-)subscription sets: checked against DigestSubscription's fields when unpacked."""

    cadence: str
    local_hour: int
    local_minute: int
    timezone: str
    weekday: int
    threshold_pct: Decimal
    threshold_usd: Decimal
    gpu_filter: str
    language: str
    report_empty: bool
    status: str
    last_error: str | None
    last_error_at: datetime | None
    updated_at: datetime


def stored_id(row: DigestSubscription | PriceAlert) -> int:
    """The primary key of a row read from (or flushed to) the database; SQLModel types it `int | None`."""
    if row.id is None:
        raise ValueError(f"{type(row).__name__} has no id: it was never stored")
    return row.id


def upsert_subscription(
    engine: Engine, *, team_id: str, channel_id: str, settings: SubscriptionSettings, user_id: str, now: datetime
) -> DigestSubscription:
    """Subscribe a channel, or change its settings; a re-subscription clears its last error."""
    return numbered(lambda: _upsert_subscription(engine, team_id=team_id, channel_id=channel_id, settings=settings,
                                                 user_id=user_id, now=now))


def _upsert_subscription(
    engine: Engine, *, team_id: str, channel_id: str, settings: SubscriptionSettings, user_id: str, now: datetime
) -> DigestSubscription:
    values: _SettingsColumns = {
        "cadence": settings.cadence, "local_hour": settings.local_hour, "local_minute": settings.local_minute,
        "timezone": settings.timezone, "weekday": settings.weekday, "threshold_pct": settings.threshold_pct,
        "threshold_usd": settings.threshold_usd, "gpu_filter": ",".join(settings.gpu_filter),
        "language": settings.language, "report_empty": settings.report_empty, "status": "active",
        "last_error": None, "last_error_at": None, "updated_at": now,
    }
    with Session(engine, expire_on_commit=False) as s, s.begin():
        sub = _find(s, team_id, channel_id)
        if sub is None:
            sub = DigestSubscription(
                team_id=team_id, channel_id=channel_id, created_by=user_id, created_at=now, last_prices_at=now,
                short_id=next_short_id(s, DigestSubscription, team_id),  # type: ignore[arg-type]  # SQL run by the INSERT
                **values)
            s.add(sub)
            s.flush()
            s.refresh(sub, ["short_id"])
        else:
            if sub.status == "off" or sub.gpu_filter != values["gpu_filter"]:  # paused → resumed keeps its baseline
                sub.last_prices_at = now  # a (re)started or re-scoped digest starts from today's prices
                s.execute(delete(ChangeState).where(col(ChangeState.subscription_id) == sub.id))
            for k, v in values.items():
                setattr(sub, k, v)
        s.flush()
        return sub


def next_short_id(
    s: Session, table: type[DigestSubscription] | type[PriceAlert], team_id: str
) -> ScalarSelect[int]:
    """The team's next number, one more than its highest, computed by the INSERT itself (rows are switched off,
    not deleted, so no number is reused). SQLite runs that statement under its write lock; on PostgreSQL a
    transaction lock per team and table makes a concurrent numbering in the same team wait for this one."""
    if s.get_bind().dialect.name == "postgresql":
        s.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"{table.__tablename__}:{team_id}"})
    top = select(func.coalesce(func.max(col(table.short_id)), 0) + 1).where(col(table.team_id) == team_id)
    return top.scalar_subquery()


def numbered(write: Callable[[], _Row]) -> _Row:
    """Run a write that numbers a new row, again a moment later if a concurrent write won a unique key first
    (the same channel subscribed twice at once; a number, should the locks above ever be bypassed)."""
    for attempt in range(1, NUMBERING_TRIES + 1):
        try:
            return write()
        except IntegrityError:
            if attempt == NUMBERING_TRIES:
                raise
            log.info("a number was taken by a concurrent write; trying again (%d)", attempt)
            time.sleep(random.uniform(0, 0.01 * attempt))
    raise AssertionError("unreachable")


def _find(s: Session, team_id: str, channel_id: str) -> DigestSubscription | None:
    q = select(DigestSubscription).where(col(DigestSubscription.team_id) == team_id, col(DigestSubscription.channel_id) == channel_id)
    return s.execute(q).scalars().first()


def find_subscription(engine: Engine, team_id: str, channel_id: str) -> DigestSubscription | None:
    with Session(engine, expire_on_commit=False) as s:
        return _find(s, team_id, channel_id)


def turn_off(engine: Engine, *, team_id: str, channel_id: str, now: datetime) -> bool:
    """Unsubscribe a channel; False when it had no active digest."""
    with Session(engine) as s, s.begin():
        sub = _find(s, team_id, channel_id)
        if sub is None or sub.status not in ("active", "paused"):
            return False
        sub.status, sub.updated_at = "off", now
        return True


def list_subscriptions(
    engine: Engine, *, team_id: str | None = None, active_only: bool = True, include_paused: bool = False
) -> list[DigestSubscription]:
    """Subscriptions of one workspace (or all, for the scheduler), oldest first; paused ones only when asked."""
    q = select(DigestSubscription).order_by(col(DigestSubscription.id))
    if team_id is not None:
        q = q.where(col(DigestSubscription.team_id) == team_id)
    if active_only:
        wanted = ("active", "paused") if include_paused else ("active",)
        q = q.where(col(DigestSubscription.status).in_(wanted))
    with Session(engine, expire_on_commit=False) as s:
        return list(s.execute(q).scalars())


def record_error(engine: Engine, subscription_id: int, error: str | None, now: datetime) -> None:
    """Remember (or clear, with None) the delivery error shown in App Home."""
    with Session(engine) as s, s.begin():
        s.execute(
            update(DigestSubscription).where(col(DigestSubscription.id) == subscription_id)
            .values(last_error=error[:MAX_ERROR_CHARS] if error else None, last_error_at=now if error else None)
        )


def claim_period(
    engine: Engine, *, subscription_id: int, period_key: str, worker: str, now: datetime, lease: timedelta = CLAIM_LEASE
) -> Claim | None:
    """Claim one period before posting: a unique row. None when another process holds or finished it."""
    try:
        with Session(engine) as s, s.begin():
            row = DigestPeriod(subscription_id=subscription_id, period_key=period_key, claimed_by=worker, claimed_at=now)
            s.add(row)
            s.flush()
            assert row.id is not None
            return Claim(row.id, subscription_id, period_key, 1, False, now)
    except IntegrityError:
        return _take_over(engine, subscription_id, period_key, worker, now, lease)


def _take_over(engine: Engine, subscription_id: int, period_key: str, worker: str, now: datetime, lease: timedelta) -> Claim | None:
    """Take a period whose attempt failed transiently, or whose owner died (lease expired): compare-and-swap."""
    with Session(engine) as s, s.begin():
        row = s.execute(
            select(DigestPeriod).where(col(DigestPeriod.subscription_id) == subscription_id, col(DigestPeriod.period_key) == period_key)
        ).scalars().first()
        if row is None or row.id is None:
            return None
        claimed_at = row.claimed_at if row.claimed_at.tzinfo else row.claimed_at.replace(tzinfo=now.tzinfo)
        stale = row.status == "claimed" and now - claimed_at >= lease
        if row.status != "retry" and not stale:
            return None
        result = s.exec(
            update(DigestPeriod)
            .where(col(DigestPeriod.id) == row.id, col(DigestPeriod.attempts) == row.attempts, col(DigestPeriod.status) == row.status)
            .values(status="claimed", claimed_by=worker, claimed_at=now, attempts=row.attempts + 1)
        )
        if result.rowcount != 1:
            return None
        return Claim(row.id, subscription_id, period_key, row.attempts + 1, True, now)


def finish_period(
    engine: Engine,
    claim: Claim,
    *,
    status: str,
    now: datetime,
    message_ts: str | None = None,
    error: str | None = None,
    prices_at: datetime | None = None,
    states: Mapping[SeriesKey, SeriesState] | None = None,
    move_baseline: bool = True,
) -> None:
    """Record the outcome. posted/empty also move the channel's baseline (what it was told) forward,
    unless `move_baseline` is False (a late-recovered period older than one already delivered)."""
    with Session(engine) as s, s.begin():
        s.execute(
            update(DigestPeriod).where(col(DigestPeriod.id) == claim.period_id)
            .values(status=status, message_ts=message_ts, error=error[:MAX_ERROR_CHARS] if error else None,
                    finished_at=now, prices_at=prices_at)
        )
        if status in ("posted", "empty") and move_baseline:
            s.execute(
                update(DigestSubscription).where(col(DigestSubscription.id) == claim.subscription_id)
                .values(last_period_key=claim.period_key, last_prices_at=prices_at or now, last_error=None, last_error_at=None)
            )
            if states is not None:
                _save_states(s, claim.subscription_id, states)


def _save_states(s: Session, subscription_id: int, states: Mapping[SeriesKey, SeriesState]) -> None:
    s.execute(delete(ChangeState).where(col(ChangeState.subscription_id) == subscription_id))
    rows = [
        {"subscription_id": subscription_id, "gpu_id": k.gpu_id, "provider_id": k.provider_id, "gpu_count": k.gpu_count,
         "tier": k.tier, "market": k.market, "baseline_usd": v.baseline_usd, "previous_usd": v.previous_usd, "present": v.present,
         "last_kind": v.last_kind, "reported_at": v.reported_at}
        for k, v in states.items()
    ]
    if rows:
        s.execute(insert(ChangeState), rows)


def load_states(engine: Engine, subscription_id: int) -> dict[SeriesKey, SeriesState]:
    """What the channel was last told, per series; empty before its first digest."""
    from knowledge.db import as_utc

    with Session(engine) as s:
        rows = s.execute(select(ChangeState).where(col(ChangeState.subscription_id) == subscription_id)).scalars().all()
        return {
            SeriesKey(r.gpu_id, r.provider_id, r.gpu_count, r.tier, r.market): SeriesState(
                Decimal(r.baseline_usd), r.present, None if r.previous_usd is None else Decimal(r.previous_usd),
                r.last_kind, None if r.reported_at is None else as_utc(r.reported_at),
            )
            for r in rows
        }


def take_over_period(
    engine: Engine, *, subscription_id: int, period_key: str, worker: str, now: datetime, lease: timedelta = CLAIM_LEASE
) -> Claim | None:
    """Take an existing period row left `retry`, or `claimed` by an owner whose lease ran out (compare-and-swap)."""
    return _take_over(engine, subscription_id, period_key, worker, now, lease)


def stuck_periods(engine: Engine, subscription_id: int, *, now: datetime, lease: timedelta = CLAIM_LEASE) -> list[DigestPeriod]:
    """Periods of a subscription left `retry`, or `claimed` longer than the lease: oldest first."""
    from knowledge.db import as_utc

    q = select(DigestPeriod).where(col(DigestPeriod.subscription_id) == subscription_id,
                                   col(DigestPeriod.status).in_(("claimed", "retry")))
    with Session(engine, expire_on_commit=False) as s:
        rows = list(s.execute(q.order_by(col(DigestPeriod.id))).scalars())
    return [r for r in rows if r.status == "retry" or now - as_utc(r.claimed_at) >= lease]


def delivered_after(engine: Engine, subscription_id: int, period_id: int) -> bool:
    """Whether a later period of the subscription was already posted or found empty."""
    q = select(col(DigestPeriod.id)).where(col(DigestPeriod.subscription_id) == subscription_id, col(DigestPeriod.id) > period_id,
                                      col(DigestPeriod.status).in_(("posted", "empty")))
    with Session(engine) as s:
        return s.execute(q.limit(1)).first() is not None


def get_subscription(engine: Engine, subscription_id: int) -> DigestSubscription | None:
    with Session(engine, expire_on_commit=False) as s:
        return s.get(DigestSubscription, subscription_id)


def recent_missed(engine: Engine, *, team_id: str, since: datetime) -> list[tuple[str, str]]:
    """(channel, period) of the workspace's digests marked missed since a time, newest first."""
    q = (select(col(DigestSubscription.channel_id), col(DigestPeriod.period_key))
         .join(DigestSubscription, col(DigestSubscription.id) == col(DigestPeriod.subscription_id))
         .where(col(DigestSubscription.team_id) == team_id, col(DigestPeriod.status) == "missed",
                col(DigestPeriod.finished_at) >= since)
         .order_by(col(DigestPeriod.id).desc()))
    with Session(engine) as s:
        return [(c, k) for c, k in s.execute(q)]


def period_rows(engine: Engine, subscription_id: int | None = None) -> list[DigestPeriod]:
    q = select(DigestPeriod).order_by(col(DigestPeriod.id))
    if subscription_id is not None:
        q = q.where(col(DigestPeriod.subscription_id) == subscription_id)
    with Session(engine, expire_on_commit=False) as s:
        return list(s.execute(q).scalars())


def record_source(engine: Engine, *, source: str, provider_id: str, now: datetime, version: str | None = None, error: str | None = None) -> None:
    """Remember a live source's last success (with its version) or failure (with the error)."""
    with Session(engine) as s, s.begin():
        row = s.execute(
            select(PriceSourceStatus).where(col(PriceSourceStatus.source) == source, col(PriceSourceStatus.provider_id) == provider_id)
        ).scalars().first()
        if row is None:
            row = PriceSourceStatus(source=source, provider_id=provider_id)
            s.add(row)
        if error is None:
            row.last_success_at, row.source_version, row.last_error = now, version, None
        else:
            row.last_failure_at, row.last_error = now, error[:MAX_ERROR_CHARS]


def add_alert(
    engine: Engine, *, team_id: str, user_id: str, gpu_id: str, op: str, usd_per_gpu_hour: Decimal, language: str, now: datetime
) -> PriceAlert:
    """A personal alert, armed: it fires once when the price crosses the line; numbered within the team."""

    def write() -> PriceAlert:
        with Session(engine, expire_on_commit=False) as s, s.begin():
            alert = PriceAlert(
                team_id=team_id, user_id=user_id, gpu_id=gpu_id, op=op, usd_per_gpu_hour=usd_per_gpu_hour,
                language=language, created_at=now,
                short_id=next_short_id(s, PriceAlert, team_id),  # type: ignore[arg-type]  # SQL run by the INSERT
            )
            s.add(alert)
            s.flush()
            s.refresh(alert, ["short_id"])
            return alert

    return numbered(write)


def list_alerts(engine: Engine, *, team_id: str | None = None, user_id: str | None = None, active_only: bool = True) -> list[PriceAlert]:
    q = select(PriceAlert).order_by(col(PriceAlert.id))
    if team_id is not None:
        q = q.where(col(PriceAlert.team_id) == team_id)
    if user_id is not None:
        q = q.where(col(PriceAlert.user_id) == user_id)
    if active_only:
        q = q.where(col(PriceAlert.active) == True)
    with Session(engine, expire_on_commit=False) as s:
        return list(s.execute(q).scalars())


def turn_alert_off(engine: Engine, *, team_id: str, user_id: str, short_id: int) -> bool:
    """Switch off one of the user's own alerts by its number in the team; False when it is not theirs or already off."""
    with Session(engine) as s, s.begin():
        result = s.exec(
            update(PriceAlert)
            .where(col(PriceAlert.short_id) == short_id, col(PriceAlert.team_id) == team_id,
                   col(PriceAlert.user_id) == user_id,
                   col(PriceAlert.active) == True)
            .values(active=False)
        )
        return result.rowcount == 1


def fire_alert(engine: Engine, alert_id: int, *, usd: Decimal, now: datetime) -> bool:
    """Disarm before sending (compare-and-swap): only one process wins the right to DM."""
    with Session(engine) as s, s.begin():
        result = s.exec(
            update(PriceAlert).where(col(PriceAlert.id) == alert_id, col(PriceAlert.armed) == True)
            .values(armed=False, last_fired_at=now, last_fired_usd=usd, last_error=None)
        )
        return result.rowcount == 1


def rearm_alert(engine: Engine, alert_id: int, *, error: str | None = None, armed: bool = True) -> None:
    """Arm again: the price went back (or the DM failed: kept with its error, armed to retry if transient)."""
    with Session(engine) as s, s.begin():
        s.execute(
            update(PriceAlert).where(col(PriceAlert.id) == alert_id)
            .values(armed=armed, last_error=error[:MAX_ERROR_CHARS] if error else None)
        )


@dataclass(frozen=True, slots=True)
class Paused:
    """What `pause_workspace` / `resume_workspace` changed."""

    subscriptions: int
    alerts: int


def pause_workspace(engine: Engine, *, team_id: str, reason: str, now: datetime | None = None) -> Paused:
    """The app was uninstalled or its bot token revoked: pause the workspace's digests and alerts with the reason.

    Paused digests are not posted (no period is claimed, so none is lost or doubled) and alerts do not
    fire; both stay listed with the reason (App Home). `resume_workspace` (after a reinstall) or
    subscribing the channel again brings them back.
    """
    now = now or datetime.now(UTC)
    why = reason[:MAX_ERROR_CHARS]
    with Session(engine) as s, s.begin():
        subs = s.exec(
            update(DigestSubscription)
            .where(col(DigestSubscription.team_id) == team_id, col(DigestSubscription.status).in_(("active", "paused")))
            .values(status="paused", last_error=why, last_error_at=now)
        )
        alerts = s.exec(
            update(PriceAlert)
            .where(col(PriceAlert.team_id) == team_id, col(PriceAlert.active) == True)
            .values(armed=False, last_error=why)
        )
        return Paused(subs.rowcount, alerts.rowcount)


def resume_workspace(engine: Engine, *, team_id: str, now: datetime | None = None) -> Paused:
    """Undo `pause_workspace` (the app is installed again): digests active, alerts armed, reasons cleared."""
    now = now or datetime.now(UTC)
    with Session(engine) as s, s.begin():
        reasons = set(PAUSE_REASONS) | {r for (r,) in s.execute(
            select(col(DigestSubscription.last_error))
            .where(col(DigestSubscription.team_id) == team_id, col(DigestSubscription.status) == "paused")) if r}
        subs = s.exec(
            update(DigestSubscription)
            .where(col(DigestSubscription.team_id) == team_id, col(DigestSubscription.status) == "paused")
            .values(status="active", last_error=None, last_error_at=None, updated_at=now)
        )
        alerts = s.exec(
            update(PriceAlert)
            .where(col(PriceAlert.team_id) == team_id, col(PriceAlert.active) == True,
                   col(PriceAlert.last_error).in_(reasons))
            .values(armed=True, last_error=None)
        )
        return Paused(subs.rowcount, alerts.rowcount)


def paused_teams(engine: Engine) -> dict[str, datetime]:
    """Workspaces with paused digests → when they were paused (the scheduler resumes them after a reinstall)."""
    from knowledge.db import as_utc

    q = select(col(DigestSubscription.team_id), col(DigestSubscription.last_error_at)).where(col(DigestSubscription.status) == "paused")
    out: dict[str, datetime] = {}
    with Session(engine) as s:
        for team_id, at in s.execute(q):
            when = as_utc(at) if at is not None else datetime.min.replace(tzinfo=UTC)
            out[team_id] = max(out.get(team_id, when), when)
    return out
