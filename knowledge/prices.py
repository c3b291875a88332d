"""Import price files (SkyPilot v7 CSV, our own CSV/JSON) as one transaction each.

Every row becomes an observation (history); offers hold the latest price per
provider × instance × region × tier. An accelerator name that maps to no catalog GPU
is reported as unmapped with its row count, never silently dropped.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, insert, select
from sqlmodel import Session, col

from knowledge import tables
from knowledge.snapshot import gpu_spec
from rules.types import Provider

if TYPE_CHECKING:
    from knowledge.resolve import GpuIndex

log = logging.getLogger(__name__)

# SkyPilot writes 99999999 where a provider has no spot offer (primeintellect), and 0.00 on some vast rows.
NO_PRICE_SENTINEL = Decimal("99999999")
SIZE_MIB = re.compile(r"SizeInMiB['\"]?\s*:\s*(\d+)")
FORMATS = ("skypilot", "csv", "json")
TIERS = ("on-demand", "spot", "reserved")
# Sources whose import lists a provider's whole catalog, so an offer missing from it has vanished.
FULL_CATALOG_SOURCES = ("skypilot", "gpuhunt")


class PriceImportError(ValueError):
    """The file is unusable: the message names the row and what is wrong. Nothing was changed."""


@dataclass(slots=True)
class PriceRow:
    """One observed price after mapping, before aggregation."""

    provider_id: str
    instance_type: str
    gpu_id: str
    gpu_count: int
    region: str
    tier: str
    usd_per_hour: Decimal


@dataclass(slots=True)
class ImportReport:
    file_name: str
    provider_id: str | None
    source: str
    source_version: str
    observed_at: datetime
    rows_read: int = 0
    observations: int = 0
    offers_written: int = 0
    offers_deactivated: int = 0
    unmapped: dict[str, int] = field(default_factory=dict)
    import_id: int | None = None


def file_version(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _money(text: str | None, where: str) -> Decimal | None:
    text = (text or "").strip()
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise PriceImportError(f"{where}: price {text!r} is not a number") from None
    if value < 0 or not value.is_finite():
        raise PriceImportError(f"{where}: price {text!r} is negative or not finite")
    if value == 0 or value >= NO_PRICE_SENTINEL:
        return None
    return value


def _count(text: str | None, where: str) -> int:
    try:
        value = float((text or "").strip())
    except ValueError:
        raise PriceImportError(f"{where}: GPU count {text!r} is not a number") from None
    if value < 1 or value != int(value):
        # Fractional GPUs (shared slices) are not rentable units we advise on.
        raise PriceImportError(f"{where}: GPU count {text!r} is not a whole number ≥ 1")
    return int(value)


def _memory_gib(gpu_info: str | None, count: int) -> float | None:
    """Per-GPU memory from SkyPilot's GpuInfo (the first SizeInMiB is per GPU)."""
    match = SIZE_MIB.search(gpu_info or "")
    return int(match.group(1)) / 1024 if match else None


# TPUs, Trainium and Inferentia are in the catalog (specs, names) but their offers stay unmapped: the
# engine's memory and time models are for GPU frameworks (CUDA, ROCm, Gaudi), not XLA or Neuron.
UNPRICED_STACKS = frozenset({"XLA", "Neuron"})


def _unpriced(index: GpuIndex, gpu_id: str) -> bool:
    gpus = index.gpus
    return gpu_id in gpus and gpus[gpu_id].software_stack in UNPRICED_STACKS


def read_skypilot(path: Path, provider_id: str, index: GpuIndex, unmapped: Counter[str]) -> tuple[int, list[PriceRow]]:
    """Rows of a SkyPilot v7 vms.csv; CPU-only rows are skipped, unknown accelerators counted."""
    from knowledge.resolve import resolve_cloud_accelerator

    out: list[PriceRow] = []
    read = 0
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        required = {"AcceleratorName", "AcceleratorCount", "Price", "Region"}
        missing = required - set(reader.fieldnames or [])
        if missing:
            raise PriceImportError(f"{path.name}:1: not a SkyPilot v7 catalog: missing columns {sorted(missing)}")
        for row in reader:
            where = f"{path.name}:{reader.line_num}"
            if None in row:
                raise PriceImportError(f"{where}: row has more cells than the header")
            name = (row.get("AcceleratorName") or "").strip()
            if not name:
                continue  # CPU-only instance
            read += 1
            count = _count(row.get("AcceleratorCount"), where)
            instance = (row.get("InstanceType") or "").strip()
            match = resolve_cloud_accelerator(
                index, name, memory_gib=_memory_gib(row.get("GpuInfo"), count), instance_type=instance or None, gpu_count=count
            )
            if match.status != "found" or match.gpu_id is None or _unpriced(index, match.gpu_id):
                unmapped[name] += 1
                continue
            if not instance:  # GCP prices attachable accelerators without a host VM
                instance = f"{count}x {name} (accelerator only)"
            region = (row.get("Region") or "").strip() or "unspecified"
            for tier, column in (("on-demand", "Price"), ("spot", "SpotPrice")):
                usd = _money(row.get(column), where)
                if usd is not None:
                    out.append(PriceRow(provider_id, instance, match.gpu_id, count, region, tier, usd))
    return read, out


