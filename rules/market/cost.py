"""Cost per job from real offers (billing increments, spot rework) and buy vs rent."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from rules.market.offers import job_usd
from rules.tables import RuleTables
from rules.types import GpuSpec, Offer


def offer_cost(offer: Offer, count: int, hours: float, *, rework: float,
               minimum_s: Mapping[str, int] | None = None) -> Decimal:
    """Whole instances needed x hourly price x hours rounded up to the billing increment (and minimum)."""
    return job_usd(offer, count, hours, rework=rework, minimum_s=minimum_s or {})


def break_even(gpu: GpuSpec, offer: Offer, tables: RuleTables) -> dict[str, float] | None:
    """Hours of use at which buying beats renting, and the 3-year utilisation that means.

    Power: board TDP x 1.3 for the host and cooling (a PUE-like overhead; Uptime Institute's 2023
    survey puts the average data-centre PUE at 1.58, a home/office box at ~1.2-1.3) at the table's
    $/kWh (rules/data/rule_tables.json power_source). Owning wins when the card is used more than
    utilisation_3y_pct of the hours in three years (a typical depreciation period).
    """
    if gpu.purchase_usd is None:
        return None
    power_usd_per_hour = gpu.tdp_w / 1000 * 1.3 * tables.power_usd_per_kwh
    margin = float(offer.usd_per_gpu_hour) - power_usd_per_hour
    if margin <= 0:
        return None
    hours = float(gpu.purchase_usd) / margin
    return {"break_even_hours": round(hours, 1), "utilisation_3y_pct": round(100 * hours / (3 * 8760), 1),
            "purchase_usd": float(gpu.purchase_usd), "rent_usd_per_gpu_hour": float(offer.usd_per_gpu_hour),
            "power_usd_per_hour": round(power_usd_per_hour, 3)}
