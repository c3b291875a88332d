"""The answer queue's records (dedupe on Slack's ids), worker heartbeats, shared rate-limit slots.

Revision ID: 0006
Revises: 0005

A message's delivery claim (slack_delivery) names the queued request that made it, so a re-run
of that request after a crash or a 429 is not taken for a duplicate. Also: OAuth `state` values are kept as SHA-256 digests from now on (pending installs of the
last ten minutes are forgotten and simply start again). Tokens stored before this revision are
encrypted at the next start (knowledge.slack_secrets.encrypt_stored_secrets); no key is known here.
"""

from datetime import datetime

from alembic import op
import sqlalchemy as sa

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def _when(name: str, *, nullable: bool) -> sa.Column[datetime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "slack_request",
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("body", sa.String(), nullable=False),
        sa.Column("headers_json", sa.String(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.String(length=64), nullable=True),
        _when("not_before", nullable=True),
        sa.Column("slot_at", sa.Float(), nullable=True),
        sa.Column("outcome", sa.String(length=64), nullable=True),
        _when("created_at", nullable=False),
        _when("updated_at", nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_index("ix_slack_request_team_id", "slack_request", ["team_id"])
    op.create_index("ix_slack_request_state", "slack_request", ["state"])
    op.create_index("ix_slack_request_updated_at", "slack_request", ["updated_at"])
    op.create_table(
        "queue_worker",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        _when("started_at", nullable=False),
        _when("beat_at", nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_queue_worker_beat_at", "queue_worker", ["beat_at"])
    op.create_table(
        "slack_rate_slot",
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("next_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.execute("DELETE FROM slack_oauth_state")  # clear values; digests from now on
    with op.batch_alter_table("slack_delivery") as batch:
        batch.add_column(sa.Column("owner", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("slack_delivery") as batch:
        batch.drop_column("owner")
    op.drop_table("slack_rate_slot")
    op.drop_index("ix_queue_worker_beat_at", table_name="queue_worker")
    op.drop_table("queue_worker")
    op.drop_index("ix_slack_request_updated_at", table_name="slack_request")
    op.drop_index("ix_slack_request_state", table_name="slack_request")
    op.drop_index("ix_slack_request_team_id", table_name="slack_request")
    op.drop_table("slack_request")
