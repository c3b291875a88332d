"""Import price files (SkyPilot v7 CSV, our own CSV/JSON) and live catalogs as one transaction each.

Every row becomes an observation (history); offers hold the prices in force per provider × instance × region ×
tier. What is in force: a user's or a live source's newest data, and a bundled snapshot only where neither
exists (it is a baseline, never newer than what the user gave us). An import older than the data in force is
kept as history only. An import that would switch off all of a provider's offers (an empty or truncated file)
is refused with the counts unless explicitly allowed. Nothing is dropped silently: unmapped accelerators and
skipped rows are counted in the report.
"""

from __future__ import annotations

import hashlib
import json
import logging
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, insert, select
from sqlmodel import Session, col

from knowledge import price_series, tables
from knowledge.price_readers import PriceRow, read_own, read_skypilot
from knowledge.price_validation import PriceImportError, check_observed_at
from knowledge.snapshot import gpu_spec
from rules.market.changes import PricePoint
from rules.types import Provider

if TYPE_CHECKING:
    from knowledge.snapshot import Snapshot

__all__ = ["ImportReport", "PriceImportError", "PriceRow", "import_prices", "write_rows"]
log = logging.getLogger(__name__)
FORMATS = ("skypilot", "csv", "json")
STORED_PLACES = Decimal("0.000001")  # tables.MONEY keeps six decimal places
# Sources whose import lists a provider's whole catalog, so an offer missing from it has vanished.
FULL_CATALOG_SOURCES = ("skypilot", "gpuhunt")
BUNDLED_OFFER_SOURCE = "skypilot-bundled"  # Offer.source of a bundled snapshot's prices: a baseline only
# Refuse an import that would switch off at least this share of a provider's active offers (1 = all of them).
DEFAULT_MAX_DEACTIVATED_SHARE = Decimal(1)


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
    skipped: dict[str, int] = field(default_factory=dict)
    import_id: int | None = None
    bundled: bool = False
    current: bool = True  # False: older than the data in force, stored as history only
    rows_kept: int = 0


@dataclass(frozen=True, slots=True)
class ImportPolicy:
    """How far an import may shrink a provider: refused at `max_deactivated_share` of its offers, unless allowed."""

    allow_deactivate: bool = False
    max_deactivated_share: Decimal = DEFAULT_MAX_DEACTIVATED_SHARE


def file_version(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def earliest_observation(snapshot: Snapshot) -> datetime:
    """No price can predate the oldest GPU of the catalog (January 1st of its release year)."""
    years = [g.release_year for g in snapshot.gpus.values()] or [2014]
    return datetime(min(years), 1, 1, tzinfo=UTC)


def summarise_marketplace(rows: Iterable[PriceRow]) -> list[tuple[PriceRow, Decimal, int]]:
    """A marketplace is summarised per GPU × count × tier as its median (and p10), never single machines."""
    groups: dict[tuple[str, str, int, str, str], list[Decimal]] = defaultdict(list)
    for r in rows:
        groups[(r.provider_id, r.gpu_id, r.gpu_count, r.tier, r.market)].append(r.usd_per_hour)
    out = []
    for (provider, gpu_id, count, tier, market), prices in sorted(groups.items()):
        prices.sort()
        median = Decimal(statistics.median(prices)).quantize(Decimal("0.0001"))
        p10 = prices[int(0.1 * (len(prices) - 1))]
        row = PriceRow(provider, f"{count}x {gpu_id} (marketplace median)", gpu_id, count, "any", tier, median, market)
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
    bundled: bool = False,
    source_version: str | None = None,
    policy: ImportPolicy = ImportPolicy(),
    now: datetime | None = None,
) -> ImportReport:
    """Import one file in one transaction; a bad row raises PriceImportError and changes nothing."""
    from knowledge.snapshot import load_snapshot

    if fmt not in FORMATS:
        raise PriceImportError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if not path.is_file():
        raise PriceImportError(f"{path}: no such file")
    now = now or datetime.now(UTC)
    snapshot = load_snapshot(engine)
    observed_at = check_observed_at(observed_at or now, now=now, earliest=earliest_observation(snapshot))
    provider_id = (provider or (path.stem if fmt == "skypilot" else "")).lower() or None
    report = ImportReport(path.name, provider_id, fmt, source_version or file_version(path), observed_at,
                          bundled=bundled)
    if fmt == "skypilot":
        if provider_id is None or provider_id not in snapshot.providers:
            raise PriceImportError(_unknown_provider(provider_id, snapshot.providers))
        result = read_skypilot(path, snapshot.providers[provider_id], snapshot.gpu_index)
    else:
        result = read_own(path, fmt, provider_id, snapshot.gpu_index, snapshot.providers)
    report.rows_read = result.rows_read
    report.rows_kept = result.rows_kept
    report.unmapped = dict(sorted(result.unmapped.items()))
    report.skipped = dict(sorted(result.skipped.items()))
    write_rows(engine, report, result.rows, snapshot.providers, policy=policy)
    return report


