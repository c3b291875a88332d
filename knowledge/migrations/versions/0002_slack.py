"""Slack app state: installations, OAuth state, event dedupe, threads, user preferences.

Revision ID: 0002
Revises: 0001
"""

from datetime import datetime

from alembic import op
import sqlalchemy as sa

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def _when(name: str, *, nullable: bool) -> sa.Column[datetime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "slack_installation",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("client_id", sa.String(), nullable=False),
        sa.Column("app_id", sa.String(), nullable=True),
        sa.Column("enterprise_id", sa.String(), nullable=False),
        sa.Column("enterprise_name", sa.String(), nullable=True),
        sa.Column("enterprise_url", sa.String(), nullable=True),
        sa.Column("team_id", sa.String(), nullable=False),
        sa.Column("team_name", sa.String(), nullable=True),
        sa.Column("user_id", sa.String(), nullable=False),
        sa.Column("bot_token", sa.String(), nullable=True),
        sa.Column("bot_id", sa.String(), nullable=True),
        sa.Column("bot_user_id", sa.String(), nullable=True),
        sa.Column("bot_scopes", sa.String(), nullable=True),
        sa.Column("bot_refresh_token", sa.String(), nullable=True),
        _when("bot_token_expires_at", nullable=True),
        sa.Column("user_token", sa.String(), nullable=True),
        sa.Column("user_scopes", sa.String(), nullable=True),
        sa.Column("user_refresh_token", sa.String(), nullable=True),
        _when("user_token_expires_at", nullable=True),
        sa.Column("incoming_webhook_url", sa.String(), nullable=True),
        sa.Column("incoming_webhook_channel", sa.String(), nullable=True),
        sa.Column("incoming_webhook_channel_id", sa.String(), nullable=True),
        sa.Column("incoming_webhook_configuration_url", sa.String(), nullable=True),
        sa.Column("is_enterprise_install", sa.Boolean(), nullable=False),
        sa.Column("token_type", sa.String(), nullable=True),
        _when("installed_at", nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "client_id", "enterprise_id", "team_id", "user_id", name="uq_slack_installation_key"
        ),
    )
    op.create_table(
        "slack_bot",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("client_id", sa.String(), nullable=False),
        sa.Column("app_id", sa.String(), nullable=True),
        sa.Column("enterprise_id", sa.String(), nullable=False),
        sa.Column("enterprise_name", sa.String(), nullable=True),
        sa.Column("team_id", sa.String(), nullable=False),
        sa.Column("team_name", sa.String(), nullable=True),
        sa.Column("bot_token", sa.String(), nullable=False),
        sa.Column("bot_id", sa.String(), nullable=True),
        sa.Column("bot_user_id", sa.String(), nullable=True),
        sa.Column("bot_scopes", sa.String(), nullable=True),
        sa.Column("bot_refresh_token", sa.String(), nullable=True),
        _when("bot_token_expires_at", nullable=True),
        sa.Column("is_enterprise_install", sa.Boolean(), nullable=False),
        _when("installed_at", nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("client_id", "enterprise_id", "team_id", name="uq_slack_bot_key"),
    )
    op.create_table(
        "slack_oauth_state",
        sa.Column("state", sa.String(length=200), nullable=False),
        _when("expires_at", nullable=False),
        sa.PrimaryKeyConstraint("state"),
    )
    op.create_index("ix_slack_oauth_state_expires_at", "slack_oauth_state", ["expires_at"])
    op.create_table(
        "slack_delivery",
        sa.Column("key", sa.String(length=200), nullable=False),
        _when("claimed_at", nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_index("ix_slack_delivery_claimed_at", "slack_delivery", ["claimed_at"])
    op.create_table(
        "slack_thread",
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("channel_id", sa.String(length=32), nullable=False),
        sa.Column("thread_ts", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(), nullable=False),
        sa.Column("language", sa.String(), nullable=False),
        sa.Column("state_json", sa.String(), nullable=False),
        _when("updated_at", nullable=False),
        sa.PrimaryKeyConstraint("team_id", "channel_id", "thread_ts"),
    )
    op.create_index("ix_slack_thread_updated_at", "slack_thread", ["updated_at"])
    op.create_table(
        "slack_user_pref",
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("language_override", sa.String(), nullable=True),
        sa.Column("slack_locale", sa.String(), nullable=True),
        _when("locale_checked_at", nullable=True),
        sa.PrimaryKeyConstraint("team_id", "user_id"),
    )


def downgrade() -> None:
    op.drop_table("slack_user_pref")
    op.drop_index("ix_slack_thread_updated_at", table_name="slack_thread")
    op.drop_table("slack_thread")
    op.drop_index("ix_slack_delivery_claimed_at", table_name="slack_delivery")
    op.drop_table("slack_delivery")
    op.drop_index("ix_slack_oauth_state_expires_at", table_name="slack_oauth_state")
    op.drop_table("slack_oauth_state")
    op.drop_table("slack_bot")
    op.drop_table("slack_installation")
