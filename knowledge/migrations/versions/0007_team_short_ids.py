"""Per-workspace numbers for digests and alerts: `short_id`, 1, 2, 3 … within each team.

Revision ID: 0007
Revises: 0006

Users saw the global row id ("alert #1234"), which told one workspace how many alerts all the others
had. Existing rows are numbered per team in the order they were made (their id order), so a
workspace's first alert is #1; the pair (team_id, short_id) is unique. Works on SQLite (batch mode,
migrations/env.py) and PostgreSQL.
"""

from alembic import op
import sqlalchemy as sa

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

TABLES = {"digest_subscription": "uq_digest_short_id", "price_alert": "uq_price_alert_short_id"}


def upgrade() -> None:
    for table, constraint in TABLES.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("short_id", sa.Integer(), nullable=True))
        # A row's number: how many rows of its team were made up to it (ids grow with time).
        op.execute(
            f"UPDATE {table} SET short_id = (SELECT COUNT(*) FROM {table} AS earlier"
            f" WHERE earlier.team_id = {table}.team_id AND earlier.id <= {table}.id)"
        )
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column("short_id", existing_type=sa.Integer(), nullable=False)
            batch_op.create_unique_constraint(constraint, ["team_id", "short_id"])


def downgrade() -> None:
    for table, constraint in TABLES.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_constraint(constraint, type_="unique")
            batch_op.drop_column("short_id")
