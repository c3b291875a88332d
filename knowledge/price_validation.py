"""The one validation layer for price rows, written once and used by every format (SkyPilot, CSV, JSON, gpuhunt).

A refused value raises `PriceImportError` naming the file, the row and what is wrong; nothing is written.
Checks: text decodes as UTF-8 (a BOM is allowed), cells hold no control characters (NUL …), a row has
exactly the header's cells, prices are finite numbers within a plausible range per GPU-hour, GPU counts
are whole numbers within a cluster's size, and `--observed-at` is neither in the future nor before the
catalog's oldest hardware.
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path

# SkyPilot writes 99999999 where a provider has no spot offer (primeintellect), and 0.00 on some vast rows.
NO_PRICE_SENTINEL = Decimal("99999999")
# Plausible $/GPU-hour: the cheapest listing in the bundled snapshots is $0.03 (an old consumer card on Vast), the
# dearest about $14 (GCP a3-ultragpu H200 with its host VM). Outside 0.001-500 a value is a typo or a unit mix-up.
MIN_USD_PER_GPU_HOUR = Decimal("0.001")
MAX_USD_PER_GPU_HOUR = Decimal("500")
# A row rents one machine or one cluster: the largest rentable unit we know is a rack-scale system (GB200 NVL72,
# 72 GPUs); 1024 leaves room for a negotiated cluster while refusing 1e20.
MAX_GPUS_PER_ROW = 1024
# A clock a little ahead of ours is fine; a date further ahead is a typo (2099).
CLOCK_SKEW = timedelta(hours=1)
ALLOWED_CONTROLS = frozenset("\t")


class PriceImportError(ValueError):
    """The file is unusable: the message names the row and what is wrong. Nothing was changed."""


def decode_text(path: Path) -> str:
    """The file as text: UTF-8, with or without a BOM; anything else is refused with the byte offset."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        hint = " (it looks like UTF-16)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise PriceImportError(
            f"{path.name}: not UTF-8 text{hint}: byte {exc.start} is 0x{data[exc.start]:02x}; "
            "save the file as UTF-8 and import it again") from None
    return text


def check_text(value: object, where: str, field: str) -> str:
    """A name or label as text, without control characters (a NUL byte, an escape sequence …)."""
    text = "" if value is None else str(value)
    for i, ch in enumerate(text):
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs") and ch not in ALLOWED_CONTROLS:
            raise PriceImportError(f"{where}: {field} has a control character U+{ord(ch):04X} at position {i + 1}")
    return text.strip()


def parse_money(value: object, where: str, field: str = "price") -> Decimal | None:
    """A price in USD: None when empty or SkyPilot's "no offer" marks (0, 99999999); refused when not a finite,
    non-negative number. NaN is tested before the sign (a signalling NaN cannot even be compared)."""
    text = check_text(value, where, field)
    if not text:
        return None
    try:
        amount = Decimal(text)
    except InvalidOperation:
        raise PriceImportError(f"{where}: {field} {text!r} is not a number") from None
    if amount.is_nan():
        raise PriceImportError(f"{where}: {field} {text!r} is not a number (NaN)")
    if amount.is_infinite():
        raise PriceImportError(f"{where}: {field} {text!r} is not finite")
    if amount < 0:
        raise PriceImportError(f"{where}: {field} {text!r} is negative")
    if amount == 0 or amount == NO_PRICE_SENTINEL:
        return None
    return amount


def parse_count(value: object, where: str) -> int:
    """A GPU count: a whole number from 1 to MAX_GPUS_PER_ROW ("8" and "8.0" both read as 8)."""
    text = check_text(value, where, "GPU count")
    try:
        amount = Decimal(text)
    except InvalidOperation:
        raise PriceImportError(f"{where}: GPU count {text!r} is not a number") from None
    if not amount.is_finite() or amount != amount.to_integral_value() or not 1 <= amount <= MAX_GPUS_PER_ROW:
        # Fractional GPUs (shared slices) are not rentable units we advise on.
        raise PriceImportError(f"{where}: GPU count {text!r} is not a whole number from 1 to {MAX_GPUS_PER_ROW}")
    return int(amount)


def check_rate(usd_per_hour: Decimal, gpu_count: int, where: str, field: str = "price") -> Decimal:
    """The instance price, refused when its $/GPU-hour is outside the plausible range."""
    per_gpu = usd_per_hour / gpu_count
    if not MIN_USD_PER_GPU_HOUR <= per_gpu <= MAX_USD_PER_GPU_HOUR:
        raise PriceImportError(
            f"{where}: {field} {usd_per_hour} for {gpu_count} GPU(s) is ${per_gpu:.4f} per GPU-hour, outside "
            f"{MIN_USD_PER_GPU_HOUR}-{MAX_USD_PER_GPU_HOUR}")
    return usd_per_hour


def check_cells(row: dict[str | None, object], where: str, width: int) -> None:
    """A CSV row has exactly the header's cells: surplus cells are refused and shown, missing ones named."""
    if None in row:
        extra = row[None]
        shown = extra if isinstance(extra, list) else [extra]
        raise PriceImportError(f"{where}: row has {width + len(shown)} cells, the header has {width}; "
                               f"surplus: {', '.join(repr(str(c))[:40] for c in shown[:3])}")
    missing = [str(k) for k, v in row.items() if v is None]
    if missing:
        raise PriceImportError(f"{where}: row has fewer cells than the header; missing {', '.join(missing[:5])}")


def parse_observed_at(text: str) -> datetime:
    """`--observed-at` as an aware datetime (ISO-8601; `Z` accepted); refused with an example otherwise."""
    cleaned = check_text(text, "--observed-at", "time")
    try:
        value = datetime.fromisoformat(cleaned.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise PriceImportError(f"--observed-at {text!r} is not ISO-8601 (e.g. 2026-11-01T09:00:00Z)") from None
    if value.tzinfo is None:
        raise PriceImportError(f"--observed-at {text!r} needs a time zone, e.g. 2026-11-01T00:00:00Z")
    return value


def check_observed_at(value: datetime, *, now: datetime, earliest: datetime) -> datetime:
    """When the prices were observed: aware, not in the future beyond a small clock skew, not before the catalog's
    oldest hardware was sold. Extremes of the calendar are refused here, before the database sees them."""
    if value.tzinfo is None:
        raise PriceImportError("--observed-at needs a time zone, e.g. 2026-11-01T00:00:00Z")
    try:
        value = value.astimezone(UTC)
    except OverflowError:
        raise PriceImportError(f"--observed-at {value.isoformat()} is outside the calendar we store") from None
    if value > now + CLOCK_SKEW:
        raise PriceImportError(
            f"--observed-at {value.date().isoformat()} is in the future (now: {now.date().isoformat()})")
    if value < earliest:
        raise PriceImportError(
            f"--observed-at {value.date().isoformat()} is before {earliest.date().isoformat()}, "
            "the release of the oldest GPU in the catalog")
    return value
