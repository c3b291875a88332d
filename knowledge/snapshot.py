"""An immutable in-memory view of the catalog and active offers, handed to the rules and the parser."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from functools import lru_cache
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar

from knowledge.revision import as_utc
from rules.types import GpuSpec, ModelSpec, Offer, Provider, PurchasePrice, field_names

if TYPE_CHECKING:  # SQLAlchemy is imported by load_snapshot: a snapshot read from the cache needs none of it
    from sqlalchemy import Engine

    from knowledge import tables
    from knowledge.resolve import GpuIndex, ModelIndex

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Snapshot:
    gpus: Mapping[str, GpuSpec]
    models: Mapping[str, ModelSpec]
    providers: Mapping[str, Provider]
    offers_by_gpu: Mapping[str, tuple[Offer, ...]]
    gpu_index: GpuIndex
    model_index: ModelIndex
    taken_at: datetime
    # Prices older than this carry a notice on cards (Settings.price_stale_days, PRICE_STALE_DAYS).
    stale_after_days: int = 14
    # Street prices to buy a GPU, new and used, newest first (knowledge/data/purchase_prices.csv).
    purchase_prices: Mapping[str, tuple[PurchasePrice, ...]] = field(default_factory=dict)
    # Computed once here: every answer card asks for it, and a scan of 100,000 offers takes ~15 ms.
    _prices_as_of: datetime | None = field(init=False, repr=False, compare=False)
    # Indexes derived from this snapshot (offer book, market summaries), built on first use and
    # dropped with the snapshot, so a price refresh never sees a stale index.
    _derived: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        times = [o.observed_at for offers in self.offers_by_gpu.values() for o in offers]
        object.__setattr__(self, "_prices_as_of", max(times) if times else None)
        object.__setattr__(self, "_derived", {})

    def derived(self, key: str, build: Callable[[Snapshot], T]) -> T:
        """`build(self)` once per snapshot and key. Two threads may both build; either result is equal."""
        try:
            return self._derived[key]  # type: ignore[no-any-return]
        except KeyError:
            value = build(self)
            return self._derived.setdefault(key, value)  # type: ignore[no-any-return]

    @property
    def offer_count(self) -> int:
        return sum(len(v) for v in self.offers_by_gpu.values())

    def prices_as_of(self) -> datetime | None:
        """The newest observation time among the offers, or None without offers."""
        return self._prices_as_of


def gpu_spec(row: tables.GpuBase) -> GpuSpec:
    values = row.model_dump()
    return GpuSpec(**{k: values[k] for k in field_names(GpuSpec)})


def model_spec(row: tables.ModelPresetBase) -> ModelSpec:
    values = row.model_dump()
    return ModelSpec(**{k: values[k] for k in field_names(ModelSpec)})


def offer_spec(row: tables.Offer) -> Offer:
    usd = Decimal(row.usd_per_hour)
    return Offer(
        gpu_id=row.gpu_id,
        provider_id=row.provider_id,
        instance_type=row.instance_type,
        gpu_count=row.gpu_count,
        region=row.region,
        tier=row.tier,  # type: ignore[arg-type]
        usd_per_hour=usd,
        usd_per_gpu_hour=(usd / row.gpu_count).quantize(Decimal("0.000001")),
        billing_increment_s=row.billing_increment_s,
        interconnect=row.interconnect,
        observed_at=row.observed_at,
        source=row.source,
        market=row.market,  # type: ignore[arg-type]
    )


_MICRO_USD = Decimal("0.000001")


def _offer_from_tuple(row: Any) -> Offer:
    """offer_spec for a Core row in _OFFER_COLUMNS order (positional: ~2x cheaper per offer)."""
    (gpu_id, provider_id, instance_type, gpu_count, region, tier, usd_per_hour, increment_s, link, seen,
     source, market) = row
    usd = Decimal(usd_per_hour)
    usd_per_gpu = (usd / gpu_count).quantize(_MICRO_USD)
    return Offer(
        gpu_id, provider_id, instance_type, gpu_count, region, tier, usd, usd_per_gpu, increment_s, link,
        _utc(seen), source, market
    )


@lru_cache(maxsize=4096)
def _utc(seen: datetime) -> datetime:
    """as_utc, memoised: an import stamps every offer with the same time, and this runs once per offer."""
    return as_utc(seen)


def build_snapshot(
    *,
    gpus: Iterable[GpuSpec],
    models: Iterable[ModelSpec] = (),
    providers: Iterable[Provider] = (),
    offers: Iterable[Offer] = (),
    gpu_aliases: Iterable[Any] = (),
    model_aliases: Iterable[Any] = (),
    taken_at: datetime | None = None,
    stale_after_days: int = 14,
    purchase_prices: Iterable[PurchasePrice] = (),
) -> Snapshot:
    """Build a snapshot from plain values (tests use this without a database)."""
    from knowledge.resolve import GpuIndex, ModelIndex

    gpu_map = {g.id: g for g in gpus}
    model_map = {m.id: m for m in models}
    by_gpu: dict[str, list[Offer]] = {}
    for offer in offers:
        by_gpu.setdefault(offer.gpu_id, []).append(offer)
    offers_by_gpu = {
        gpu_id: tuple(sorted(lst, key=lambda o: (o.usd_per_gpu_hour, o.provider_id, o.instance_type, o.region, o.tier)))
        for gpu_id, lst in by_gpu.items()
    }
    return Snapshot(
        gpus=gpu_map,
        models=model_map,
        providers={p.id: p for p in providers},
        offers_by_gpu=offers_by_gpu,
        gpu_index=GpuIndex.build(gpu_map, list(gpu_aliases)),
        model_index=ModelIndex.build(model_map, list(model_aliases)),
        taken_at=taken_at or datetime.now(UTC),
        stale_after_days=stale_after_days,
        purchase_prices=_street(purchase_prices, gpu_map),
    )


def _street(prices: Iterable[PurchasePrice], gpus: Mapping[str, GpuSpec]) -> dict[str, tuple[PurchasePrice, ...]]:
    from knowledge.purchase import by_gpu

    return by_gpu(prices, gpus)


def load_snapshot(engine: Engine, *, stale_after_days: int = 14) -> Snapshot:
    """Read the catalog and the active offers from the database into a Snapshot.

    Core selects of plain tuples, no ORM objects: building, tracking and discarding one SQLModel
    instance per offer was most of the load time.
    """
    from sqlalchemy import select

    from knowledge import tables
    from knowledge.db import table_of
    from knowledge.purchase import purchase_prices

    offer_t = table_of(tables.Offer)
    active = select(*(offer_t.c[name] for name in _OFFER_COLUMNS)).where(offer_t.c.active == True)
    with engine.connect() as conn:
        gpus = [GpuSpec(*r) for r in conn.execute(_columns_of(tables.Gpu, GpuSpec))]
        models = [ModelSpec(*r) for r in conn.execute(_columns_of(tables.ModelPreset, ModelSpec))]
        providers = [Provider(*r) for r in conn.execute(_columns_of(tables.Provider, Provider))]
        offers = [_offer_from_tuple(r) for r in conn.execute(active).all()]
        gpu_aliases = [
            tables.GpuAliasBase.model_validate(r._asdict())
            for r in conn.execute(_columns_of(tables.GpuAlias, tables.GpuAliasBase))
        ]
        model_aliases = [
            tables.ModelAliasBase.model_validate(r._asdict())
            for r in conn.execute(_columns_of(tables.ModelAlias, tables.ModelAliasBase))
        ]
    return build_snapshot(
        gpus=gpus,
        models=models,
        providers=providers,
        offers=offers,
        gpu_aliases=gpu_aliases,
        model_aliases=model_aliases,
        stale_after_days=stale_after_days,
        purchase_prices=purchase_prices(),
    )


_OFFER_COLUMNS = (
    "gpu_id", "provider_id", "instance_type", "gpu_count", "region", "tier", "usd_per_hour",
    "billing_increment_s", "interconnect", "observed_at", "source", "market",
)


def _columns_of(model: Any, cls: type) -> Any:
    """SELECT the table's columns named like `cls`'s fields (a dataclass or pydantic model), in order."""
    from sqlalchemy import select

    table = model.__table__
    if is_dataclass(cls):
        names = [f.name for f in fields(cls)]
    else:
        names = list(cls.model_fields)  # type: ignore[attr-defined]
    return select(*(table.c[name] for name in names))
