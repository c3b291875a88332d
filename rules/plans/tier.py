"""Tier (consumer, workstation, datacenter, frontier): first matching row of the data table wins."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeGuard

from rules.tables import TIERS, TierRow
from rules.verdict import MemoryEstimate, Option, TierName


def row_matches(row: TierRow, method: str, params_b: float, total_gib: float, gpus: int) -> bool:
    """A row matches when every condition it sets holds (unset conditions match anything)."""
    return (
        (row.methods is None or method in row.methods)
        and (row.min_params_b is None or params_b >= row.min_params_b)
        and (row.max_params_b is None or params_b <= row.max_params_b)
        and (row.max_total_gib is None or total_gib <= row.max_total_gib)
        and (row.max_gpus is None or gpus <= row.max_gpus)
    )


def _is_tier_name(name: str) -> TypeGuard[TierName]:
    return name in TIERS


def pick_tier(rows: Sequence[TierRow], method: str, params_b: float, top: Option | None,
              reference: MemoryEstimate) -> TierName:
    """Memory the job needs in total (per-GPU × GPUs of the best plan) decides with the method."""
    memory = top.memory if top else reference
    gpus = top.count if top else 99
    total = memory.per_gpu_gib * memory.gpus
    for row in rows:
        if row_matches(row, method, params_b, total, gpus):
            if _is_tier_name(row.tier):
                return row.tier
            raise ValueError(f"tier table row names an unknown tier {row.tier!r}")  # the loader accepts only TIERS
    return "frontier"  # unreachable: the loader requires a catch-all row
