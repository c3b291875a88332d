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
    fp8_speedup: float = 1.28  # FP8 over BF16 throughput, same run (torchtitan Float8)
    fabric_gbs: float = 50.0  # inter-node bandwidth per GPU (400 Gb/s NICs)
    link_efficiency: float = 0.8  # achieved share of a link's bandwidth in collectives
    multinode_efficiency: float = 0.97  # throughput kept beyond one node once collectives are hidden
    attention_utilisation: Mapping[str, float] = field(default_factory=dict)  # gpu class -> attention share of peak
    ring_attention_efficiency: float = 1.0  # attention rate kept with context parallelism over 4+ GPUs
    framework_speed: Mapping[str, float] = field(default_factory=dict)  # framework -> throughput vs the table
    compile_speedup: float = 1.16  # torch.compile over eager, same run


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
        fp8_speedup=_float(raw, "fp8_speedup", where, 1.0, 3.0),
        fabric_gbs=_float(raw, "fabric_gbs", where, 1.0, 1000.0),
        link_efficiency=_float(raw, "link_efficiency", where, 0.1, 1.0),
        multinode_efficiency=_float(raw, "multinode_efficiency", where, 0.1, 1.0),
        attention_utilisation=_open_table(raw.get("attention_utilisation"), f"{where}.attention_utilisation", 0.05, 1.0),
        ring_attention_efficiency=_float(raw, "ring_attention_efficiency", where, 0.1, 1.0),
        framework_speed=_open_table(raw.get("framework_speed"), f"{where}.framework_speed", 0.2, 3.0),
        compile_speedup=_float(raw, "compile_speedup", where, 1.0, 3.0),
    )


def _open_table(raw: Any, where: str, low: float, high: float) -> dict[str, float]:
    """name -> number, any names (missing ones take the caller's default)."""
    if not isinstance(raw, Mapping):
        raise TrainingTableError(f"{where}: expected an object of name -> number")
    return {key: _float(raw, key, where, low, high) for key in raw if key != "basis"}
