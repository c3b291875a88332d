"""Street prices to buy the GPUs people own (knowledge/data/purchase_prices.csv): new and used, each dated and
sourced. Validated when read; a bad row stops with file, line and what is wrong."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path

from rules.types import PurchasePrice

PURCHASE_FILE = Path(__file__).parent / "data" / "purchase_prices.csv"
MAX_USD = Decimal(1_000_000)


class PurchaseDataError(ValueError):
    """purchase_prices.csv is malformed: the message names the line."""


def read_purchase_prices(path: Path = PURCHASE_FILE) -> list[PurchasePrice]:
    out = []
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        for row in reader:
            where = f"{path.name}:{reader.line_num}"
            if None in row or None in row.values():
                raise PurchaseDataError(f"{where}: the row's cells do not match the header (quote a note with commas)")
            out.append(_row(row, where))
    return out


def _row(row: Mapping[str, str | None], where: str) -> PurchasePrice:
    condition = (row.get("condition") or "").strip()
    if condition not in ("new", "used"):
        raise PurchaseDataError(f"{where}: condition must be new or used, got {condition!r}")
    try:
        low, high = Decimal(row.get("usd_low") or ""), Decimal(row.get("usd_high") or "")
    except InvalidOperation:
        raise PurchaseDataError(f"{where}: usd_low and usd_high must be numbers") from None
    if not (low.is_finite() and high.is_finite() and 0 < low <= high <= MAX_USD):
        raise PurchaseDataError(f"{where}: need 0 < usd_low <= usd_high <= {MAX_USD}")
    try:
        observed = date.fromisoformat(row.get("observed") or "")
    except ValueError:
        raise PurchaseDataError(f"{where}: observed must be a date, YYYY-MM-DD") from None
    source = (row.get("source") or "").strip()
    if not source.startswith(("https://", "http://")):
        raise PurchaseDataError(f"{where}: every street price needs its source URL")
    return PurchasePrice((row.get("gpu_id") or "").strip(), condition, low, high, observed, source,  # type: ignore[arg-type]
                         (row.get("note") or "").strip())


@lru_cache(maxsize=1)
def purchase_prices() -> tuple[PurchasePrice, ...]:
    return tuple(read_purchase_prices())


def by_gpu(prices: Iterable[PurchasePrice], known: Iterable[str]) -> dict[str, tuple[PurchasePrice, ...]]:
    """Per GPU of the catalog, newest first (tests/test_purchase_prices.py checks every row names a catalog GPU)."""
    ids = set(known)
    out: dict[str, list[PurchasePrice]] = {}
    for p in prices:
        if p.gpu_id in ids:
            out.setdefault(p.gpu_id, []).append(p)
    return {g: tuple(sorted(v, key=lambda p: p.observed, reverse=True)) for g, v in out.items()}


def latest(prices: Iterable[PurchasePrice]) -> dict[str, PurchasePrice]:
    """The newest price per condition."""
    best: dict[str, PurchasePrice] = {}
    for p in prices:
        if p.condition not in best or p.observed > best[p.condition].observed:
            best[p.condition] = p
    return best
