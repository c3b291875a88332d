"""GCP prices a machine, not a card: an accelerator row of the SkyPilot catalog is joined with its host VM.

On GCP the GPU is billed apart from the VM it is attached to (https://cloud.google.com/compute/gpus-pricing), and
SkyPilot's gcp/vms.csv lists the accelerator alone (empty InstanceType). The rule is SkyPilot's own
(`sky/catalog/gcp_catalog.py`, `list_accelerators`): per region and zone of the accelerator row, the host is
the cheapest VM of the types the GPU requires (A2 for A100, A3 for H100/H200, G2 for L4, A4 for B200), or for
GPUs attached to N1 machines the cheapest n1 VM with at least the table's vCPUs and 4 GiB per vCPU
(`_DEFAULT_GPU_MEMORY_CPU_RATIO`). The machine's price is the accelerator's plus the host's, on-demand and spot.
A row whose zone lists no such host cannot be priced whole and is dropped (counted as `no_host_vm`).
The table is `knowledge/data/prices/gcp_hosts.csv`.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path

from knowledge.price_validation import parse_count, parse_money

HOSTS_FILE = Path(__file__).parent / "data" / "prices" / "gcp_hosts.csv"
MEMORY_GIB_PER_VCPU = 4  # SkyPilot's _DEFAULT_GPU_MEMORY_CPU_RATIO
Row = Mapping[str | None, object]


@dataclass(frozen=True, slots=True)
class HostRule:
    """Which VMs may carry `count` of one accelerator: named types, or an N1 VM with at least `min_vcpus`."""

    host_types: tuple[str, ...]
    min_vcpus: int = 0


@lru_cache(maxsize=1)
def host_rules() -> dict[tuple[str, int], HostRule]:
    """The host table, validated when read: a bad line stops the import with file and line."""
    rules: dict[tuple[str, int], HostRule] = {}
    with HOSTS_FILE.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        for row in reader:
            types = tuple((row.get("host_types") or "").split())
            vcpus = int(row["min_vcpus"]) if row.get("min_vcpus") else 0
            if not types or (types == ("n1",)) != (vcpus > 0):
                raise ValueError(f"{HOSTS_FILE.name}:{reader.line_num}: host_types and min_vcpus disagree")
            rules[(row["accelerator"], int(row["count"]))] = HostRule(types, vcpus)
    return rules


def rule_for(accelerator: str, count: int) -> HostRule | None:
    rules = host_rules()
    return rules.get((accelerator, count)) or rules.get(("*", count))


@dataclass(frozen=True, slots=True)
class HostVm:
    instance_type: str
    vcpus: float
    memory_gib: float
    price: Decimal | None
    spot_price: Decimal | None


def _decimal(value: object) -> Decimal | None:
    try:
        amount = Decimal(str(value or "").strip())
    except InvalidOperation:
        return None
    return amount if amount.is_finite() and amount > 0 else None


def _float(value: object) -> float:
    try:
        return float(str(value or "0"))
    except ValueError:
        return 0.0


def hosts_by_zone(rows: Iterable[Row]) -> dict[tuple[str, str], list[HostVm]]:
    """The catalog's VM rows (no accelerator) per (region, zone)."""
    out: dict[tuple[str, str], list[HostVm]] = {}
    for r in rows:
        name = str(r.get("InstanceType") or "").strip()
        if not name or str(r.get("AcceleratorName") or "").strip():
            continue
        zone = (str(r.get("Region") or "").strip(), str(r.get("AvailabilityZone") or "").strip())
        out.setdefault(zone, []).append(HostVm(name, _float(r.get("vCPUs")), _float(r.get("MemoryGiB")),
                                               _decimal(r.get("Price")), _decimal(r.get("SpotPrice"))))
    return out


def pick_host(rule: HostRule, candidates: Sequence[HostVm]) -> HostVm | None:
    """The cheapest VM in the zone that can carry the accelerators (SkyPilot's `_get_host_instance_type`)."""
    if rule.min_vcpus:
        fits = [h for h in candidates if h.instance_type.startswith("n1-") and h.vcpus >= rule.min_vcpus
                and h.memory_gib >= rule.min_vcpus * MEMORY_GIB_PER_VCPU]
    else:
        fits = [h for h in candidates if h.instance_type in rule.host_types]
    priced = [h for h in fits if h.price is not None]
    return min(priced, key=lambda h: (h.price, h.instance_type)) if priced else None


Record = tuple[str, dict[str | None, object]]  # (file:line, row)


def join_hosts(records: Sequence[Record], skipped: Counter[str]) -> list[Record]:
    """Accelerator rows priced as whole machines: InstanceType = the host, Price/SpotPrice = accelerator + host.

    Every accelerator row is validated first (a bad price is refused even when the row would be dropped).
    Rows that already name an instance, TPU rows and VM rows pass through unchanged.
    """
    zones = hosts_by_zone(r for _, r in records)
    out: list[Record] = []
    for where, r in records:
        name = str(r.get("AcceleratorName") or "").strip()
        if not name or str(r.get("InstanceType") or "").strip() or name.lower().startswith("tpu"):
            out.append((where, r))
            continue
        count = parse_count(r.get("AcceleratorCount"), where)
        acc_price, acc_spot = parse_money(r.get("Price"), where), parse_money(r.get("SpotPrice"), where, "spot price")
        rule = rule_for(name, count)
        zone = (str(r.get("Region") or "").strip(), str(r.get("AvailabilityZone") or "").strip())
        host = pick_host(rule, zones.get(zone, [])) if rule is not None else None
        if host is None or host.price is None:
            skipped["no_host_vm"] += 1
            continue
        out.append((where, _joined(r, host, name, count, acc_price, acc_spot)))
    return out


def _joined(r: Mapping[str | None, object], host: HostVm, name: str, count: int, acc_price: Decimal | None,
            acc_spot: Decimal | None) -> dict[str | None, object]:
    price = acc_price + host.price if acc_price is not None and host.price is not None else None
    spot = acc_spot + host.spot_price if acc_spot is not None and host.spot_price is not None else None
    joined = dict(r)
    joined.update({"InstanceType": f"{host.instance_type} + {count}x {name}", "Price": price, "SpotPrice": spot,
                   "vCPUs": host.vcpus, "MemoryGiB": host.memory_gib})
    return joined
