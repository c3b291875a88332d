"""Training constants kept as data (rules/data/rule_tables.json "training"): switch speed costs, host limits.

Each entry's source is in the JSON beside it ("basis" keys); this module only validates the shape and
ranges, naming the file and key on error (the same contract as rules.tables).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SEGMENTS = ("consumer", "workstation", "datacenter")
# Switches whose speed effect is a measured ratio (the others are computed: FLOPs, host traffic, MFU).
RATIO_SWITCHES = ("chunked_loss", "8bit_optimizer", "paged_optimizer", "optimizer_in_backward",
                  "activation_offload")


class TrainingTableError(ValueError):
    """A malformed training table; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class TrainingTables:
    """Numbers the training planner and time model read from data."""

    switch_time_factor: Mapping[str, float] = field(default_factory=dict)  # hours multiplier per switch
    host_ram_gib_per_gpu: Mapping[str, float] = field(default_factory=dict)  # segment -> host RAM per GPU
    host_link_gbs: Mapping[str, float] = field(default_factory=dict)  # "pcie4"/"pcie5" -> achieved GB/s
    offload_params_per_s: float = 0.65e9  # optimizer-on-CPU throughput per GPU rank (params/s)
    nvme_gbs: float = 5.0  # sustained NVMe bandwidth per node


def _float(raw: Mapping[str, Any], key: str, where: str, low: float, high: float) -> float:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise TrainingTableError(f"{where}.{key}: need a number between {low} and {high}, got {value!r}")
    return float(value)


def _table(raw: Any, keys: tuple[str, ...], where: str, low: float, high: float) -> dict[str, float]:
    if not isinstance(raw, Mapping):
        raise TrainingTableError(f"{where}: expected an object with {', '.join(keys)}")
    unknown = set(raw) - set(keys) - {"basis"}
    if unknown:
        raise TrainingTableError(f"{where}: unknown keys {sorted(unknown)}")
    return {key: _float(raw, key, where, low, high) for key in keys}


def parse_training_tables(raw: Any, source: str) -> TrainingTables:
    """Validate the "training" object of the rule tables."""
    where = f"{source}: training"
    if not isinstance(raw, Mapping):
        raise TrainingTableError(f"{where}: missing (switch_time_factor, host_ram_gib_per_gpu, host_link_gbs, ...)")
    return TrainingTables(
        switch_time_factor=_table(raw.get("switch_time_factor"), RATIO_SWITCHES, f"{where}.switch_time_factor",
                                  0.5, 3.0),
        host_ram_gib_per_gpu=_table(raw.get("host_ram_gib_per_gpu"), SEGMENTS, f"{where}.host_ram_gib_per_gpu",
                                    1.0, 4096.0),
        host_link_gbs=_table(raw.get("host_link_gbs"), ("pcie4", "pcie5"), f"{where}.host_link_gbs", 1.0, 256.0),
        offload_params_per_s=_float(raw, "offload_params_per_s", where, 1e6, 1e12),
        nvme_gbs=_float(raw, "nvme_gbs", where, 0.1, 100.0),
    )
