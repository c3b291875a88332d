"""Live prices through dstack's `gpuhunt` catalog: one import (one transaction) per provider.

gpuhunt publishes one catalog per provider (`{base}/{provider}/version` and
`{base}/{provider}/{version}/catalog.zip`, base = GPUHUNT_CATALOG_URL or its S3 bucket). We load
it with `gpuhunt.Catalog.load()`, which keeps going when one provider fails, so a failing provider
is recorded (with its error) and keeps its last imported prices, shown with their age.
"""

from __future__ import annotations

import logging
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from sqlalchemy import Engine

from knowledge import digest_store
from rules.types import Provider

if TYPE_CHECKING:
    from knowledge.price_readers import PriceRow
    from knowledge.resolve import GpuIndex
    from knowledge.snapshot import Snapshot

log = logging.getLogger(__name__)
SOURCE = "gpuhunt"
VERSION_DATE = re.compile(r"^(\d{8})(?:\D|$)")
# gpuhunt provider name → our provider id (knowledge/data/providers.csv).
PROVIDER_IDS = {
    "aws": "aws", "azure": "azure", "gcp": "gcp", "lambdalabs": "lambda", "nebius": "nebius", "oci": "oci",
    "runpod": "runpod", "verda": "verda", "cloudrift": "cloudrift", "vastai": "vast",
}


class CatalogItem(Protocol):
    """What we read of a `gpuhunt.CatalogItem` (gpuhunt ships no type information)."""

    @property
    def instance_name(self) -> str: ...
    @property
    def location(self) -> str: ...
    @property
    def price(self) -> float: ...
    @property
    def gpu_count(self) -> int: ...
    @property
    def gpu_name(self) -> str | None: ...
    @property
    def gpu_memory(self) -> float | None: ...
    @property
    def spot(self) -> bool: ...


class ProviderCatalog(Protocol):
    """What we read of a `gpuhunt` provider catalog: its version and items."""

    @property
    def version(self) -> str: ...
    @property
    def items(self) -> Sequence[CatalogItem]: ...


@dataclass(slots=True)
class ProviderRefresh:
    """The outcome for one provider: imported (with the import report) or failed (with the error)."""

    provider: str  # gpuhunt name
    provider_id: str
    ok: bool
    catalog_version: str | None = None
    items: int = 0
    observations: int = 0
    unmapped: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    import_id: int | None = None
    observed_at: datetime | None = None  # the catalog's own date (its version), not the fetch time


@contextmanager
def _catalog_url(url: str | None) -> Iterator[None]:
    """gpuhunt reads its base URL from GPUHUNT_CATALOG_URL; set it for this load only."""
    old = os.environ.get("GPUHUNT_CATALOG_URL")
    if url:
        os.environ["GPUHUNT_CATALOG_URL"] = url
    try:
        yield
    finally:
        if url:
            if old is None:
                os.environ.pop("GPUHUNT_CATALOG_URL", None)
            else:
                os.environ["GPUHUNT_CATALOG_URL"] = old


