"""Catalog stamp: a number the database bumps on every change to what a snapshot reads (SQLite).

Revision ID: 0009
Revises: 0008

`gpu-advisor ask` keeps the snapshot it built in a file beside a SQLite database (knowledge.snapshot_cache)
and uses it again while this stamp is unchanged, so a warm start needs neither SQLAlchemy nor the catalog
queries. Triggers on every table the snapshot reads bump `version` in the writing transaction itself, so no
writer can forget to; `token` is drawn when the database is made, so a new database never matches an old
file. SQLite only: PostgreSQL gets the table (one schema for both) but no row and no triggers, and a
missing row means "no stamp" (servers read their snapshot once at start; a single hot row would make
concurrent imports wait on each other there).
"""

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

TABLES = ("gpu", "gpu_alias", "model_preset", "model_alias", "provider", "offer")
EVENTS = ("INSERT", "UPDATE", "DELETE")


def trigger_names() -> list[str]:
    return [f"catalog_stamp_{table}_{event.lower()}" for table in TABLES for event in EVENTS]


def upgrade() -> None:
    op.create_table(
        "catalog_stamp",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute(sa.text("INSERT INTO catalog_stamp (id, token, version) VALUES (1, :token, 0)")
               .bindparams(token=uuid.uuid4().hex))
    for table in TABLES:
        for event in EVENTS:
            op.execute(f"CREATE TRIGGER catalog_stamp_{table}_{event.lower()} AFTER {event} ON {table} "
                       "BEGIN UPDATE catalog_stamp SET version = version + 1 WHERE id = 1; END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in trigger_names():
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.drop_table("catalog_stamp")
