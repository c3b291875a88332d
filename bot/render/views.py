"""Typed inputs of the catalog cards (comparison, specs, price, clarification, help, error), built from a snapshot."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal, Protocol

from rules.plans.compare import ComparisonVerdict, Strength
from rules.types import GpuSpec, Offer, Provider, PurchasePrice

DEFAULT_STALE_DAYS = 14  # Settings.price_stale_days when the catalog does not say
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
    stale_after_days: int = DEFAULT_STALE_DAYS  # the catalog's setting, carried to the card's date line
    street: tuple[PurchasePrice, ...] = ()  # street prices to buy it, new and used, newest first


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
    vram_gb: float | None = None  # the card's memory, and what a plan may use of it: the rest is the safety margin
    usable_gib: float | None = None
    gpu_share: float | None = None  # a Mac: the share of unified memory macOS lets the GPU use (the rest is not a margin)
    # Serving and running: the plan's weight format, output tokens/s of all its users and $ per million of them.
    precision: str | None = None
    tokens_per_s: float | None = None
    usd_per_million_tokens: float | None = None


@dataclass(frozen=True, slots=True)
class ComparisonView:
    """GPUs side by side. With a workload (the question's or the thread's): each GPU's fit and the verdict.
    Without one: what each GPU is best at from the catalog, and a question for the workload."""

    columns: tuple[GpuColumn, ...]
    prices_at: datetime | None
    question: str = ""
    workload: tuple[str, str] | None = None  # (model label, method code) of the workload compared on
    fit: tuple[FitLine, ...] = ()
    verdict: ComparisonVerdict | None = None
    strengths: Mapping[str, tuple[Strength, ...]] | None = None  # by GPU id; None with a workload
    assumed_samples: int | None = None  # the dataset assumed to cost each job (none was given)

    @property
    def stale_after_days(self) -> int:
        return self.columns[0].stale_after_days if self.columns else DEFAULT_STALE_DAYS


@dataclass(frozen=True, slots=True)
class SpecsView:
    column: GpuColumn
    prices_at: datetime | None
    question: str = ""

    @property
    def stale_after_days(self) -> int:
        return self.column.stale_after_days


@dataclass(frozen=True, slots=True)
class ProviderPrice:
    """One provider's cheapest per-GPU-hour prices for a GPU, on-demand and spot."""

    provider_id: str
    provider_name: str
    on_demand_usd: Decimal | None
    spot_usd: Decimal | None
    billing_increment_s: int
    observed_at: datetime
    on_demand_market: str | None = None  # marketplace: a median of listings, shown as a "from" price
    spot_market: str | None = None  # spot, or auction (Mithril)
    stale_after_days: int = DEFAULT_STALE_DAYS


@dataclass(frozen=True, slots=True)
class PriceView:
    gpu: GpuSpec
    rows: tuple[ProviderPrice, ...]  # cheapest first
    prices_at: datetime | None
    question: str = ""

    @property
    def stale_after_days(self) -> int:
        return self.rows[0].stale_after_days if self.rows else DEFAULT_STALE_DAYS

    @property
    def oldest_at(self) -> datetime | None:
        """The oldest price on the card: the date line names it when it is older than the newest."""
        return min((r.observed_at for r in self.rows), default=None)

    @property
    def kinds(self) -> frozenset[str]:
        """The market kinds other than plain on-demand and spot shown on the card (for the legend)."""
        found = {r.on_demand_market for r in self.rows} | {r.spot_market for r in self.rows}
        return frozenset(k for k in found if k in ("marketplace", "auction"))


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
class CapacityRow:
    """One model's running verdict on the named hardware (bot.answer.capacity)."""

    model_id: str
    model: str
    params_b: float
    fits: bool  # in the GPUs' usable memory at `precision`
    precision: str  # the least-quantised precision that fits, else the smallest tried
    needed_gib: float  # per GPU
    has_gib: float  # per GPU, usable
    offload_gib: float  # what would sit in system RAM (0 when it fits or cannot run at all)
    tokens_per_s: float | None  # decode rate for one user (an upper bound with offload), None when it cannot run
    context_tokens: int | None  # the context the verdict assumed


@dataclass(frozen=True, slots=True)
class TrainingFit:
    """One training method's fit for one model on the named hardware."""

    method: str  # full, lora, qlora
    state: str  # fits (in the cards' memory), offload (only with CPU/NVMe offload), no
    needed_gib: float  # per GPU, on the cards


@dataclass(frozen=True, slots=True)
class TrainingCapacityRow:
    """Which training methods fit one model on the named hardware (bot.answer.capacity)."""

    model_id: str
    model: str
    params_b: float
    fits: tuple[TrainingFit, ...]  # full, LoRA, QLoRA in that order


@dataclass(frozen=True, slots=True)
class CapacityView:
    """What a card (or several of one kind) can run, or fine-tune: a verdict per model of a fixed ladder."""

    gpu: GpuSpec
    count: int
    rows: tuple[CapacityRow, ...]
    state: Mapping[str, Any]  # the request so far (GPU, count, running), sent back with a picked model
    question: str = ""
    ignored: tuple[str, ...] = ()
    training: tuple[TrainingCapacityRow, ...] = ()  # set instead of `rows` for "what can I fine-tune on ...?"
    read_as: tuple[float, str, int] | None = None  # "12 GB of VRAM": (GB, the card standing for it, cards alike)
    seq_len: int = 0  # the training rows' sequence length


@dataclass(frozen=True, slots=True)
class BuyingRow:
    """One card of the buying ladder (bot.answer.buying): its price and the largest model it runs."""

    gpu_id: str
    gpu: str
    vram_gb: float
    usd: float  # one card, new: the newest street price, else the launch list price
    price_basis: str  # "street" or "new" (list price)
    price_when: str  # the street price's date (ISO), or the list price's year
    model_id: str
    model: str
    params_b: float
    precision: str  # the least-quantised precision that fits
    needed_gib: float
    has_gib: float
    tokens_per_s: float  # decode rate for one user
    context_tokens: int


@dataclass(frozen=True, slots=True)
class BuyingView:
    """Which card to buy to run models locally: cheapest first, each holding a larger model than the cheaper."""

    rows: tuple[BuyingRow, ...]
    budget_usd: float | None
    state: Mapping[str, Any]
    question: str = ""
    ignored: tuple[str, ...] = ()
    smallest_model: str = ""  # the ladder's smallest model, named when no card within the budget holds it


@dataclass(frozen=True, slots=True)
class HelpView:
    question: str = ""
    command_help: str | None = None  # "alert.help" / "digest.help": asked in words for what a command sets up


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
        stale_after_days=stale_days(catalog),
        street=tuple(getattr(catalog, "purchase_prices", {}).get(gpu_id, ())),
    )


def stale_days(catalog: object) -> int:
    """The snapshot's stale-price threshold (a stand-in catalog without one: the default)."""
    days = getattr(catalog, "stale_after_days", DEFAULT_STALE_DAYS)
    return days if isinstance(days, int) else DEFAULT_STALE_DAYS


def provider_prices(catalog: CatalogView, gpu_id: str) -> tuple[ProviderPrice, ...]:
    """Per provider: the cheapest on-demand and spot $/GPU-hour, cheapest providers first."""
    from bot.render.books import market_of

    days = stale_days(catalog)
    rows = [ProviderPrice(p.provider_id, provider_name(catalog, p.provider_id), p.on_demand_usd, p.spot_usd,
                          p.billing_increment_s, p.observed_at, p.on_demand_market, p.spot_market, days)
            for p in market_of(catalog, gpu_id).providers]
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
