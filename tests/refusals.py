"""Helpers for the bad-input tests (issue 19): a database fingerprint and a strict JSON reader."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

from sqlalchemy import Engine, inspect, text


# Inputs each property test generated in this run (printed at the end by conftest.py).
RUNS: Counter[str] = Counter()


def fingerprint(engine: Engine) -> dict[str, str]:
    """Per table: its row count and a hash of every row (ordered), so "nothing changed" can be asserted."""
    out: dict[str, str] = {}
    inspector = inspect(engine)
    with engine.connect() as conn:
        for table in sorted(inspector.get_table_names()):
            rows = conn.execute(text(f'SELECT * FROM "{table}"')).all()
            digest = hashlib.sha256("\n".join(sorted(repr(tuple(r)) for r in rows)).encode()).hexdigest()[:16]
            out[table] = f"{len(rows)}:{digest}"
    return out


def _refuse(name: str) -> Any:
    raise AssertionError(f"{name} is not JSON")


def strict_json(raw: str | bytes) -> Any:
    """`raw` as JSON the way other tools read it: UTF-8 bytes, no NaN/Infinity (json.loads takes them)."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8")  # raises on bytes that are not UTF-8
    raw.encode("utf-8")  # raises on lone surrogates (what a raw undecodable byte becomes)
    return json.loads(raw, parse_constant=_refuse)


def strict_json_lines(raw: str | bytes) -> list[Any]:
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    return [strict_json(line) for line in text.splitlines() if line.strip()]
