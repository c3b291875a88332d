"""Migration 0007 on a database in use: existing digests and alerts get their per-workspace numbers (1, 2, 3 …
per team, in the order they were made), kept unique per team, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
import sqlalchemy as sa
from alembic import command

from knowledge.db import alembic_config, make_engine, upgrade_schema

WHEN = datetime(2026, 1, 1, tzinfo=UTC)
# (row id, team) in the order they were made: the two teams interleaved.
ALERTS = [(1, "T0A"), (2, "T0B"), (3, "T0A"), (4, "T0A"), (7, "T0B")]
SUBSCRIPTIONS = [(1, "T0B"), (2, "T0A"), (5, "T0B")]


def _subscription(row_id: int, team: str) -> dict[str, object]:
    return {"id": row_id, "team_id": team, "channel_id": f"C{row_id}", "cadence": "daily", "local_hour": 9,
            "local_minute": 0, "timezone": "UTC", "weekday": 0, "threshold_pct": Decimal(5),
            "threshold_usd": Decimal("0.05"), "gpu_filter": "", "language": "en", "report_empty": False,
            "status": "active", "created_by": "U1", "created_at": WHEN, "updated_at": WHEN}


def _alert(row_id: int, team: str) -> dict[str, object]:
    return {"id": row_id, "team_id": team, "user_id": "U1", "gpu_id": "h100", "op": "<",
            "usd_per_gpu_hour": Decimal(2), "tier": "on-demand", "language": "en", "armed": True, "active": True,
            "created_at": WHEN}


def test_existing_digests_and_alerts_are_numbered_per_team_in_the_order_they_were_made(db_url: str) -> None:
    engine = make_engine(db_url)
    command.upgrade(alembic_config(engine), "0006")
    meta = sa.MetaData()
    meta.reflect(engine)
    with engine.begin() as conn:
        conn.execute(meta.tables["gpu"].insert().values(
            {c.name: (1 if isinstance(c.type, sa.Integer | sa.Float | sa.Numeric) else
                      False if isinstance(c.type, sa.Boolean) else "x")
             for c in meta.tables["gpu"].columns if not c.nullable} | {"id": "h100", "name": "H100"}))
        conn.execute(meta.tables["digest_subscription"].insert(), [_subscription(i, t) for i, t in SUBSCRIPTIONS])
        conn.execute(meta.tables["price_alert"].insert(), [_alert(i, t) for i, t in ALERTS])
        # A digest period points at a subscription: SQLite's batch copy of the table must keep it.
        conn.execute(meta.tables["digest_period"].insert().values(
            subscription_id=5, period_key="2026-01-01", status="posted", claimed_by="w", claimed_at=WHEN, attempts=1))
    upgrade_schema(engine)
    with engine.connect() as conn:
        alerts = conn.execute(sa.text("SELECT id, team_id, short_id FROM price_alert ORDER BY id")).all()
        subs = conn.execute(sa.text("SELECT id, team_id, short_id FROM digest_subscription ORDER BY id")).all()
        period = conn.execute(sa.text("SELECT subscription_id FROM digest_period")).scalar_one()
    assert [tuple(r) for r in alerts] == [(1, "T0A", 1), (2, "T0B", 1), (3, "T0A", 2), (4, "T0A", 3), (7, "T0B", 2)]
    assert [tuple(r) for r in subs] == [(1, "T0B", 1), (2, "T0A", 1), (5, "T0B", 2)]
    assert period == 5
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:  # one number per team, NOT NULL
        conn.execute(sa.text("INSERT INTO price_alert (id, team_id, short_id, user_id, gpu_id, op, usd_per_gpu_hour,"
                             " tier, language, armed, active, created_at) VALUES (9, 'T0A', 3, 'U1', 'h100', '<', 2,"
                             " 'on-demand', 'en', true, true, :at)"), {"at": WHEN})
    engine.dispose()
