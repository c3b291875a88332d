"""Property tests (hypothesis) for every price format: SkyPilot CSV, our CSV, our JSON, gpuhunt catalog items.

Whatever the bytes, a reader either returns rows that satisfy the validation layer's promises (finite prices within
the per-GPU-hour range, whole counts within a cluster's size, names without control characters, a known market kind)
or refuses with PriceImportError; never another exception. Through the database, a refused import changes nothing.
`pytest tests/test_prices_properties.py --hypothesis-show-statistics` prints how many inputs each test ran.
"""

from __future__ import annotations

import csv
import json
import tempfile
import unicodedata
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, func, select

from knowledge import tables
from knowledge.price_readers import PriceRow, read_own, read_skypilot
from knowledge.price_validation import MAX_GPUS_PER_ROW, MAX_USD_PER_GPU_HOUR, MIN_USD_PER_GPU_HOUR, PriceImportError
from knowledge.setup import BUNDLED_PRICES
from rules.types import MARKETS

LAMBDA_ROWS = list(csv.reader((BUNDLED_PRICES / "lambda.csv").read_text(encoding="utf-8").splitlines()))
HEADER = LAMBDA_ROWS[0]
REAL = [r for r in LAMBDA_ROWS[1:80] if r[HEADER.index("AcceleratorName")]]
OWN_HEADER = ["provider", "instance_type", "gpu", "gpu_count", "region", "tier", "usd_per_hour", "market"]

NUMBERS = st.sampled_from(["NaN", "sNaN", "-nan", "inf", "-inf", "Infinity", "1e20", "1e400", "-1", "0", "0.0",
                           "99999999", "1e-9", "0.5", "1", "8", "8.0", "2.49", "1_000", " 3 ", "", "0x10", "1e308",
                           "１２", "٣"])
TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
CELL = st.one_of(NUMBERS, TEXT, st.sampled_from(["H100", "A100-80GB", "RTX4090", "us-east-1", "gpu_1x_h100_sxm5",
                                                  "on-demand", "spot", "reserved", "auction", "marketplace"]))
ENCODINGS = st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16", "cp1252"])


def _write(data: bytes, suffix: str) -> Path:
    handle = tempfile.NamedTemporaryFile(delete=False, suffix=suffix, prefix="lambda")
    handle.write(data)
    handle.close()
    return Path(handle.name)


def _encode(text: str, encoding: str) -> bytes:
    return text.encode(encoding, errors="replace")


def _csv(rows: list[list[str]]) -> str:
    import io

    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


@st.composite
def skypilot_files(draw: st.DrawFn) -> bytes:
    """lambda.csv's header and real rows, with cells swapped for hostile values, cells added, bytes injected."""
    rows = [list(r) for r in draw(st.lists(st.sampled_from(REAL), min_size=0, max_size=6))]
    for row in rows:
        for _ in range(draw(st.integers(0, 3))):
            row[draw(st.integers(0, len(row) - 1))] = draw(CELL)
        if draw(st.integers(0, 9)) == 0:
            row.extend(draw(st.lists(CELL, min_size=1, max_size=2)))
        if draw(st.integers(0, 9)) == 0:
            del row[draw(st.integers(0, len(row) - 1))]
    data = _encode(_csv([HEADER] + rows), draw(ENCODINGS))
    if draw(st.integers(0, 7)) == 0:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=3)) + data[at:]
    return data


@st.composite
def own_records(draw: st.DrawFn) -> list[dict[str, Any]]:
    base = {"provider": "lambda", "instance_type": "x", "gpu": "H100 SXM", "gpu_count": "1", "region": "us",
            "tier": "on-demand", "usd_per_hour": "2.49"}
    records = []
    for _ in range(draw(st.integers(0, 5))):
        rec: dict[str, Any] = dict(base)
        for key in draw(st.lists(st.sampled_from(OWN_HEADER), max_size=3)):
            rec[key] = draw(st.one_of(CELL, st.integers(-10**25, 10**25), st.floats(), st.none(), st.booleans(),
                                      st.lists(st.integers(), max_size=2)))
        records.append(rec)
    return records


def check_rows(rows: list[PriceRow]) -> None:
    """What every accepted row promises, whatever the input was."""
    for r in rows:
        assert r.usd_per_hour.is_finite() and r.usd_per_hour > 0
        assert MIN_USD_PER_GPU_HOUR <= r.usd_per_hour / r.gpu_count <= MAX_USD_PER_GPU_HOUR
        assert isinstance(r.gpu_count, int) and 1 <= r.gpu_count <= MAX_GPUS_PER_ROW
        assert r.tier in ("on-demand", "spot", "reserved") and r.market in MARKETS
        for text in (r.instance_type, r.region, r.provider_id):
            assert not any(unicodedata.category(c) in ("Cc", "Cf", "Cs") and c != "\t" for c in text), text


RUNS: Counter[str] = Counter()  # outcome counts per test, printed by test_property_counts (with -s)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=skypilot_files())
def test_skypilot_reader_accepts_or_refuses(snapshot: Any, data: bytes) -> None:
    path = _write(data, ".csv")
    try:
        result = read_skypilot(path, snapshot.providers["lambda"], snapshot.gpu_index)
    except PriceImportError as exc:
        assert str(exc) and "\n" not in str(exc)
        RUNS["skypilot refused"] += 1
    else:
        check_rows(result.rows)
        RUNS["skypilot accepted"] += 1
    finally:
        path.unlink()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=own_records(), encoding=ENCODINGS)
