"""SQLModel tables of digests and alerts: subscriptions, claimed periods, personal alerts, hysteresis, sources."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import Column, DateTime, Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from knowledge.tables import MONEY


def _utc_column(nullable: bool) -> Column[datetime]:
    return Column(DateTime(timezone=True), nullable=nullable)


class DigestSubscription(SQLModel, table=True):
    """One channel's digest settings in one workspace (at most one per channel)."""

    __tablename__ = "digest_subscription"
    __table_args__ = (
        UniqueConstraint("team_id", "channel_id", name="uq_digest_channel"),
        UniqueConstraint("team_id", "short_id", name="uq_digest_short_id"),
    )
    id: int | None = Field(default=None, primary_key=True)
    team_id: str = Field(index=True)
    short_id: int  # the number the workspace sees (1, 2, 3 … per team): `id` would tell how many others have
    channel_id: str
    cadence: str  # daily, weekly
    local_hour: int
    local_minute: int = 0
    timezone: str = "UTC"  # IANA name
    weekday: int = 0  # 0 = Monday; used by weekly
    threshold_pct: Decimal = Field(sa_column=Column(MONEY, nullable=False))
    threshold_usd: Decimal = Field(sa_column=Column(MONEY, nullable=False))
    gpu_filter: str = ""  # comma-separated catalog GPU ids; empty = every GPU
    language: str = "en"
    report_empty: bool = False  # post a short "no changes" message
    status: str = "active"  # active, off
    last_error: str | None = None  # not_in_channel, is_archived, token_revoked ...
    last_error_at: datetime | None = Field(default=None, sa_column=_utc_column(True))
    last_period_key: str | None = None
    last_prices_at: datetime | None = Field(default=None, sa_column=_utc_column(True))
    created_by: str
    created_at: datetime = Field(sa_column=_utc_column(False))
    updated_at: datetime = Field(sa_column=_utc_column(False))


class DigestPeriod(SQLModel, table=True):
    """The exactly-once claim: one row per subscription and period, inserted before posting."""

    __tablename__ = "digest_period"
    __table_args__ = (UniqueConstraint("subscription_id", "period_key", name="uq_digest_period"),)
    id: int | None = Field(default=None, primary_key=True)
    subscription_id: int = Field(foreign_key="digest_subscription.id", index=True)
    period_key: str  # "2025-06-02" (daily) or "2025-W23" (weekly), in the subscription's zone
    status: str = "claimed"  # claimed, posted, empty, failed, retry
    claimed_by: str  # scheduler instance id
    claimed_at: datetime = Field(sa_column=_utc_column(False))
    attempts: int = 1
    message_ts: str | None = None
    prices_at: datetime | None = Field(default=None, sa_column=_utc_column(True))
    finished_at: datetime | None = Field(default=None, sa_column=_utc_column(True))
    error: str | None = None


class PriceAlert(SQLModel, table=True):
    """A personal alert: DM the user once when the cheapest price crosses the line, re-arm when back."""

    __tablename__ = "price_alert"
    __table_args__ = (
        Index("ix_price_alert_user", "team_id", "user_id"),
        UniqueConstraint("team_id", "short_id", name="uq_price_alert_short_id"),
    )
    id: int | None = Field(default=None, primary_key=True)
    team_id: str
    short_id: int  # "alert #3": numbered per team, so no workspace learns how many alerts the others have
    user_id: str
    gpu_id: str = Field(foreign_key="gpu.id")
    op: str  # "<" or ">"
    usd_per_gpu_hour: Decimal = Field(sa_column=Column(MONEY, nullable=False))
    tier: str = "on-demand"
    language: str = "en"
    armed: bool = True
    active: bool = True
    last_fired_at: datetime | None = Field(default=None, sa_column=_utc_column(True))
    last_fired_usd: Decimal | None = Field(default=None, sa_column=Column(MONEY, nullable=True))
    last_error: str | None = None
    created_at: datetime = Field(sa_column=_utc_column(False))


class ChangeState(SQLModel, table=True):
    """Hysteresis: per subscription and series, the price last reported and when it last moved."""

    __tablename__ = "change_state"
    __table_args__ = (
        UniqueConstraint(
            "subscription_id", "gpu_id", "provider_id", "gpu_count", "tier", "market", name="uq_change_state"
        ),
    )
    id: int | None = Field(default=None, primary_key=True)
    subscription_id: int = Field(foreign_key="digest_subscription.id", index=True)
    gpu_id: str
    provider_id: str
    gpu_count: int
    tier: str
    market: str = "on-demand"  # a series is one offer kind: a change never crosses market kinds
    baseline_usd: Decimal = Field(sa_column=Column(MONEY, nullable=False))
    previous_usd: Decimal | None = Field(default=None, sa_column=Column(MONEY, nullable=True))
    present: bool = True  # what the channel was last told: the offer exists
    last_kind: str = ""  # the last reported change: drop, rise, new, gone ("" = none yet)
    reported_at: datetime | None = Field(default=None, sa_column=_utc_column(True))


class PriceSourceStatus(SQLModel, table=True):
    """The health of one live source (gpuhunt provider): a failure keeps the last data, shown with its age."""

    __tablename__ = "price_source_status"
    __table_args__ = (UniqueConstraint("source", "provider_id", name="uq_price_source"),)
    id: int | None = Field(default=None, primary_key=True)
    source: str
    provider_id: str
    source_version: str | None = None
    last_success_at: datetime | None = Field(default=None, sa_column=_utc_column(True))
    last_failure_at: datetime | None = Field(default=None, sa_column=_utc_column(True))
    last_error: str | None = None
