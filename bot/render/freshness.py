"""The date line under every price: when the prices were observed (the source's date), and a notice with how to
refresh them when they are older than the catalog's threshold (Settings.price_stale_days, default 14 days)."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.render.formats import Formatter


def is_stale(when: datetime, now: datetime, stale_after_days: int) -> bool:
    """Older than the threshold (naive times are UTC, as the database hands them back)."""
    when = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return (now - when).total_seconds() > stale_after_days * 86400


def prices_line(when: datetime, now: datetime | None, stale_after_days: int, f: Formatter) -> str:
    """"Prices as of …", or "Prices as of … (a year ago), older than 14 days: refresh with …"."""
    now = now or datetime.now(UTC)
    if is_stale(when, now, stale_after_days):
        aware = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
        return f.messages.text("common.prices_stale", date=f.date(when), age=f.age(aware, now), days=stale_after_days)
    return f.messages.text("common.prices_as_of", date=f.date(when))
