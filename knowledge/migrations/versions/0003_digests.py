"""Digests and alerts: subscriptions, claimed periods, personal alerts, change hysteresis.

Revision ID: 0003
Revises: 0002
"""

from datetime import datetime

from alembic import op
import sqlalchemy as sa

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

MONEY = sa.Numeric(precision=14, scale=6)


def _utc(name: str, nullable: bool) -> sa.Column[datetime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "digest_subscription",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.String(), nullable=False),
        sa.Column("channel_id", sa.String(), nullable=False),
        sa.Column("cadence", sa.String(), nullable=False),
        sa.Column("local_hour", sa.Integer(), nullable=False),
        sa.Column("local_minute", sa.Integer(), nullable=False),
        sa.Column("timezone", sa.String(), nullable=False),
        sa.Column("weekday", sa.Integer(), nullable=False),
        sa.Column("threshold_pct", MONEY, nullable=False),
        sa.Column("threshold_usd", MONEY, nullable=False),
        sa.Column("gpu_filter", sa.String(), nullable=False),
        sa.Column("language", sa.String(), nullable=False),
        sa.Column("report_empty", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("last_error", sa.String(), nullable=True),
        _utc("last_error_at", True),
        sa.Column("last_period_key", sa.String(), nullable=True),
        _utc("last_prices_at", True),
        sa.Column("created_by", sa.String(), nullable=False),
        _utc("created_at", False),
        _utc("updated_at", False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("team_id", "channel_id", name="uq_digest_channel"),
    )
    op.create_index("ix_digest_subscription_team_id", "digest_subscription", ["team_id"])

    op.create_table(
        "digest_period",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("subscription_id", sa.Integer(), nullable=False),
        sa.Column("period_key", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("claimed_by", sa.String(), nullable=False),
        _utc("claimed_at", False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("message_ts", sa.String(), nullable=True),
        _utc("prices_at", True),
        _utc("finished_at", True),
        sa.Column("error", sa.String(), nullable=True),
        sa.ForeignKeyConstraint(["subscription_id"], ["digest_subscription.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("subscription_id", "period_key", name="uq_digest_period"),
    )
    op.create_index("ix_digest_period_subscription_id", "digest_period", ["subscription_id"])

    op.create_table(
        "price_alert",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.String(), nullable=False),
        sa.Column("user_id", sa.String(), nullable=False),
        sa.Column("gpu_id", sa.String(), nullable=False),
        sa.Column("op", sa.String(), nullable=False),
        sa.Column("usd_per_gpu_hour", MONEY, nullable=False),
        sa.Column("tier", sa.String(), nullable=False),
        sa.Column("language", sa.String(), nullable=False),
        sa.Column("armed", sa.Boolean(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        _utc("last_fired_at", True),
        sa.Column("last_fired_usd", MONEY, nullable=True),
        sa.Column("last_error", sa.String(), nullable=True),
        _utc("created_at", False),
        sa.ForeignKeyConstraint(["gpu_id"], ["gpu.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_price_alert_user", "price_alert", ["team_id", "user_id"])

    op.create_table(
        "change_state",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("subscription_id", sa.Integer(), nullable=False),
        sa.Column("gpu_id", sa.String(), nullable=False),
        sa.Column("provider_id", sa.String(), nullable=False),
        sa.Column("gpu_count", sa.Integer(), nullable=False),
        sa.Column("tier", sa.String(), nullable=False),
        sa.Column("baseline_usd", MONEY, nullable=False),
        sa.Column("previous_usd", MONEY, nullable=True),
        sa.Column("present", sa.Boolean(), nullable=False),
        sa.Column("last_kind", sa.String(), nullable=False),
        _utc("reported_at", True),
        sa.ForeignKeyConstraint(["subscription_id"], ["digest_subscription.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "subscription_id", "gpu_id", "provider_id", "gpu_count", "tier", name="uq_change_state"
        ),
    )
    op.create_index("ix_change_state_subscription_id", "change_state", ["subscription_id"])

    op.create_table(
        "price_source_status",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("provider_id", sa.String(), nullable=False),
        sa.Column("source_version", sa.String(), nullable=True),
        _utc("last_success_at", True),
        _utc("last_failure_at", True),
        sa.Column("last_error", sa.String(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("source", "provider_id", name="uq_price_source"),
    )


def downgrade() -> None:
    op.drop_table("price_source_status")
    op.drop_index("ix_change_state_subscription_id", table_name="change_state")
    op.drop_table("change_state")
    op.drop_index("ix_price_alert_user", table_name="price_alert")
    op.drop_table("price_alert")
    op.drop_index("ix_digest_period_subscription_id", table_name="digest_period")
    op.drop_table("digest_period")
    op.drop_index("ix_digest_subscription_team_id", table_name="digest_subscription")
    op.drop_table("digest_subscription")
