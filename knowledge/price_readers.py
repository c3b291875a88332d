"""Price files to validated rows: SkyPilot v7 catalogs and our own CSV/JSON format.

Every value passes `knowledge.price_validation`; a bad row refuses the whole file, naming the row. Rows that are
valid but cannot be used are counted by reason (`skipped`): no price at all, a GCP accelerator with no host VM
in its zone. Accelerators that map to no catalog GPU are counted by name (`unmapped`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from knowledge.markets import TIERS, classify
from knowledge.price_validation import (
    PriceImportError,
    check_cells,
    check_rate,
    check_text,
    decode_text,
    parse_count,
    parse_money,
)
from rules.types import MARKETS, Provider

if TYPE_CHECKING:
    from knowledge.resolve import GpuIndex

SIZE_MIB = re.compile(r"SizeInMiB['\"]?\s*:\s*(\d+)")
# TPUs, Trainium and Inferentia are in the catalog (specs, names) but their offers stay unmapped: the engine's
# memory and time models are for GPU frameworks (CUDA, ROCm, Gaudi), not XLA or Neuron.
UNPRICED_STACKS = frozenset({"XLA", "Neuron"})
MAX_JSON_DEPTH = 64


@dataclass(slots=True)
class PriceRow:
    """One observed price of a whole machine (or cluster), after mapping, before aggregation."""

    provider_id: str
    instance_type: str
    gpu_id: str
    gpu_count: int
    region: str
    tier: str
    usd_per_hour: Decimal
    market: str = "on-demand"


@dataclass(slots=True)
class ReadResult:
    rows_read: int
    rows: list[PriceRow]
    unmapped: Counter[str]
    skipped: Counter[str]
    rows_kept: int = 0  # rows that gave at least one price (a row can give an on-demand and a spot price)


def _memory_gib(gpu_info: object) -> float | None:
    """Per-GPU memory from SkyPilot's GpuInfo (the first SizeInMiB is per GPU)."""
    match = SIZE_MIB.search(str(gpu_info or ""))
    return int(match.group(1)) / 1024 if match else None


def _unpriced(index: GpuIndex, gpu_id: str) -> bool:
    gpus = index.gpus
    return gpu_id in gpus and gpus[gpu_id].software_stack in UNPRICED_STACKS


