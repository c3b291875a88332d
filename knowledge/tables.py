"""SQLModel tables of the catalog and prices. Rows are validated through the `XBase` models first."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from sqlalchemy import Column, Index, Numeric, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

MONEY = Numeric(14, 6)
SOFTWARE_STACKS = r"^(CUDA|ROCm|MLX/Metal|XLA|Neuron|Gaudi|oneAPI)$"
MODEL_KINDS = r"^(llm|vlm|speech|encoder|encoder-decoder|embedding|diffusion)$"
DTYPES = r"^(fp32|bf16|fp16|fp8|int8|int4|mxfp4|nvfp4)$"


class GpuBase(SQLModel):
    id: str = Field(primary_key=True, min_length=2, max_length=64, regex=r"^[a-z0-9][a-z0-9.\-]*$")
    name: str = Field(min_length=2, max_length=80)
    vendor: str = Field(min_length=2)
    architecture: str = Field(min_length=2)
    vram_gb: float = Field(gt=0, le=1024)
    memory_type: str = Field(min_length=3)
    memory_bandwidth_gbs: float = Field(gt=0)
    bf16_dense_tflops: float | None = Field(default=None, gt=0)
    fp16_dense_tflops: float = Field(gt=0)
    fp8_dense_tflops: float | None = Field(default=None, gt=0)
    fp32_tflops: float = Field(gt=0)
    tdp_w: int = Field(ge=0, le=3000)  # 0 = not published (TPU, Trainium)
    release_year: int = Field(ge=2014, le=2030)
    segment: str = Field(regex=r"^(consumer|workstation|datacenter)$")
    form_factor: str = Field(min_length=2)
    scaleup_link: str = Field(min_length=2)
    scaleup_bw_gbs: float = Field(ge=0)
    multinode_fabric: bool
    mig_instances: int = Field(ge=0, le=8)
    bf16_support: bool
    fp8_support: bool
    software_stack: str = Field(regex=SOFTWARE_STACKS)
    purchase_usd: Decimal | None = Field(default=None, ge=0, sa_column_kwargs={})
    source: str = Field(min_length=8)
    unified_memory: bool = False
    gpu_usable_fraction: float = Field(default=1.0, gt=0, le=1)
    laptop: bool = False
    modified: bool = False
    purchase_date: date | None = None
    purchase_source: str | None = Field(default=None, min_length=8)


class Gpu(GpuBase, table=True):
    __tablename__ = "gpu"
    purchase_usd: Decimal | None = Field(default=None, sa_column=Column(MONEY, nullable=True))


class GpuAliasBase(SQLModel):
    alias: str = Field(primary_key=True, min_length=1, max_length=120)  # normalised form
    gpu_id: str = Field(foreign_key="gpu.id", index=True)
    kind: str = Field(default="user", regex=r"^(user|cloud|instance)$")
    count: int = Field(default=0, ge=0)  # GPUs implied by an instance name, 0 = not implied


class GpuAlias(GpuAliasBase, table=True):
    __tablename__ = "gpu_alias"


class ModelPresetBase(SQLModel):
    id: str = Field(primary_key=True, min_length=2, max_length=80, regex=r"^[a-z0-9][a-z0-9.\-]*$")
    name: str = Field(min_length=2)
    hf_id: str | None = Field(default=None, index=True)
    family: str = Field(min_length=2)
    kind: str = Field(regex=MODEL_KINDS)
    params_b: float = Field(gt=0, le=5000)
    active_params_b: float = Field(gt=0, le=5000)
    layers: int = Field(gt=0)
    hidden_size: int = Field(gt=0)
    heads: int = Field(gt=0)
    kv_heads: int = Field(gt=0)
    intermediate_size: int = Field(gt=0)
    vocab_size: int = Field(ge=0)
    tied_embeddings: bool
    moe_experts: int = Field(ge=0)
    moe_active_experts: int = Field(ge=0)
    max_context: int = Field(ge=0)
    source: str = Field(min_length=8)
    head_dim: int = Field(default=0, ge=0)
    kv_lora_rank: int = Field(default=0, ge=0)
    qk_rope_head_dim: int = Field(default=0, ge=0)
    native_dtype: str = Field(default="bf16", regex=DTYPES)
    sliding_window: int = Field(default=0, ge=0)
    sliding_layers: int = Field(default=0, ge=0)


class ModelPreset(ModelPresetBase, table=True):
    __tablename__ = "model_preset"


class ModelAliasBase(SQLModel):
    alias: str = Field(primary_key=True, min_length=1, max_length=160)  # normalised form
    model_id: str = Field(foreign_key="model_preset.id", index=True)


class ModelAlias(ModelAliasBase, table=True):
    __tablename__ = "model_alias"


class ProviderBase(SQLModel):
    id: str = Field(primary_key=True, min_length=2, max_length=40, regex=r"^[a-z0-9][a-z0-9\-]*$")
    name: str = Field(min_length=2)
    kind: str = Field(regex=r"^(cloud|marketplace|neocloud)$")
    billing_increment_s: int = Field(gt=0, le=86400)
    multi_gpu_interconnect: str = Field(min_length=2)
    source: str = Field(min_length=8)


class Provider(ProviderBase, table=True):
    __tablename__ = "provider"


class ImportRun(SQLModel, table=True):
    """One import of a price file or live refresh: the unit that is all-or-nothing."""

    __tablename__ = "import_run"
    id: int | None = Field(default=None, primary_key=True)
    source: str  # "skypilot", "csv", "json", "gpuhunt"
    source_version: str  # commit, file hash or library version
    provider_id: str | None = Field(default=None, index=True)
    file_name: str
    observed_at: datetime = Field(index=True)
    imported_at: datetime
    rows_read: int = 0
    offers_written: int = 0
    unmapped_json: str = "{}"  # {"accelerator name": rows}
    # A snapshot shipped with the release: a baseline only. It never replaces a user's or a live source's
    # prices, and never produces a digest change on its own (knowledge.history).
    bundled: bool = False
    skipped_json: str = "{}"  # rows read but not kept, by reason: {"no_host_vm": 12, ...}
    current: bool = True  # False: older than the feed's data in force, kept as history only
    # Its series prices are stored in price_series (migration 0010); older imports get them on first read.
    series_stored: bool = False


class Offer(SQLModel, table=True):
    """The latest observed price of one rentable configuration."""

    __tablename__ = "offer"
    __table_args__ = (
        UniqueConstraint("provider_id", "instance_type", "region", "tier", name="uq_offer_key"),
        Index("ix_offer_gpu_tier", "gpu_id", "tier"),
    )
    id: int | None = Field(default=None, primary_key=True)
    provider_id: str = Field(foreign_key="provider.id")
    instance_type: str
    gpu_id: str = Field(foreign_key="gpu.id")
    gpu_count: int = Field(gt=0)
    region: str
    tier: str  # on-demand, spot, reserved
    usd_per_hour: Decimal = Field(sa_column=Column(MONEY, nullable=False))
    billing_increment_s: int
    interconnect: str
    observed_at: datetime
    source: str
    active: bool = True  # False when the latest import of this provider no longer lists it
    market: str = "on-demand"  # rules.types.Market


class PriceObservation(SQLModel, table=True):
    """Every price ever seen, so prices have a history."""

    __tablename__ = "price_observation"
    __table_args__ = (
        Index("ix_obs_gpu_time", "gpu_id", "observed_at"),
        # Covers knowledge.history.daily_cheapest's GROUP BY import, GPU (migration 0008).
        Index("ix_obs_import_gpu_price", "import_id", "gpu_id", "tier", "usd_per_hour", "gpu_count", "instance_type"),
    )
    id: int | None = Field(default=None, primary_key=True)
    import_id: int = Field(foreign_key="import_run.id", index=True)
    provider_id: str = Field(foreign_key="provider.id")
    instance_type: str
    gpu_id: str = Field(foreign_key="gpu.id")
    gpu_count: int
    region: str
    tier: str
    usd_per_hour: Decimal = Field(sa_column=Column(MONEY, nullable=False))
    observed_at: datetime
    source: str
    source_version: str
    market: str = "on-demand"  # rules.types.Market


class PriceSeries(SQLModel, table=True):
    """One import's price of one series (GPU × provider × count × tier × market), as `rules.market.changes.summarise`
    gives it over that import's observations: the cheapest region of a cloud, a marketplace's median, p10 and
    listing count (kind "series"); or a marketplace p10 row the import carried (kind "p10"). Written with the
    import (migration 0010), so a digest reads a few hundred rows per import instead of every observation."""

    __tablename__ = "price_series"
    __table_args__ = (Index("ix_series_import_gpu", "import_id", "gpu_id"),)
    id: int | None = Field(default=None, primary_key=True)
    import_id: int = Field(foreign_key="import_run.id")
    kind: str  # "series" or "p10"
    gpu_id: str
    provider_id: str
    gpu_count: int
    tier: str
    market: str
    usd_per_hour: Decimal = Field(sa_column=Column(MONEY, nullable=False))
    instance_type: str
    region: str
    observed_at: datetime | None = None  # the newest observation of the series in this import (none for "p10")
    listings: int
    p10_usd_per_hour: Decimal | None = Field(default=None, sa_column=Column(MONEY, nullable=True))


class CatalogStamp(SQLModel, table=True):
    """Bumped by triggers on every write to the tables a snapshot reads (SQLite; migration 0009)."""

    __tablename__ = "catalog_stamp"
    id: int | None = Field(default=None, primary_key=True)
    token: str  # drawn when the database was made
    version: int


class HubModel(SQLModel, table=True):
    """A Hugging Face model's config.json and safetensors parameter counts, as last read (knowledge.hub)."""

    __tablename__ = "hub_model"
    hf_id: str = Field(primary_key=True, max_length=200)
    revision: str  # the commit the files were read at, "" when the Hub gave none
    config_json: str = Field(sa_column=Column(Text, nullable=False))
    params_by_dtype_json: str = Field(sa_column=Column(Text, nullable=False))  # {"BF16": 123, ...}, "{}" if unknown
    fetched_at: datetime