def _unknown_provider(provider_id: str | None, known: Iterable[str]) -> str:
    return f"provider {provider_id!r} is not in the catalog; known: {', '.join(sorted(known))}"


def _rank(bundled: bool, observed_at: datetime, run_id: int) -> tuple[bool, datetime, int]:
    """Which of a feed's imports is in force: a non-bundled one before any bundled one, then the newest."""
    return (not bundled, observed_at, run_id)


def write_rows(engine: Engine, report: ImportReport, rows: list[PriceRow], providers: Mapping[str, Provider], *,
               policy: ImportPolicy = ImportPolicy()) -> None:
    """Store mapped rows as one import (observations, and offers when it is in force) in one transaction."""
    from knowledge.db import as_utc

    marketplace = {p for p, spec in providers.items() if spec.kind == "marketplace"}
    plain = collapse_zones(r for r in rows if r.provider_id not in marketplace)
    summarised = summarise_marketplace(r for r in rows if r.provider_id in marketplace)
    offers = plain + [row for row, _, _ in summarised]
    report.rows_kept = report.rows_kept or len(rows)  # a live catalog: one price per item
    full = bool(report.provider_id) and report.source in FULL_CATALOG_SOURCES
    if not rows and not policy.allow_deactivate:
        raise PriceImportError(
            f"{report.file_name}: {report.rows_read} rows read, none kept (skipped: {report.skipped or 'none'}, "
            f"unmapped: {sum(report.unmapped.values())}): an empty or truncated file would switch off "
            f"{report.provider_id or 'its provider'}'s offers; nothing imported (pass --allow-deactivate to mean it)")
    with Session(engine) as session, session.begin():
        gpus = {g.id: g for g in session.execute(select(tables.Gpu)).scalars()}
        feed_runs = _feed_runs(session, report)
        run = tables.ImportRun(
            source=report.source, source_version=report.source_version, provider_id=report.provider_id,
            file_name=report.file_name, observed_at=report.observed_at, imported_at=datetime.now(UTC),
            rows_read=report.rows_read, offers_written=len(offers),
            unmapped_json=json.dumps(report.unmapped, ensure_ascii=False),
            skipped_json=json.dumps(report.skipped, ensure_ascii=False), bundled=report.bundled,
        )
        session.add(run)
        session.flush()
        assert run.id is not None
        report.import_id = run.id
        mine = _rank(report.bundled, report.observed_at, run.id)
        report.current = all(mine > _rank(b, as_utc(at), i) for i, b, at in feed_runs) if full else True
        run.current = report.current
        observed = offers + [
            PriceRow(r.provider_id, f"{r.gpu_count}x {r.gpu_id} {price_series.P10_MARK}", r.gpu_id, r.gpu_count, "any",
                     r.tier, p10, r.market)
            for r, p10, _ in summarised
        ]
        obs = [_observation(run, r, report) for r in observed]
        if obs:
            session.execute(insert(tables.PriceObservation), obs)
        price_series.store(session.connection(), run.id, price_series.of_points(
            (PricePoint(r.gpu_id, r.provider_id, r.instance_type, r.gpu_count, r.region, r.tier,
                        r.usd_per_hour.quantize(STORED_PLACES, ROUND_HALF_UP), report.observed_at, r.market)
             for r in observed), frozenset(marketplace)))  # the prices as the observations store them
        report.observations = len(obs)
        if not report.current:
            report.offers_written, report.offers_deactivated = 0, 0
            run.offers_written = 0
            return
        report.offers_written, report.offers_deactivated = _upsert_offers(session, offers, gpus, report, providers,
                                                                          policy)


