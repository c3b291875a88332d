"""Price series per import: what a digest reads instead of every observation.

Revision ID: 0010
Revises: 0009

A digest compares the prices in force now with those 24 hours before: per provider, its latest import's
series (GPU × provider × count × tier × market) at their cheapest region, or a marketplace's median. Over a
history of 1,000,000 observations, ~100,000 of them in force, `knowledge.history.prices_at` read and grouped
all of those twice (1.1-1.2 s on SQLite). An import's series prices never change once it is written, so the
importer now stores them beside the observations (`knowledge.price_series`), a few hundred rows per import.

Imports written before this revision have `series_stored` false and get their series on the first read that
needs them (computed from their observations, as before, then stored), so nothing has to be backfilled here.
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

MONEY = sa.Numeric(14, 6)


def upgrade() -> None:
    with op.batch_alter_table("import_run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("series_stored", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_table(
        "price_series",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("import_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("gpu_id", sa.String(), nullable=False),
        sa.Column("provider_id", sa.String(), nullable=False),
        sa.Column("gpu_count", sa.Integer(), nullable=False),
        sa.Column("tier", sa.String(), nullable=False),
        sa.Column("market", sa.String(), nullable=False),
        sa.Column("usd_per_hour", MONEY, nullable=False),
        sa.Column("instance_type", sa.String(), nullable=False),
        sa.Column("region", sa.String(), nullable=False),
        sa.Column("observed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("listings", sa.Integer(), nullable=False),
        sa.Column("p10_usd_per_hour", MONEY, nullable=True),
        sa.ForeignKeyConstraint(["import_id"], ["import_run.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_series_import_gpu", "price_series", ["import_id", "gpu_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_series_import_gpu", table_name="price_series")
    op.drop_table("price_series")
    with op.batch_alter_table("import_run", schema=None) as batch_op:
        batch_op.drop_column("series_stored")
