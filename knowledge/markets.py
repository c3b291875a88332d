"""Market kinds: how each provider sets a price (`knowledge/data/prices/markets.csv`, sourced per row).

A catalog row's tier (its Price or SpotPrice column, or gpuhunt's spot flag) becomes the tier we store and a market
kind: Mithril's rows are auction prices (interruptible, so stored as spot), Vast's and the aggregators' are
marketplace listings summarised as a median. A provider or tier the file does not list keeps its tier as market
kind, and a marketplace provider (providers.csv kind) is a marketplace.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path

from rules.types import MARKETS

MARKETS_FILE = Path(__file__).parent / "data" / "prices" / "markets.csv"
TIERS = ("on-demand", "spot", "reserved")


class MarketTableError(ValueError):
    """markets.csv is malformed: the message names the line."""


@lru_cache(maxsize=1)
def market_table() -> dict[tuple[str, str], tuple[str, str]]:
    """(provider, source tier) → (tier, market), validated when read."""
    table: dict[tuple[str, str], tuple[str, str]] = {}
    with MARKETS_FILE.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        for row in reader:
            where = f"{MARKETS_FILE.name}:{reader.line_num}"
            tier, market = row.get("tier") or "", row.get("market") or ""
            if row.get("source_tier") not in TIERS or tier not in TIERS or market not in MARKETS:
                raise MarketTableError(f"{where}: tier/market must be one of {TIERS} / {MARKETS}")
            if market in ("spot", "auction") and tier != "spot":
                raise MarketTableError(f"{where}: an interruptible market ({market}) is stored as tier spot")
            if len(row.get("source") or "") < 8:
                raise MarketTableError(f"{where}: every market kind needs its source")
            table[(row["provider"], row["source_tier"])] = (tier, market)
    return table


def classify(provider_id: str, tier: str, *, marketplace: bool) -> tuple[str, str]:
    """The tier to store and the market kind of a price listed under `tier` by `provider_id`."""
    known = market_table().get((provider_id, tier))
    if known is not None:
        return known
    if marketplace:
        return tier, "marketplace"
    return tier, tier if tier in ("spot", "reserved") else "on-demand"