def _feed_runs(session: Session, report: ImportReport) -> list[tuple[int, bool, datetime]]:
    """The earlier imports of this import's feed (a provider's catalog): id, bundled, observed_at."""
    if not report.provider_id:
        return []
    q = select(col(tables.ImportRun.id), col(tables.ImportRun.bundled), col(tables.ImportRun.observed_at)).where(
        col(tables.ImportRun.provider_id) == report.provider_id)
    return [(int(i), bool(b), at) for i, b, at in session.execute(q)]


def _observation(run: tables.ImportRun, r: PriceRow, report: ImportReport) -> dict[str, object]:
    return {
        "import_id": run.id, "provider_id": r.provider_id, "instance_type": r.instance_type,
        "gpu_id": r.gpu_id, "gpu_count": r.gpu_count, "region": r.region, "tier": r.tier,
        "usd_per_hour": r.usd_per_hour, "observed_at": report.observed_at,
        "source": report.source, "source_version": report.source_version, "market": r.market,
    }


def _upsert_offers(
    session: Session, offers: list[PriceRow], gpus: Mapping[str, tables.Gpu], report: ImportReport,
    providers: Mapping[str, Provider], policy: ImportPolicy,
) -> tuple[int, int]:
    """Prices in force per key; offers of a provider's full catalog missing from this import become inactive."""
    from knowledge.db import as_utc

    full = bool(report.provider_id) and report.source in FULL_CATALOG_SOURCES
    touched = {r.provider_id for r in offers} | ({report.provider_id} if full and report.provider_id else set())
    existing = {
        (o.provider_id, o.instance_type, o.region, o.tier): o
        for o in session.execute(select(tables.Offer).where(col(tables.Offer.provider_id).in_(touched))).scalars()
    }
    source = BUNDLED_OFFER_SOURCE if report.bundled else report.source
    seen = set()
    new_rows = []
    for r in offers:
        key = (r.provider_id, r.instance_type, r.region, r.tier)
        seen.add(key)
        old = existing.get(key)
        if old is not None and not full and _rank(old.source == BUNDLED_OFFER_SOURCE, as_utc(old.observed_at), 0) > \
                _rank(report.bundled, report.observed_at, 0):
            continue  # a custom file older than the price in force: history only for this offer
        values = {
            "gpu_id": r.gpu_id, "gpu_count": r.gpu_count, "usd_per_hour": r.usd_per_hour,
            "billing_increment_s": providers[r.provider_id].billing_increment_s,
            "interconnect": _interconnect(gpus.get(r.gpu_id), r.gpu_count),
            "observed_at": report.observed_at, "source": source, "active": True, "market": r.market,
        }
        if old is not None:
            for k, v in values.items():
                setattr(old, k, v)
        else:
            new_rows.append({"provider_id": r.provider_id, "instance_type": r.instance_type,
                             "region": r.region, "tier": r.tier, **values})
    if new_rows:
        session.execute(insert(tables.Offer), new_rows)
    gone = 0
    if full:  # a provider's full catalog: what it no longer lists is gone
        active = [o for o in existing.values() if o.active and o.provider_id == report.provider_id]
        for key, offer in existing.items():
            if key not in seen and offer.active:
                offer.active = False
                gone += 1
        _guard_deactivation(report, gone, len(active), policy)
    session.flush()
    return len(offers), gone


def _guard_deactivation(report: ImportReport, gone: int, active: int, policy: ImportPolicy) -> None:
    """Refuse (roll back) an import that would switch off too large a share of a provider's offers."""
    if policy.allow_deactivate or not gone or not active:
        return
    if Decimal(gone) / Decimal(active) >= policy.max_deactivated_share:
        raise PriceImportError(
            f"{report.file_name}: would switch off {gone} of {report.provider_id}'s {active} offers "
            f"({report.rows_read} rows read, {report.rows_kept} kept); nothing imported "
            "(pass --allow-deactivate if the provider really stopped listing them)")
