"""Typed rule tables (tier decision table, utilisation, headroom) and their validating parser.

The JSON lives in rules/data/rule_tables.json; knowledge/rule_tables.py reads the file and calls
`parse_rule_tables`, which is pure and raises `RuleTableError` naming the file and the row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from rules.training_tables import TrainingTableError, TrainingTables, parse_training_tables

if TYPE_CHECKING:
    from rules.types import GpuSpec

T = TypeVar("T")

TIERS = ("consumer", "workstation", "datacenter", "frontier")
MFU_METHODS = ("full", "lora", "qlora", "inference", "diffusion")
MFU_CLASSES = ("consumer", "workstation", "datacenter", "hopper")


class RuleTableError(ValueError):
    """A rule table is malformed; the message says which file, which row and what to fix."""


@dataclass(frozen=True, slots=True)
class TierRow:
    """One row of the first-match tier table; a `None` condition matches anything."""

    tier: str
    methods: tuple[str, ...] | None  # None = any method
    min_params_b: float | None
    max_params_b: float | None
    max_total_gib: float | None  # memory the job needs summed over GPUs
    max_gpus: int | None  # GPUs in the best plan


SERVING_ENGINE_CLASSES = ("paged", "paged_rocm", "gguf_cuda", "apple", "other")
SERVING_LINKS = ("nvlink", "pcie")


@dataclass(frozen=True, slots=True)
class ServingTables:
    """Serving throughput constants, fitted on published measurements (the JSON's "serving" basis says how)."""

    bandwidth_efficiency: Mapping[str, float]  # engine class -> achieved share of memory bandwidth in decode
    step_overhead_ms: Mapping[str, float]  # engine class -> fixed time per decode step (launches, scheduling)
    host_bandwidth_efficiency: float  # share of host RAM bandwidth a CPU-offloaded layer streams at
    tp_efficiency: Mapping[str, float]  # link class -> share of aggregate bandwidth kept under tensor parallel
    decode_compute_utilisation: float  # share of dense peak a compute-bound decode step reaches
    prefill_compute_utilisation: float  # share of dense peak prefill reaches
    band: tuple[float, float]  # relative low / high of a throughput figure (from the calibration spread)
    # one all-reduce on the critical path of a tensor-parallel decode step, per link class (two per layer)
    tp_allreduce_ms: Mapping[str, float] = field(default_factory=dict)
    # the fixed cost of one MoE layer in a decode step (router, top-k, token-to-expert alignment, the grouped
    # expert GEMMs' launches), by expert kernel ("int4": weight-only 4-bit, "other"), for models with at least
    # `moe_min_experts` routed experts on the paged engines (serving.moe_layer_basis says how it was fitted)
    moe_layer_ms: Mapping[str, float] = field(default_factory=dict)
    moe_min_experts: int = 0
    # share of the calibrated tokens/s that the low end of a PCIe tensor-parallel plan's range keeps: cards that
    # cannot exchange data peer-to-peer (P2P off: NVIDIA's standard driver on GeForce cards) all-reduce through
    # host memory (serving.tp_pcie_low_basis says what was measured); 1.0 = no widening
    tp_pcie_low: float = 1.0
    # share of dense peak prefill reaches in the paged engines (vLLM, SGLang, TensorRT-LLM), where prompts are
    # prefilled in chunks between the decode steps of a full batch; None: `prefill_compute_utilisation`
    prefill_paged_compute_utilisation: float | None = None
    # the share of that a fine-grained MoE model's prefill keeps (`moe_min_experts` or more routed experts, paged
    # engines): grouped expert GEMMs and the tokens' dispatch to the experts; 1.0 = as a dense model
    moe_prefill: float = 1.0


@dataclass(frozen=True, slots=True)
class RuleTables:
    """All the numbers the engine reads from data."""

    tier_rows: tuple[TierRow, ...]
    mfu: Mapping[str, Mapping[str, float]]  # segment -> method -> model FLOPs utilisation
    headroom_fraction: float  # share of VRAM kept free when deciding a fit
    spot_rework_fraction: float  # extra hours assumed lost to pre-emption on spot
    checkpoint_interval_min: float  # recommended checkpoint interval on spot
    power_usd_per_kwh: float  # for buy vs rent
    source: str
    popular_gpus: tuple[str, ...] = ()  # cards people ask about: shown as near misses when they miss
    billing_minimum_s: Mapping[str, int] = field(default_factory=dict)  # provider id -> least seconds billed
    serving: ServingTables | None = None  # always set by parse_rule_tables
    training: TrainingTables = field(default_factory=TrainingTables)  # switch costs, host limits (training)
    ownership_years: float = 3.0  # buy vs rent: the period owned cards are compared over
    resale_share: float = 0.57  # buy vs rent: share of the purchase price the cards fetch after that period


def _number(row: Mapping[str, Any], key: str, where: str) -> float | None:
    value = row.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RuleTableError(f"{where}: {key}: expected a number, got {value!r}")
    return float(value)


def _parse_tier_row(row: Any, where: str) -> TierRow:
    if not isinstance(row, Mapping):
        raise RuleTableError(f"{where}: expected an object")
    unknown = set(row) - {"tier", "methods", "min_params_b", "max_params_b", "max_total_gib",
                          "max_gpus", "why"}
    if unknown:
        raise RuleTableError(f"{where}: unknown keys {sorted(unknown)}")
    tier = row.get("tier")
    if tier not in TIERS:
        raise RuleTableError(f"{where}: tier: {tier!r} is not one of {', '.join(TIERS)}")
    methods = row.get("methods")
    if methods is not None and not (
        isinstance(methods, list) and all(isinstance(m, str) for m in methods)
    ):
        raise RuleTableError(f"{where}: methods: expected a list of method names")
    max_gpus = _number(row, "max_gpus", where)
    return TierRow(
        tier=tier,
        methods=tuple(methods) if methods is not None else None,
        min_params_b=_number(row, "min_params_b", where),
        max_params_b=_number(row, "max_params_b", where),
        max_total_gib=_number(row, "max_total_gib", where),
        max_gpus=int(max_gpus) if max_gpus is not None else None,
    )


def _is_catch_all(row: TierRow) -> bool:
    return (row.methods, row.min_params_b, row.max_params_b, row.max_total_gib, row.max_gpus) == (
        None, None, None, None, None)


def _parse_mfu(raw: Any, source: str) -> dict[str, dict[str, float]]:
    if not isinstance(raw, Mapping):
        raise RuleTableError(f"{source}: mfu: expected an object of segment -> method -> number")
    mfu: dict[str, dict[str, float]] = {}
    for segment in MFU_CLASSES:
        methods = raw.get(segment)
        if not isinstance(methods, Mapping):
            raise RuleTableError(f"{source}: mfu.{segment}: missing (need every segment)")
        mfu[segment] = {}
        for method in MFU_METHODS:
            value = _number(methods, method, f"{source}: mfu.{segment}")
            if value is None or not 0.0 < value <= 1.0:
                raise RuleTableError(f"{source}: mfu.{segment}.{method}: need a number in (0, 1]")
            mfu[segment][method] = value
    return mfu


def _scalar(data: Mapping[str, Any], key: str, source: str, low: float, high: float) -> float:
    value = _number(data, key, source)
    if value is None or not low <= value <= high:
        raise RuleTableError(f"{source}: {key}: need a number between {low} and {high}")
    return value


def parse_rule_tables(data: Any, *, source: str) -> RuleTables:
    """Validate parsed JSON into `RuleTables`; errors name `source` and the row index."""
    if not isinstance(data, Mapping):
        raise RuleTableError(f"{source}: expected a JSON object at the top level")
    rows_raw = data.get("tier_rows")
    if not isinstance(rows_raw, list) or not rows_raw:
        raise RuleTableError(f"{source}: tier_rows: expected a non-empty list")
    rows = tuple(
        _parse_tier_row(row, f"{source}: tier_rows[{index}]") for index, row in enumerate(rows_raw)
    )
    if not _is_catch_all(rows[-1]):
        raise RuleTableError(
            f"{source}: tier_rows[{len(rows) - 1}]: the last row must be a catch-all "
            "(only 'tier', no conditions)"
        )
    return RuleTables(
        tier_rows=rows,
        mfu=_parse_mfu(data.get("mfu"), source),
        headroom_fraction=_scalar(data, "headroom_fraction", source, 0.0, 0.5),
        spot_rework_fraction=_scalar(data, "spot_rework_fraction", source, 0.0, 1.0),
        checkpoint_interval_min=_scalar(data, "checkpoint_interval_min", source, 1.0, 600.0),
        power_usd_per_kwh=_scalar(data, "power_usd_per_kwh", source, 0.0, 2.0),
        source=source,
        popular_gpus=_id_list(data.get("popular_gpus", []), source),
        billing_minimum_s=_minimums(data.get("billing_minimum_s", {}), source),
        serving=_parse_serving(data.get("serving"), source),
        training=_parse_training(data.get("training"), source),
        ownership_years=_scalar(_object(data, "ownership", source), "years", f"{source}: ownership", 0.5, 10.0),
        resale_share=_scalar(_object(data, "ownership", source), "resale_share", f"{source}: ownership", 0.0, 1.0),
    )


def _object(data: Mapping[str, Any], key: str, source: str) -> Mapping[str, Any]:
    value = data.get(key)
    if not isinstance(value, Mapping):
        raise RuleTableError(f"{source}: {key}: expected an object")
    return value


def _parse_training(raw: Any, source: str) -> TrainingTables:
    try:
        return parse_training_tables(raw, source)
    except TrainingTableError as error:
        raise RuleTableError(str(error)) from error


def _shares(raw: Any, keys: tuple[str, ...], where: str) -> dict[str, float]:
    if not isinstance(raw, Mapping) or set(raw) - set(keys) - {"basis"}:
        raise RuleTableError(f"{where}: expected an object with {', '.join(keys)}")
    out = {}
    for key in keys:
        value = _number(raw, key, where)
        if value is None or not 0.0 < value <= 1.0:
            raise RuleTableError(f"{where}.{key}: need a number in (0, 1]")
        out[key] = value
    return out


def _overheads(raw: Any, where: str) -> dict[str, float]:
    if not isinstance(raw, Mapping) or set(raw) - set(SERVING_ENGINE_CLASSES) - {"basis"}:
        raise RuleTableError(f"{where}: expected milliseconds for {', '.join(SERVING_ENGINE_CLASSES)}")
    out = {}
    for key in SERVING_ENGINE_CLASSES:
        value = _number(raw, key, where)
        if value is None or not 0.0 <= value <= 100.0:
            raise RuleTableError(f"{where}.{key}: need milliseconds between 0 and 100")
        out[key] = value
    return out


MOE_KERNELS = ("int4", "other")


def _latencies(raw: Any, keys: tuple[str, ...], where: str) -> dict[str, float]:
    """Milliseconds for exactly `keys` (link classes, MoE expert kernels), 0-1 ms each; absent: none (no term)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or set(raw) != set(keys) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 <= v <= 1.0 for v in raw.values()):
        raise RuleTableError(f"{where}: expected milliseconds (0-1) for {', '.join(keys)}")
    return {k: float(v) for k, v in raw.items()}


def _parse_serving(raw: Any, source: str) -> ServingTables:
    where = f"{source}: serving"
    if not isinstance(raw, Mapping):
        raise RuleTableError(f"{where}: missing (bandwidth_efficiency, tp_efficiency, utilisation, band)")
    band = raw.get("band")
    if not (isinstance(band, list) and len(band) == 2 and all(isinstance(b, (int, float)) for b in band)
            and 0.0 < band[0] <= 1.0 <= band[1]):
        raise RuleTableError(f"{where}.band: expected [low, high] with low <= 1 <= high, e.g. [0.7, 1.3]")
    shares = raw.get("compute_utilisation")
    keys = ("decode", "prefill", "prefill_paged") if isinstance(shares, Mapping) and "prefill_paged" in shares \
        else ("decode", "prefill")
    utilisation = _shares(shares, keys, f"{where}.compute_utilisation")
    return ServingTables(
        bandwidth_efficiency=_shares(raw.get("bandwidth_efficiency"), SERVING_ENGINE_CLASSES,
                                     f"{where}.bandwidth_efficiency"),
        step_overhead_ms=_overheads(raw.get("step_overhead_ms"), f"{where}.step_overhead_ms"),
        host_bandwidth_efficiency=_shares(raw.get("host"), ("bandwidth_efficiency",), f"{where}.host")[
            "bandwidth_efficiency"],
        tp_efficiency=_shares(raw.get("tp_efficiency"), SERVING_LINKS, f"{where}.tp_efficiency"),
        decode_compute_utilisation=utilisation["decode"],
        prefill_compute_utilisation=utilisation["prefill"],
        band=(float(band[0]), float(band[1])),
        tp_allreduce_ms=_latencies(raw.get("tp_allreduce_ms"), SERVING_LINKS, f"{where}.tp_allreduce_ms"),
        moe_layer_ms=_latencies(raw.get("moe_layer_ms"), MOE_KERNELS, f"{where}.moe_layer_ms"),
        moe_min_experts=_count(raw.get("moe_min_experts", 0), f"{where}.moe_min_experts"),
        tp_pcie_low=_shares({"tp_pcie_low": raw.get("tp_pcie_low", 1.0)}, ("tp_pcie_low",), where)["tp_pcie_low"],
        prefill_paged_compute_utilisation=utilisation.get("prefill_paged"),
        moe_prefill=_shares({"moe_prefill": raw.get("moe_prefill", 1.0)}, ("moe_prefill",), where)["moe_prefill"],
    )


def _count(raw: Any, where: str) -> int:
    if not isinstance(raw, int) or isinstance(raw, bool) or not 0 <= raw <= 4096:
        raise RuleTableError(f"{where}: expected a whole number of experts (0-4096)")
    return raw


def _minimums(raw: Any, source: str) -> dict[str, int]:
    if not isinstance(raw, Mapping) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 86400
            for k, v in raw.items()):
        raise RuleTableError(f"{source}: billing_minimum_s: expected provider id -> whole seconds (0-86400)")
    return dict(raw)


def _id_list(raw: Any, source: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(item, str) and item for item in raw):
        raise RuleTableError(f"{source}: popular_gpus: expected a list of catalog GPU ids")
    return tuple(raw)


class PerGpu(Generic[T]):
    """Values worked out from one GpuSpec and one RuleTables object, kept by GPU id for those very objects.

    A catalog's specs are immutable and live as long as its snapshot; a new spec or tables object under the
    same id is worked out again. Bounded: past `limit` ids the whole memo starts over.
    """

    def __init__(self, make: Callable[[GpuSpec, RuleTables], T], limit: int = 4096) -> None:
        self._make = make
        self._limit = limit
        self._by_id: dict[str, tuple[GpuSpec, RuleTables, T]] = {}

    def __call__(self, gpu: GpuSpec, tables: RuleTables) -> T:
        found = self._by_id.get(gpu.id)
        if found is not None and found[0] is gpu and found[1] is tables:
            return found[2]
        if len(self._by_id) >= self._limit:
            self._by_id.clear()
        value = self._make(gpu, tables)
        self._by_id[gpu.id] = (gpu, tables, value)
        return value
