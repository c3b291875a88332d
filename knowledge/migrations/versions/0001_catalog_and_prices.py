"""Catalog and prices: GPUs, aliases, model presets, providers, imports, offers, observations.

Revision ID: 0001
Revises: 
"""

from alembic import op
import sqlalchemy as sa


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('gpu',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('vendor', sa.String(), nullable=False),
    sa.Column('architecture', sa.String(), nullable=False),
    sa.Column('vram_gb', sa.Float(), nullable=False),
    sa.Column('memory_type', sa.String(), nullable=False),
    sa.Column('memory_bandwidth_gbs', sa.Float(), nullable=False),
    sa.Column('bf16_dense_tflops', sa.Float(), nullable=True),
    sa.Column('fp16_dense_tflops', sa.Float(), nullable=False),
    sa.Column('fp8_dense_tflops', sa.Float(), nullable=True),
    sa.Column('fp32_tflops', sa.Float(), nullable=False),
    sa.Column('tdp_w', sa.Integer(), nullable=False),
    sa.Column('release_year', sa.Integer(), nullable=False),
    sa.Column('segment', sa.String(), nullable=False),
    sa.Column('form_factor', sa.String(), nullable=False),
    sa.Column('scaleup_link', sa.String(), nullable=False),
    sa.Column('scaleup_bw_gbs', sa.Float(), nullable=False),
    sa.Column('multinode_fabric', sa.Boolean(), nullable=False),
    sa.Column('mig_instances', sa.Integer(), nullable=False),
    sa.Column('bf16_support', sa.Boolean(), nullable=False),
    sa.Column('fp8_support', sa.Boolean(), nullable=False),
    sa.Column('software_stack', sa.String(), nullable=False),
    sa.Column('purchase_usd', sa.Numeric(precision=14, scale=6), nullable=True),
    sa.Column('source', sa.String(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('import_run',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('source', sa.String(), nullable=False),
    sa.Column('source_version', sa.String(), nullable=False),
    sa.Column('provider_id', sa.String(), nullable=True),
    sa.Column('file_name', sa.String(), nullable=False),
    sa.Column('observed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('imported_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('rows_read', sa.Integer(), nullable=False),
    sa.Column('offers_written', sa.Integer(), nullable=False),
    sa.Column('unmapped_json', sa.String(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('import_run', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_import_run_observed_at'), ['observed_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_import_run_provider_id'), ['provider_id'], unique=False)

    op.create_table('model_preset',
    sa.Column('id', sa.String(length=80), nullable=False),
    sa.Column('name', sa.String(), nullable=False),
    sa.Column('hf_id', sa.String(), nullable=True),
    sa.Column('family', sa.String(), nullable=False),
    sa.Column('kind', sa.String(), nullable=False),
    sa.Column('params_b', sa.Float(), nullable=False),
    sa.Column('active_params_b', sa.Float(), nullable=False),
    sa.Column('layers', sa.Integer(), nullable=False),
    sa.Column('hidden_size', sa.Integer(), nullable=False),
    sa.Column('heads', sa.Integer(), nullable=False),
    sa.Column('kv_heads', sa.Integer(), nullable=False),
    sa.Column('intermediate_size', sa.Integer(), nullable=False),
    sa.Column('vocab_size', sa.Integer(), nullable=False),
    sa.Column('tied_embeddings', sa.Boolean(), nullable=False),
    sa.Column('moe_experts', sa.Integer(), nullable=False),
    sa.Column('moe_active_experts', sa.Integer(), nullable=False),
    sa.Column('max_context', sa.Integer(), nullable=False),
    sa.Column('source', sa.String(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('model_preset', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_model_preset_hf_id'), ['hf_id'], unique=False)

    op.create_table('provider',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('name', sa.String(), nullable=False),
    sa.Column('kind', sa.String(), nullable=False),
    sa.Column('billing_increment_s', sa.Integer(), nullable=False),
    sa.Column('multi_gpu_interconnect', sa.String(), nullable=False),
    sa.Column('source', sa.String(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('gpu_alias',
    sa.Column('alias', sa.String(length=120), nullable=False),
    sa.Column('gpu_id', sa.String(), nullable=False),
    sa.Column('kind', sa.String(), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['gpu_id'], ['gpu.id'], ),
    sa.PrimaryKeyConstraint('alias')
    )
    with op.batch_alter_table('gpu_alias', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_gpu_alias_gpu_id'), ['gpu_id'], unique=False)

    op.create_table('model_alias',
    sa.Column('alias', sa.String(length=160), nullable=False),
    sa.Column('model_id', sa.String(), nullable=False),
    sa.ForeignKeyConstraint(['model_id'], ['model_preset.id'], ),
    sa.PrimaryKeyConstraint('alias')
    )
    with op.batch_alter_table('model_alias', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_model_alias_model_id'), ['model_id'], unique=False)

    op.create_table('offer',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('provider_id', sa.String(), nullable=False),
    sa.Column('instance_type', sa.String(), nullable=False),
    sa.Column('gpu_id', sa.String(), nullable=False),
    sa.Column('gpu_count', sa.Integer(), nullable=False),
    sa.Column('region', sa.String(), nullable=False),
    sa.Column('tier', sa.String(), nullable=False),
    sa.Column('usd_per_hour', sa.Numeric(precision=14, scale=6), nullable=False),
    sa.Column('billing_increment_s', sa.Integer(), nullable=False),
    sa.Column('interconnect', sa.String(), nullable=False),
    sa.Column('observed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('source', sa.String(), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['gpu_id'], ['gpu.id'], ),
    sa.ForeignKeyConstraint(['provider_id'], ['provider.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('provider_id', 'instance_type', 'region', 'tier', name='uq_offer_key')
    )
    with op.batch_alter_table('offer', schema=None) as batch_op:
        batch_op.create_index('ix_offer_gpu_tier', ['gpu_id', 'tier'], unique=False)

    op.create_table('price_observation',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('import_id', sa.Integer(), nullable=False),
    sa.Column('provider_id', sa.String(), nullable=False),
    sa.Column('instance_type', sa.String(), nullable=False),
    sa.Column('gpu_id', sa.String(), nullable=False),
    sa.Column('gpu_count', sa.Integer(), nullable=False),
    sa.Column('region', sa.String(), nullable=False),
    sa.Column('tier', sa.String(), nullable=False),
    sa.Column('usd_per_hour', sa.Numeric(precision=14, scale=6), nullable=False),
    sa.Column('observed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('source', sa.String(), nullable=False),
    sa.Column('source_version', sa.String(), nullable=False),
    sa.ForeignKeyConstraint(['gpu_id'], ['gpu.id'], ),
    sa.ForeignKeyConstraint(['import_id'], ['import_run.id'], ),
    sa.ForeignKeyConstraint(['provider_id'], ['provider.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('price_observation', schema=None) as batch_op:
        batch_op.create_index('ix_obs_gpu_time', ['gpu_id', 'observed_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_price_observation_import_id'), ['import_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('price_observation', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_price_observation_import_id'))
        batch_op.drop_index('ix_obs_gpu_time')

    op.drop_table('price_observation')
    with op.batch_alter_table('offer', schema=None) as batch_op:
        batch_op.drop_index('ix_offer_gpu_tier')

    op.drop_table('offer')
    with op.batch_alter_table('model_alias', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_model_alias_model_id'))

    op.drop_table('model_alias')
    with op.batch_alter_table('gpu_alias', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_gpu_alias_gpu_id'))

    op.drop_table('gpu_alias')
    op.drop_table('provider')
    with op.batch_alter_table('model_preset', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_model_preset_hf_id'))

    op.drop_table('model_preset')
    with op.batch_alter_table('import_run', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_import_run_provider_id'))
        batch_op.drop_index(batch_op.f('ix_import_run_observed_at'))

    op.drop_table('import_run')
    op.drop_table('gpu')