def read_own(path: Path, fmt: str, provider_id: str | None, index: GpuIndex) -> tuple[int, list[PriceRow]]:
    """Our plain format: provider, instance_type, gpu, gpu_count, region, tier, usd_per_hour."""
    if fmt == "json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise PriceImportError(f"{path.name}: not valid JSON: {exc}") from None
        if isinstance(data, dict):
            data = data.get("offers")
        if not isinstance(data, list):
            raise PriceImportError(f"{path.name}: expected a list of offers or {{\"offers\": [...]}}")
        records = [(f"{path.name}: offer {i + 1}", r) for i, r in enumerate(data)]
    else:
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            records = [(f"{path.name}:{reader.line_num}", r) for r in reader]
    rows = [_own_row(where, rec, provider_id, index) for where, rec in records]
    return len(rows), rows


def _own_row(where: str, rec: object, provider_id: str | None, index: GpuIndex) -> PriceRow:
    if not isinstance(rec, dict):
        raise PriceImportError(f"{where}: expected an object with offer fields")
    for key in ("gpu", "usd_per_hour"):
        if rec.get(key) in (None, ""):
            raise PriceImportError(f"{where}: {key} is missing")
    match = index.resolve(str(rec["gpu"]))
    if match.status != "found" or match.gpu_id is None:
        hint = f"; did you mean {', '.join(match.candidates or match.suggestions)}" if (match.candidates or match.suggestions) else ""
        raise PriceImportError(f"{where}: gpu {rec['gpu']!r} is {match.status} in the catalog{hint}")
    tier = str(rec.get("tier") or "on-demand").strip().lower()
    if tier not in TIERS:
        raise PriceImportError(f"{where}: tier {tier!r} is not one of {', '.join(TIERS)}")
    usd = _money(str(rec["usd_per_hour"]), where)
    if usd is None:
        raise PriceImportError(f"{where}: usd_per_hour must be a positive price")
    provider = str(rec.get("provider") or provider_id or "").strip().lower()
    if not provider:
        raise PriceImportError(f"{where}: provider is missing (a column, or --provider)")
    count = _count(str(rec.get("gpu_count") or match.count or 1), where)
    instance = str(rec.get("instance_type") or f"{count}x {match.gpu_id}")
    return PriceRow(provider, instance, match.gpu_id, count, str(rec.get("region") or "unspecified"), tier, usd)


def summarise_marketplace(rows: Iterable[PriceRow]) -> list[tuple[PriceRow, Decimal, int]]:
    """A marketplace is summarised per GPU × count × tier as its median (and p10), never single machines."""
    groups: dict[tuple[str, str, int, str], list[Decimal]] = defaultdict(list)
    for r in rows:
        groups[(r.provider_id, r.gpu_id, r.gpu_count, r.tier)].append(r.usd_per_hour)
    out = []
    for (provider, gpu_id, count, tier), prices in sorted(groups.items()):
        prices.sort()
        median = Decimal(statistics.median(prices)).quantize(Decimal("0.0001"))
        p10 = prices[int(0.1 * (len(prices) - 1))]
        row = PriceRow(provider, f"{count}x {gpu_id} (marketplace median)", gpu_id, count, "any", tier, median)
        out.append((row, p10, len(prices)))
    return out


def collapse_zones(rows: Iterable[PriceRow]) -> list[PriceRow]:
    """AWS/GCP list a price per zone; an offer is per region, at its cheapest zone."""
    best: dict[tuple[str, str, str, str], PriceRow] = {}
    for r in rows:
        key = (r.provider_id, r.instance_type, r.region, r.tier)
        if key not in best or r.usd_per_hour < best[key].usd_per_hour:
            best[key] = r
    return list(best.values())


def _interconnect(gpu: tables.Gpu | None, count: int) -> str:
    """Single GPUs need no link; SXM/OAM multi-GPU instances are NVLink/Infinity Fabric boards."""
    if count == 1 or gpu is None:
        return "none" if count == 1 else "unknown"
    spec = gpu_spec(gpu)
    if spec.has_nvlink_class_link and spec.form_factor.lower().split()[0] in ("sxm", "oam", "superchip", "sxm5", "sxm4"):
        return spec.scaleup_link
    return "PCIe"


