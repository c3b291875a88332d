"""Wider catalog: unified memory, laptop and modified GPUs, dated purchase prices; model shape fields.

Revision ID: 0004
Revises: 0003

Also adds `hub_model`, the cache of Hugging Face configs read by `knowledge.hub`.
Every new catalog column has a server default, so rows loaded before this revision stay valid
until `db upgrade` reloads the data files.
"""

from alembic import op
import sqlalchemy as sa

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

def _gpu_columns() -> tuple[sa.Column[object], ...]:
    return (
        sa.Column("unified_memory", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("gpu_usable_fraction", sa.Float(), nullable=False, server_default="1.0"),
        sa.Column("laptop", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("modified", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("purchase_date", sa.Date(), nullable=True),
        sa.Column("purchase_source", sa.String(), nullable=True),
    )


def _model_columns() -> tuple[sa.Column[object], ...]:
    return (
        sa.Column("head_dim", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("kv_lora_rank", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("qk_rope_head_dim", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("native_dtype", sa.String(), nullable=False, server_default="bf16"),
        sa.Column("sliding_window", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("sliding_layers", sa.Integer(), nullable=False, server_default="0"),
    )


def upgrade() -> None:
    with op.batch_alter_table("gpu", schema=None) as batch_op:
        for column in _gpu_columns():
            batch_op.add_column(column)
    with op.batch_alter_table("model_preset", schema=None) as batch_op:
        for column in _model_columns():
            batch_op.add_column(column)
    op.create_table(
        "hub_model",
        sa.Column("hf_id", sa.String(length=200), nullable=False),
        sa.Column("revision", sa.String(), nullable=False),
        sa.Column("config_json", sa.Text(), nullable=False),
        sa.Column("params_by_dtype_json", sa.Text(), nullable=False),
        sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("hf_id"),
    )


def downgrade() -> None:
    op.drop_table("hub_model")
    with op.batch_alter_table("model_preset", schema=None) as batch_op:
        for column in reversed(_model_columns()):
            batch_op.drop_column(column.name)
    with op.batch_alter_table("gpu", schema=None) as batch_op:
        for column in reversed(_gpu_columns()):
            batch_op.drop_column(column.name)
