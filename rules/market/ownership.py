"""Buy vs rent for one job: owning N cards (purchase less resale, plus power) against the cheapest rental.

Finding `buy.vs_rent` (`buy.vs_rent_within_job` when owning pays for itself before one job ends; one per purchase price the catalog has for the GPU: new, and used where listed),
numbers:
- gpu, gpus: the cards bought (the plan this job needs on them); price_basis: street (new, at a dated street
  price) | new (launch list price) | used; unit_price_usd,
  purchase_usd (all cards), price_date and price_source where the catalog has them ("" otherwise);
- resale_years, resale_usd: what the cards fetch after the ownership period (resale share: rule tables
  `ownership.resale_share`), net_capex_usd = purchase - resale;
- power_usd_per_kwh (the user's, else the stated default), power_usd_per_hour (cards x TDP x host/cooling
  factor x price);
- own_hours_per_job: the job on the owned cards; rent_gpu, rent_gpus, rent_usd_per_job: the cheapest rental
  plan for the same job (its offer, billing included); job_basis: dataset (the user's or the stated default)
  or reference (1e8 tokens when no dataset: the comparison does not depend on the amount);
- break_even_jobs, break_even_hours (hours of use of the owned cards at which owning has paid for itself),
  utilisation_pct (those hours over the ownership period's wall-clock hours: owning wins above it);
- owning_wins: "yes" when the break-even falls within the ownership period at full use, "never" when the
  power alone costs more than renting the same job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from rules.plans.ranking import Scored
from rules.tables import RuleTables
from rules.types import GpuSpec, PurchasePrice, Workload
from rules.verdict import Finding, Number

HOURS_PER_YEAR = 8760
# Facility overhead on the board power: host CPU, fans, PSU losses and cooling (a PUE-like factor; Uptime
# Institute's 2023 survey puts the average data-centre PUE at 1.58, a home or office box at ~1.2-1.3).
POWER_OVERHEAD = 1.3


class Card(Protocol):
    """What buying reads of a GPU (a `GpuSpec`): used-price fields, where a catalog has them, are read by name."""

    @property
    def id(self) -> str: ...
    @property
    def tdp_w(self) -> int: ...
    @property
    def purchase_usd(self) -> Decimal | None: ...
    @property
    def source(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Price:
    basis: str  # new | used
    usd: float
    date: str
    source: str

    def __init__(self, basis: str, usd: float, date: str, source: str) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "basis", basis)
        object.__setattr__(self, "usd", usd)
        object.__setattr__(self, "date", date)
        object.__setattr__(self, "source", source)


def purchase_prices(gpu: Card, street: Sequence[PurchasePrice] = ()) -> list[Price]:
    """What the cards cost to buy: the newest street price new (basis "street": what a buyer pays on its date,
    knowledge/data/purchase_prices.csv, the low end of its range) where one is recorded, else the catalog's
    list price (basis "new", the launch MSRP: purchase_usd); and the newest used street price where recorded.

    A launch price years old is not what a card costs today (an RTX 4090 listed at $1,599 in 2022 and sold from
    $2,200 in February 2026): the street price wins. Catalog fields are read by name so a catalog that has not
    grown the date/source/used fields yet still works."""
    out: list[Price] = []
    newest = {p.condition: p for p in sorted(street, key=lambda p: p.observed)}  # the last one of each is newest
    if "new" in newest:
        found = newest["new"]
        out.append(Price("street", float(found.usd_low), found.observed.isoformat(), found.source))
    elif gpu.purchase_usd is not None:
        out.append(Price("new", float(gpu.purchase_usd), str(getattr(gpu, "purchase_date", "") or ""),
                         str(getattr(gpu, "purchase_source", "") or gpu.source)))
    if "used" in newest:
        found = newest["used"]
        out.append(Price("used", float(found.usd_low), found.observed.isoformat(), found.source))
        return out
    if isinstance(gpu, GpuSpec):  # the catalog's type has no used-price fields (used prices are street rows)
        return out
    for prefix in ("used", "used_purchase", "purchase_used"):
        used = getattr(gpu, f"{prefix}_usd", None)
        if used is not None:
            out.append(Price("used", float(used), str(getattr(gpu, f"{prefix}_date", "") or ""),
                             str(getattr(gpu, f"{prefix}_source", "") or "")))
            break
    return out


def power_price(workload: Workload, tables: RuleTables) -> float:
    value = workload.electricity_usd_per_kwh
    return float(value) if isinstance(value, Decimal | float | int) and value > 0 else tables.power_usd_per_kwh


def buy_vs_rent(gpu: Card, own: Scored, rentals: Sequence[Scored], workload: Workload, tables: RuleTables,
                dataset_known: bool, street: Sequence[PurchasePrice] = ()) -> list[Finding]:
    """Owning the cards of `own` (this GPU's plan for the job) against the cheapest rental plan of the job;
    `street`: the GPU's recorded street prices (purchase_prices)."""
    priced = [s for s in rentals if s.work_usd is not None and s.hours is not None]
    if own.hours is None or not priced:
        return []
    rent = min(priced, key=lambda s: (s.work_usd or 0.0, s.gpu_id))
    rent_usd = float(rent.work_usd or 0.0)
    kwh = power_price(workload, tables)
    count = own.count
    power_per_hour = count * gpu.tdp_w / 1000 * POWER_OVERHEAD * kwh
    margin = rent_usd - power_per_hour * own.hours
    years = tables.ownership_years
    resale_share = tables.resale_share
    out = []
    for price in purchase_prices(gpu, street):
        purchase = price.usd * count
        resale = purchase * resale_share
        numbers: dict[str, Number] = {
            "gpu": gpu.id, "gpus": count, "price_basis": price.basis, "unit_price_usd": price.usd,
            "purchase_usd": round(purchase, 2), "price_date": price.date, "price_source": price.source,
            "resale_years": years, "resale_usd": round(resale, 2), "net_capex_usd": round(purchase - resale, 2),
            "power_usd_per_kwh": kwh, "power_usd_per_hour": round(power_per_hour, 4),
            "own_hours_per_job": round(own.hours, 3), "rent_gpu": rent.gpu_id, "rent_gpus": rent.count,
            "rent_usd_per_job": round(rent_usd, 2), "job_basis": "dataset" if dataset_known else "reference",
        }
        if margin <= 0:
            numbers.update({"owning_wins": "never"})
        else:
            jobs = (purchase - resale) / margin
            hours = jobs * own.hours
            utilisation = 100 * hours / (years * HOURS_PER_YEAR)
            numbers.update({"break_even_jobs": round(jobs, 1), "break_even_hours": round(hours, 1),
                            "utilisation_pct": round(utilisation, 1),
                            "owning_wins": "yes" if utilisation <= 100 else "not_within_period"})
        # A job longer than the break-even ("owning pays off after 0.0 jobs"): said as within this one job.
        within = "break_even_jobs" in numbers and float(numbers["break_even_jobs"]) < 1.0
        out.append(Finding("buy.vs_rent_within_job" if within else "buy.vs_rent", "info", numbers))
    return out


def ownership_findings(pinned: str | None, top: Sequence[tuple[str, int]], scored: Sequence[Scored],
                       gpus: Mapping[str, GpuSpec], workload: Workload, tables: RuleTables,
                       dataset_known: bool, street: Mapping[str, Sequence[PurchasePrice]] | None = None,
                       ) -> list[Finding]:
    """Buy vs rent for the GPU the user named, else for the shown GPUs that have a purchase price.

    `top`: the shown options as (GPU, count). A GPU's plan is the shown one (the user's "2x 3090", not the
    4x plan a wider search also found), else the first of `scored` (the pinned search comes first)."""
    candidates = [pinned] if pinned else list(dict.fromkeys(gpu_id for gpu_id, _ in top))
    shown = dict(top)
    by_gpu: dict[str, Scored] = {}
    for s in scored:
        kept = by_gpu.get(s.gpu_id)
        if kept is None or (s.count == shown.get(s.gpu_id) and kept.count != s.count):
            by_gpu[s.gpu_id] = s
    out: list[Finding] = []
    for gpu_id in candidates:
        prices = (street or {}).get(gpu_id, ())
        if gpu_id in by_gpu and gpu_id in gpus and purchase_prices(gpus[gpu_id], prices):
            out += buy_vs_rent(gpus[gpu_id], by_gpu[gpu_id], scored, workload, tables, dataset_known, prices)
    return out