def import_prices(
    engine: Engine,
    path: Path,
    *,
    fmt: str = "skypilot",
    provider: str | None = None,
    observed_at: datetime | None = None,
) -> ImportReport:
    """Import one file in one transaction; a bad row raises PriceImportError and changes nothing."""
    from knowledge.snapshot import load_snapshot

    if fmt not in FORMATS:
        raise PriceImportError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if not path.is_file():
        raise PriceImportError(f"{path}: no such file")
    observed_at = observed_at or datetime.now(UTC)
    if observed_at.tzinfo is None:
        raise PriceImportError("--observed-at needs a time zone, e.g. 2026-11-01T00:00:00Z")
    provider_id = (provider or (path.stem if fmt == "skypilot" else "")).lower() or None
    report = ImportReport(path.name, provider_id, fmt, file_version(path), observed_at)
    snapshot = load_snapshot(engine)
    unmapped: Counter[str] = Counter()
    if fmt == "skypilot":
        if provider_id is None or provider_id not in snapshot.providers:
            raise PriceImportError(_unknown_provider(provider_id, snapshot.providers))
        report.rows_read, rows = read_skypilot(path, provider_id, snapshot.gpu_index, unmapped)
    else:
        report.rows_read, rows = read_own(path, fmt, provider_id, snapshot.gpu_index)
        for r in rows:
            if r.provider_id not in snapshot.providers:
                raise PriceImportError(_unknown_provider(r.provider_id, snapshot.providers))
    report.unmapped = dict(sorted(unmapped.items()))
    write_rows(engine, report, rows, snapshot.providers)
    return report


def _unknown_provider(provider_id: str | None, known: Iterable[str]) -> str:
    return f"provider {provider_id!r} is not in the catalog; known: {', '.join(sorted(known))}"


def write_rows(engine: Engine, report: ImportReport, rows: list[PriceRow], providers: Mapping[str, Provider]) -> None:
    """Store mapped rows as one import (observations + offers) in one transaction."""
    marketplace = {p for p, spec in providers.items() if spec.kind == "marketplace"}
    plain = collapse_zones(r for r in rows if r.provider_id not in marketplace)
    summarised = summarise_marketplace(r for r in rows if r.provider_id in marketplace)
    offers = plain + [row for row, _, _ in summarised]
    now = datetime.now(UTC)
    with Session(engine) as session, session.begin():
        gpus = {g.id: g for g in session.execute(select(tables.Gpu)).scalars()}
        run = tables.ImportRun(
            source=report.source,
            source_version=report.source_version,
            provider_id=report.provider_id,
            file_name=report.file_name,
            observed_at=report.observed_at,
            imported_at=now,
            rows_read=report.rows_read,
            offers_written=len(offers),
            unmapped_json=json.dumps(report.unmapped, ensure_ascii=False),
        )
        session.add(run)
        session.flush()
        report.import_id = run.id
        obs = [_observation(run, r, report) for r in offers]
        obs += [
            _observation(run, PriceRow(r.provider_id, f"{r.gpu_count}x {r.gpu_id} (marketplace p10)", r.gpu_id,
                                       r.gpu_count, "any", r.tier, p10), report)
            for r, p10, _ in summarised
        ]
        if obs:
            session.execute(insert(tables.PriceObservation), obs)
        report.observations = len(obs)
        report.offers_written, report.offers_deactivated = _upsert_offers(session, offers, gpus, report, providers)


def _observation(run: tables.ImportRun, r: PriceRow, report: ImportReport) -> dict[str, object]:
    return {
        "import_id": run.id, "provider_id": r.provider_id, "instance_type": r.instance_type,
        "gpu_id": r.gpu_id, "gpu_count": r.gpu_count, "region": r.region, "tier": r.tier,
        "usd_per_hour": r.usd_per_hour, "observed_at": report.observed_at,
        "source": report.source, "source_version": report.source_version,
    }


def _upsert_offers(
    session: Session, offers: list[PriceRow], gpus: Mapping[str, tables.Gpu], report: ImportReport,
    providers: Mapping[str, Provider],
) -> tuple[int, int]:
    """Latest price per key; offers of these providers missing from this import become inactive."""
    full = report.provider_id and report.source in FULL_CATALOG_SOURCES
    touched = {r.provider_id for r in offers} | ({report.provider_id} if full else set())
    existing = {
        (o.provider_id, o.instance_type, o.region, o.tier): o
        for o in session.execute(select(tables.Offer).where(col(tables.Offer.provider_id).in_(touched))).scalars()
    }
    seen = set()
    new_rows = []
    for r in offers:
        key = (r.provider_id, r.instance_type, r.region, r.tier)
        seen.add(key)
        values = {
            "gpu_id": r.gpu_id, "gpu_count": r.gpu_count, "usd_per_hour": r.usd_per_hour,
            "billing_increment_s": providers[r.provider_id].billing_increment_s,
            "interconnect": _interconnect(gpus.get(r.gpu_id), r.gpu_count),
            "observed_at": report.observed_at, "source": report.source, "active": True,
        }
        if key in existing:
            for k, v in values.items():
                setattr(existing[key], k, v)
        else:
            new_rows.append({"provider_id": r.provider_id, "instance_type": r.instance_type,
                             "region": r.region, "tier": r.tier, **values})
    if new_rows:
        session.execute(insert(tables.Offer), new_rows)
    gone = 0
    if report.source in FULL_CATALOG_SOURCES:  # a provider's full catalog: what it no longer lists is gone
        for key, offer in existing.items():
            if key not in seen and offer.active:
                offer.active = False
                gone += 1
    session.flush()
    return len(offers), gone

