"""Prices a team can trust: market kind on offers and observations, bundled/current imports, change-state market.

Revision ID: 0005
Revises: 0004

Every new column has a server default, so rows written before this revision stay valid: an offer or an
observation was on-demand unless its tier says spot (set below), an import was a user's unless its source
version is a bundled snapshot's, and each import was current.
"""

from alembic import op
import sqlalchemy as sa

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("offer", "price_observation"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("market", sa.String(), nullable=False, server_default="on-demand"))
        op.execute(f"UPDATE {table} SET market = tier WHERE tier IN ('spot', 'reserved')")
    with op.batch_alter_table("import_run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("bundled", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column("skipped_json", sa.String(), nullable=False, server_default="{}"))
        batch_op.add_column(sa.Column("current", sa.Boolean(), nullable=False, server_default=sa.true()))
    with op.batch_alter_table("change_state", schema=None) as batch_op:
        batch_op.add_column(sa.Column("market", sa.String(), nullable=False, server_default="on-demand"))
        batch_op.drop_constraint("uq_change_state", type_="unique")
        batch_op.create_unique_constraint(
            "uq_change_state", ["subscription_id", "gpu_id", "provider_id", "gpu_count", "tier", "market"])


def downgrade() -> None:
    with op.batch_alter_table("change_state", schema=None) as batch_op:
        batch_op.drop_constraint("uq_change_state", type_="unique")
        batch_op.create_unique_constraint("uq_change_state", ["subscription_id", "gpu_id", "provider_id", "gpu_count", "tier"])
        batch_op.drop_column("market")
    with op.batch_alter_table("import_run", schema=None) as batch_op:
        for name in ("current", "skipped_json", "bundled"):
            batch_op.drop_column(name)
    for table in ("price_observation", "offer"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("market")