def test_own_csv_reader_accepts_or_refuses(snapshot: Any, records: list[dict[str, Any]], encoding: str) -> None:
    rows = [OWN_HEADER] + [[str(rec.get(k, "")) for k in OWN_HEADER] for rec in records]
    path = _write(_encode(_csv(rows), encoding), ".csv")
    try:
        result = read_own(path, "csv", None, snapshot.gpu_index, snapshot.providers)
    except PriceImportError:
        RUNS["csv refused"] += 1
    else:
        check_rows(result.rows)
        RUNS["csv accepted"] += 1
    finally:
        path.unlink()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=own_records(), wrap=st.booleans(), garbage=st.one_of(st.none(), st.binary(max_size=8)))
def test_own_json_reader_accepts_or_refuses(snapshot: Any, records: list[dict[str, Any]], wrap: bool,
                                            garbage: bytes | None) -> None:
    body = json.dumps({"offers": records} if wrap else records, allow_nan=True).encode()
    if garbage is not None:
        body = body[: len(body) // 2] + garbage + body[len(body) // 2:]
    path = _write(body, ".json")
    try:
        result = read_own(path, "json", None, snapshot.gpu_index, snapshot.providers)
    except PriceImportError:
        RUNS["json refused"] += 1
    else:
        check_rows(result.rows)
        RUNS["json accepted"] += 1
    finally:
        path.unlink()


@dataclass(frozen=True)
class Item:
    """A stand-in for gpuhunt's CatalogItem (the fields knowledge.gpuhunt_source reads)."""

    instance_name: Any
    location: Any
    price: Any
    gpu_count: Any
    gpu_name: Any
    gpu_memory: Any
    spot: bool


ITEMS = st.builds(Item, instance_name=st.one_of(TEXT, st.just("1x_A100-80GB_SECURE")),
                  location=st.one_of(TEXT, st.just("CA")),
                  price=st.one_of(st.floats(), st.decimals(), st.integers(-5, 10**30), st.just(1.64)),
                  gpu_count=st.one_of(st.integers(-3, 10**20), st.floats(), st.just(1)),
                  gpu_name=st.one_of(TEXT, st.sampled_from(["A100-80GB", "H100", "RTX4090"])),
                  gpu_memory=st.one_of(st.none(), st.floats()), spot=st.booleans())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(ITEMS, max_size=6))
def test_gpuhunt_items_accepted_or_refused(snapshot: Any, items: list[Item]) -> None:
    from knowledge.gpuhunt_source import price_rows

    unmapped: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    try:
        rows = price_rows(items, snapshot.providers["runpod"], snapshot.gpu_index, unmapped, skipped)
    except PriceImportError:
        RUNS["gpuhunt refused"] += 1
    else:
        check_rows(rows)
        RUNS["gpuhunt accepted"] += 1


def _db_state(engine: Engine) -> tuple[Any, ...]:
    with engine.connect() as conn:
        offer = tables.Offer.__table__  # type: ignore[attr-defined]
        offers = conn.execute(select(offer.c.id, offer.c.usd_per_hour, offer.c.active, offer.c.observed_at)
                              .order_by(offer.c.id)).all()
        obs = conn.execute(select(func.count()).select_from(tables.PriceObservation)).scalar_one()
        runs = conn.execute(select(func.count()).select_from(tables.ImportRun)).scalar_one()
    return tuple(offers), obs, runs


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=skypilot_files(), allow=st.booleans())
def test_a_refused_import_changes_nothing_in_the_database(loaded_engine: Engine, data: bytes, allow: bool) -> None:
    """Through the database on SQLite and PostgreSQL: accepted imports are stored whole, refused ones not at all.
    Half the imports may switch the provider's offers off (--allow-deactivate), so both outcomes are reached."""
    from knowledge.prices import ImportPolicy, import_prices

    path = _write(data, ".csv")
    before = _db_state(loaded_engine)
    try:
        report = import_prices(loaded_engine, path, provider="lambda", policy=ImportPolicy(allow_deactivate=allow))
    except PriceImportError:
        assert _db_state(loaded_engine) == before
        RUNS["database refused"] += 1
    else:
        after = _db_state(loaded_engine)
        assert after[2] == before[2] + 1 and after[1] == before[1] + report.observations
        RUNS["database accepted"] += 1
    finally:
        path.unlink()


def test_property_counts(capsys: pytest.CaptureFixture[str]) -> None:
    """Runs last in this file: prints accepted/refused counts per format (pytest -s shows them)."""
    with capsys.disabled():
        print("\nprice-format property tests:", dict(sorted(RUNS.items())))
    assert all(v >= 0 for v in RUNS.values())


def test_decimal_promises_hold_for_the_boundaries() -> None:
    assert Decimal("500") / 1 <= MAX_USD_PER_GPU_HOUR and Decimal("0.001") >= MIN_USD_PER_GPU_HOUR
