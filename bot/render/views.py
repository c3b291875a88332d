"""Typed inputs of the catalog cards (comparison, specs, price, clarification, help, error), built from a snapshot."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal, Protocol

from rules.types import GpuSpec, Offer, Provider

ClarifyKind = Literal["gpu_ambiguous", "gpu_unknown", "model_size_missing", "model_ambiguous", "model_unknown",
                      "compare_needs_two"]
ErrorKind = Literal["generic", "expired"]


class CatalogView(Protocol):
    """The parts of `knowledge.snapshot.Snapshot` the cards read (read-only, as the frozen snapshot has them)."""

    @property
    def gpus(self) -> Mapping[str, GpuSpec]: ...

    @property
    def providers(self) -> Mapping[str, Provider]: ...

    @property
    def offers_by_gpu(self) -> Mapping[str, tuple[Offer, ...]]: ...


@dataclass(frozen=True, slots=True)
class GpuColumn:
    """One GPU with its market summary: cheapest on-demand offer and how many providers rent it."""

    gpu: GpuSpec
    cheapest_on_demand: Offer | None
    provider_count: int
    cheapest_provider: str | None  # display name of the cheapest on-demand provider


@dataclass(frozen=True, slots=True)
class FitLine:
    """A compared GPU's fit for the request's workload: an option summary or the reason it cannot."""

    gpu_name: str
    count: int | None = None
    memory_gib: float | None = None
    hours: float | None = None
    cost_usd: Decimal | None = None
    reason_code: str | None = None
    reason_numbers: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ComparisonView:
    columns: tuple[GpuColumn, ...]
    prices_at: datetime | None
    question: str = ""
    workload_summary: str | None = None
    fit: tuple[FitLine, ...] = ()


@dataclass(frozen=True, slots=True)
class SpecsView:
    column: GpuColumn
    prices_at: datetime | None
    question: str = ""


@dataclass(frozen=True, slots=True)
class ProviderPrice:
    """One provider's cheapest per-GPU-hour prices for a GPU, on-demand and spot."""

    provider_id: str
    provider_name: str
    on_demand_usd: Decimal | None
    spot_usd: Decimal | None
    billing_increment_s: int
    observed_at: datetime


@dataclass(frozen=True, slots=True)
class PriceView:
    gpu: GpuSpec
    rows: tuple[ProviderPrice, ...]  # cheapest first
    prices_at: datetime | None
    question: str = ""


@dataclass(frozen=True, slots=True)
class Choice:
    """A button in a clarification: label shown, value sent back (a GPU id, a model id or a size)."""

    label: str
    value: str


@dataclass(frozen=True, slots=True)
class ClarifyView:
    kind: ClarifyKind
    query: str | None
    choices: tuple[Choice, ...]
    state: Mapping[str, Any]  # the request so far, sent back with the chosen value
    question: str = ""
    ignored: tuple[str, ...] = ()  # what the parser could not use ("1e308B"): shown as on the recommendation card


@dataclass(frozen=True, slots=True)
class HelpView:
    question: str = ""


@dataclass(frozen=True, slots=True)
class ErrorView:
    kind: ErrorKind = "generic"
    reference: str | None = None


def provider_name(catalog: CatalogView, provider_id: str) -> str:
    provider = catalog.providers.get(provider_id)
    return provider.name if provider is not None else provider_id


def gpu_column(catalog: CatalogView, gpu_id: str) -> GpuColumn:
    """The GPU's specs plus its cheapest on-demand offer and provider count from the snapshot."""
    from bot.render.books import market_of

    market = market_of(catalog, gpu_id)
    cheapest = market.cheapest_on_demand
    return GpuColumn(
        gpu=catalog.gpus[gpu_id],
        cheapest_on_demand=cheapest,
        provider_count=len(market.providers),
        cheapest_provider=provider_name(catalog, cheapest.provider_id) if cheapest else None,
    )


def provider_prices(catalog: CatalogView, gpu_id: str) -> tuple[ProviderPrice, ...]:
    """Per provider: the cheapest on-demand and spot $/GPU-hour, cheapest providers first."""
    from bot.render.books import market_of

    rows = [ProviderPrice(p.provider_id, provider_name(catalog, p.provider_id), p.on_demand_usd, p.spot_usd,
                          p.billing_increment_s, p.observed_at) for p in market_of(catalog, gpu_id).providers]
    return tuple(sorted(rows, key=_price_order))


def _price_order(row: ProviderPrice) -> tuple[int, Decimal, str]:
    best = row.on_demand_usd if row.on_demand_usd is not None else row.spot_usd
    return (row.on_demand_usd is None, best if best is not None else Decimal(0), row.provider_id)


@dataclass(frozen=True, slots=True)
class KnowledgeView:
    """A knowledge-base answer (title, text, facts, sources, related) or, when unsure, entries to choose from."""

    title: str
    text: str
    facts: tuple[tuple[str, str], ...] = ()
    sources: tuple[tuple[str, str], ...] = ()
    related: tuple[tuple[str, str], ...] = ()  # (entry id, title); shown as kb.open buttons
    choose: bool = False  # True: `related` holds the candidate entries and `text` is empty
    question: str = ""