class _OneLineFailures(logging.Filter):
    """gpuhunt logs every provider catalog it cannot fetch with a full traceback (`logger.exception`),
    including providers nobody asked for. Keep the line and the error, drop the traceback: the failure
    of each wanted provider is recorded in its ProviderRefresh and in `prices status`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            cause = exc.__cause__ or exc.__context__
            shown = cause if cause is not None and not str(exc) else exc
            record.msg = f"{record.getMessage()} ({type(shown).__name__}: {shown})"
            record.args = None
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


@contextmanager
def _quiet_gpuhunt() -> Iterator[None]:
    logger = logging.getLogger("gpuhunt._internal.catalog")
    one_line = _OneLineFailures()
    logger.addFilter(one_line)
    try:
        yield
    finally:
        logger.removeFilter(one_line)


def fetch_catalogs(catalog_url: str | None) -> tuple[dict[str, ProviderCatalog], str | None]:
    """Every offline provider catalog gpuhunt could load ({name: ProviderCatalog}), or the error if none."""
    import gpuhunt

    catalog = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
    with _catalog_url(catalog_url), _quiet_gpuhunt():
        try:
            catalog.load()
        except Exception as exc:  # GPUHuntError when no provider loaded (network down, bad URL)
            log.warning("gpuhunt: no catalog loaded: %s", exc)
            return {}, f"{type(exc).__name__}: {exc}"
    return dict(catalog.catalog), None


def version_date(version: str | None, fetched_at: datetime) -> datetime:
    """The source's date of a gpuhunt catalog: its version starts with the UTC day it was collected
    (`date +%Y%m%d`-RUN, dstackai/gpuhunt .github/scripts/publish_catalog.sh); else the time we fetched it."""
    match = VERSION_DATE.match(version or "")
    if match is None:
        return fetched_at
    try:
        day = datetime.strptime(match.group(1), "%Y%m%d").replace(tzinfo=UTC)
    except ValueError:
        return fetched_at
    return day if day <= fetched_at else fetched_at


def price_rows(items: Iterable[CatalogItem], provider: Provider, index: GpuIndex, unmapped: Counter[str],
               skipped: Counter[str]) -> list[PriceRow]:
    """gpuhunt CatalogItems → the price importer's rows, through the same validation as a file's rows;
    CPU-only items skipped, unknown GPUs counted, a bad item refuses the provider's catalog (named)."""
    from knowledge.markets import classify
    from knowledge.price_readers import PriceRow
    from knowledge.price_validation import check_rate, check_text, parse_count, parse_money
    from knowledge.resolve import resolve_cloud_accelerator

    rows = []
    for n, item in enumerate(items, start=1):
        where = f"gpuhunt:{provider.id} item {n}"
        if not item.gpu_count or not item.gpu_name:
            continue  # a CPU-only instance
        count = parse_count(item.gpu_count, where)
        name = check_text(item.gpu_name, where, "gpu_name")
        usd = parse_money(item.price, where)
        if usd is None:
            skipped["no_price"] += 1
            continue
        match = resolve_cloud_accelerator(index, name, memory_gib=item.gpu_memory, instance_type=item.instance_name)
        if match.status != "found" or match.gpu_id is None:
            unmapped[name] += 1
            continue
        tier, market = classify(provider.id, "spot" if item.spot else "on-demand",
                                marketplace=provider.kind == "marketplace")
        check_rate(usd, count, where)
        rows.append(PriceRow(provider.id, check_text(item.instance_name, where, "instance_name"), match.gpu_id, count,
                             check_text(item.location, where, "location") or "unspecified", tier, usd, market))
    return rows


def import_provider(
    engine: Engine, snapshot: Snapshot, name: str, provider_catalog: ProviderCatalog, *, now: datetime
) -> ProviderRefresh:
    """One provider's catalog as one import run (observations + offers), in one transaction."""
    from importlib.metadata import version as package_version

    from knowledge.prices import ImportReport, write_rows

    provider_id = PROVIDER_IDS.get(name, name)
    result = ProviderRefresh(name, provider_id, False, provider_catalog.version, len(provider_catalog.items))
    if provider_id not in snapshot.providers:
        result.error = f"provider {provider_id!r} is not in the catalog (knowledge/data/providers.csv)"
        return result
    unmapped: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    rows = price_rows(provider_catalog.items, snapshot.providers[provider_id], snapshot.gpu_index, unmapped, skipped)
    version = f"gpuhunt {package_version('gpuhunt')}; catalog {provider_catalog.version}"
    observed = version_date(provider_catalog.version, now)
    report = ImportReport(f"gpuhunt:{name}", provider_id, SOURCE, version, observed, rows_read=len(provider_catalog.items))
    report.unmapped = dict(sorted(unmapped.items()))
    report.skipped = dict(sorted(skipped.items()))
    write_rows(engine, report, rows, dict(snapshot.providers))
    result.ok, result.observations, result.unmapped, result.import_id = True, report.observations, report.unmapped, report.import_id
    result.observed_at = observed
    return result


def refresh(engine: Engine, *, catalog_url: str | None = None, providers: Iterable[str] = (), now: datetime | None = None) -> list[ProviderRefresh]:
    """Load gpuhunt's catalogs and import each wanted provider; failures are recorded, earlier data stays."""
    from knowledge.snapshot import load_snapshot

    now = now or datetime.now(UTC)
    wanted = [p for p in providers] or [p for p in PROVIDER_IDS if p != "vastai"]  # vastai is online-only
    catalogs, error = fetch_catalogs(catalog_url)
    snapshot = load_snapshot(engine)
    results = []
    for name in wanted:
        cat = catalogs.get(name)
        if cat is None:
            res = ProviderRefresh(name, PROVIDER_IDS.get(name, name), False, error=error or "catalog could not be loaded")
        else:
            try:
                res = import_provider(engine, snapshot, name, cat, now=now)
            except Exception as exc:  # a bad catalog must not stop the other providers; nothing was written
                log.exception("gpuhunt import of %s failed", name)
                res = ProviderRefresh(name, PROVIDER_IDS.get(name, name), False, cat.version, error=f"{type(exc).__name__}: {exc}")
        digest_store.record_source(engine, source=SOURCE, provider_id=res.provider_id, now=now,
                                   version=res.catalog_version if res.ok else None, error=None if res.ok else res.error)
        results.append(res)
    return results