def csv_records(path: Path, text: str, required: set[str] | None = None) -> list[tuple[str, dict[str | None, object]]]:
    """(file:line, row) for each data row; surplus or missing cells are refused with the row."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    if not header:
        raise PriceImportError(f"{path.name}:1: no header line")
    for i, name in enumerate(header):
        check_text(name, f"{path.name}:1", f"column {i + 1}")
    missing = (required or set()) - set(header)
    if missing:
        raise PriceImportError(f"{path.name}:1: not a SkyPilot v7 catalog: missing columns {sorted(missing)}")
    out = []
    for row in reader:
        where = f"{path.name}:{reader.line_num}"
        check_cells(row, where, len(header))
        out.append((where, dict(row)))
    return out


def read_skypilot(path: Path, provider: Provider, index: GpuIndex) -> ReadResult:
    """Rows of a SkyPilot v7 vms.csv; CPU-only rows are skipped, GCP accelerators joined with their host VM."""
    from knowledge.gcp_hosts import join_hosts
    from knowledge.resolve import resolve_cloud_accelerator

    records = csv_records(path, decode_text(path), {"AcceleratorName", "AcceleratorCount", "Price", "Region"})
    result = ReadResult(0, [], Counter(), Counter())
    accelerator_rows = sum(1 for _, r in records if check_text(r.get("AcceleratorName"), "", ""))
    if provider.id == "gcp":
        records = join_hosts(records, result.skipped)
    result.rows_read = accelerator_rows
    marketplace = provider.kind == "marketplace"
    for where, row in records:
        name = check_text(row.get("AcceleratorName"), where, "AcceleratorName")
        if not name:
            continue  # a CPU-only instance (or a GCP host VM row)
        count = parse_count(row.get("AcceleratorCount"), where)
        instance = check_text(row.get("InstanceType"), where, "InstanceType")
        region = check_text(row.get("Region"), where, "Region") or "unspecified"
        prices = [(tier, parse_money(row.get(column), where, label))
                  for tier, column, label in (("on-demand", "Price", "price"), ("spot", "SpotPrice", "spot price"))]
        match = resolve_cloud_accelerator(index, name, memory_gib=_memory_gib(row.get("GpuInfo")),
                                          instance_type=instance or None, gpu_count=count)
        if match.status != "found" or match.gpu_id is None or _unpriced(index, match.gpu_id):
            result.unmapped[name] += 1
            continue
        if not instance or all(usd is None for _, usd in prices):
            result.skipped["no_price" if instance else "no_host_vm"] += 1
            continue
        result.rows_kept += 1
        for source_tier, usd in prices:
            if usd is None:
                continue
            tier, market = classify(provider.id, source_tier, marketplace=marketplace)
            check_rate(usd, count, where, "price" if source_tier == "on-demand" else "spot price")
            result.rows.append(PriceRow(provider.id, instance, match.gpu_id, count, region, tier, usd, market))
    return result


def _json_depth(value: object, limit: int) -> int:
    """Nesting depth, stopping at `limit` (no recursion: 100,000 levels must not exhaust the stack)."""
    stack = [(value, 1)]
    deepest = 0
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return deepest


def own_records(path: Path, fmt: str) -> list[tuple[str, Mapping[str, object]]]:
    text = decode_text(path)
    if fmt != "json":
        return [(where, {str(k): v for k, v in row.items()}) for where, row in csv_records(path, text)]
    if text.count("[") + text.count("{") > 2 * MAX_JSON_DEPTH and _bracket_depth(text) > MAX_JSON_DEPTH:
        raise PriceImportError(f"{path.name}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise PriceImportError(f"{path.name}: not valid JSON: {exc}") from None
    if isinstance(data, dict):
        data = data.get("offers")
    if not isinstance(data, list):
        raise PriceImportError(f"{path.name}: expected a list of offers or {{\"offers\": [...]}}")
    if _json_depth(data, MAX_JSON_DEPTH) > 3:
        raise PriceImportError(f"{path.name}: an offer must be an object of plain values")
    records: list[tuple[str, Mapping[str, object]]] = []
    for i, r in enumerate(data):
        where = f"{path.name}: offer {i + 1}"
        if not isinstance(r, dict):
            raise PriceImportError(f"{where}: expected an object with offer fields")
        records.append((where, r))
    return records


def _bracket_depth(text: str) -> int:
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _refuse_constant(name: str) -> object:
    raise PriceImportError(f"JSON value {name} is not a number we accept")


OWN_FIELDS = frozenset({"provider", "instance_type", "gpu", "gpu_count", "region", "tier", "usd_per_hour", "market"})


def read_own(path: Path, fmt: str, provider_id: str | None, index: GpuIndex,
             providers: Mapping[str, Provider]) -> ReadResult:
    """Our plain format: provider, instance_type, gpu, gpu_count, region, tier, usd_per_hour (market optional)."""
    records = own_records(path, fmt)
    rows = [own_row(where, rec, provider_id, index, providers) for where, rec in records]
    return ReadResult(len(rows), rows, Counter(), Counter(), len(rows))


def own_row(where: str, rec: Mapping[str, object], provider_id: str | None, index: GpuIndex,
            providers: Mapping[str, Provider]) -> PriceRow:
    unknown = sorted(k for k in rec if k not in OWN_FIELDS and str(k).strip())
    if unknown:
        raise PriceImportError(f"{where}: unknown field(s) {', '.join(repr(k)[:40] for k in unknown[:3])}; "
                               f"expected {', '.join(sorted(OWN_FIELDS))}")
    for key, value in rec.items():
        if not isinstance(value, (str, int, float)) and value is not None or isinstance(value, bool):
            raise PriceImportError(f"{where}: {key} must be text or a number")
    values = {k: check_text(v, where, k) for k, v in rec.items()}
    for key in ("gpu", "usd_per_hour"):
        if not values.get(key):
            raise PriceImportError(f"{where}: {key} is missing")
    match = index.resolve(values["gpu"])
    if match.status != "found" or match.gpu_id is None:
        options = match.candidates or match.suggestions
        hint = f"; did you mean {', '.join(options)}" if options else ""
        raise PriceImportError(f"{where}: gpu {values['gpu'][:80]!r} is {match.status} in the catalog{hint}")
    tier = (values.get("tier") or "on-demand").lower()
    if tier not in TIERS:
        raise PriceImportError(f"{where}: tier {tier[:40]!r} is not one of {', '.join(TIERS)}")
    provider = (values.get("provider") or provider_id or "").lower()
    if not provider:
        raise PriceImportError(f"{where}: provider is missing (a column, or --provider)")
    spec = providers.get(provider)
    if spec is None:
        raise PriceImportError(f"{where}: provider {provider[:40]!r} is not in the catalog; known: "
                               f"{', '.join(sorted(providers))}")
    count = parse_count(values.get("gpu_count") or match.count or 1, where)
    usd = parse_money(values["usd_per_hour"], where, "usd_per_hour")
    if usd is None:
        raise PriceImportError(f"{where}: usd_per_hour must be a positive price")
    check_rate(usd, count, where, "usd_per_hour")
    tier, market = _own_market(values.get("market", ""), tier, provider, spec, where)
    instance = values.get("instance_type") or f"{count}x {match.gpu_id}"
    return PriceRow(provider, instance, match.gpu_id, count, values.get("region") or "unspecified", tier, usd, market)


def _own_market(text: str, tier: str, provider: str, spec: Provider, where: str) -> tuple[str, str]:
    if not text:
        return classify(provider, tier, marketplace=spec.kind == "marketplace")
    market = text.lower()
    if market not in MARKETS:
        raise PriceImportError(f"{where}: market {market[:40]!r} is not one of {', '.join(MARKETS)}")
    if market in ("spot", "auction") and tier != "spot":
        raise PriceImportError(f"{where}: market {market} can be interrupted: its tier must be spot")
    return tier, market
