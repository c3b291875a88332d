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


def break_even(gpu: GpuSpec, offer: Offer, tables: RuleTables, *, usd_per_kwh: float | None = None
               ) -> dict[str, float] | None:
    """Hours of use at which buying this card beats renting the same card, and the 3-year utilisation.

    Power: board TDP x 1.3 for the host and cooling (a PUE-like overhead; Uptime Institute's 2023 survey puts
    the average data-centre PUE at 1.58, a home/office box at ~1.2-1.3) at the user's $/kWh, else the table's
    (rules/data/rule_tables.json power_source). The purchase is net of resale after the ownership period
    (rule tables `ownership`). Owning wins when the card is used more than utilisation_3y_pct of the hours.
    """
    if gpu.purchase_usd is None:
        return None
    kwh = usd_per_kwh if usd_per_kwh is not None else tables.power_usd_per_kwh
    power_usd_per_hour = gpu.tdp_w / 1000 * 1.3 * kwh
    margin = float(offer.usd_per_gpu_hour) - power_usd_per_hour
    if margin <= 0:
        return None
    purchase = float(gpu.purchase_usd)
    resale = purchase * tables.resale_share
    hours = (purchase - resale) / margin
    period_hours = tables.ownership_years * 8760
    return {"break_even_hours": round(hours, 1), "utilisation_3y_pct": round(100 * hours / period_hours, 1),
            "purchase_usd": purchase, "resale_usd": round(resale, 2),
            "rent_usd_per_gpu_hour": float(offer.usd_per_gpu_hour), "power_usd_per_hour": round(power_usd_per_hour, 3)}
