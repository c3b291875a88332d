"""Start-up check and rotation of the Slack secrets stored in the database (knowledge.secret_box)."""

from __future__ import annotations

import logging

from sqlalchemy import Engine, Table, select, update

from knowledge.db import table_of
from knowledge.secret_box import PREFIX, SecretBox
from knowledge.slack_tables import SECRET_FIELDS, SlackBot, SlackInstallation

log = logging.getLogger(__name__)


def _tables() -> list[Table]:
    return [table_of(SlackBot), table_of(SlackInstallation)]


def check_secrets(engine: Engine, box: SecretBox) -> int:
    """Raise SecretKeyError (a clear message) when the keys cannot decrypt a stored token; encrypt
    tokens stored in clear before encryption existed. Returns how many values were encrypted."""
    encrypted = 0
    for table in _tables():
        for name in SECRET_FIELDS[table.name]:
            column = table.c[name]
            with engine.connect() as conn:
                sample = conn.execute(select(column).where(column.like(PREFIX + "%")).limit(1)).scalar()
            if sample is not None:
                box.decrypt(sample)  # raises SecretKeyError naming what to do
        encrypted += _reencrypt(engine, box, table, only_clear=True)
    if encrypted:
        log.warning("encrypted %d Slack secret(s) stored in clear by an earlier version", encrypted)
    return encrypted


def rotate_secrets(engine: Engine, box: SecretBox) -> int:
    """Re-encrypt every stored secret with the newest key (after adding a key at the front of SECRET_KEYS)."""
    return sum(_reencrypt(engine, box, table, only_clear=False) for table in _tables())


def _reencrypt(engine: Engine, box: SecretBox, table: Table, *, only_clear: bool) -> int:
    names = SECRET_FIELDS[table.name]
    changed = 0
    with engine.begin() as conn:  # one transaction per table: all rows or none
        for row in conn.execute(select(table.c.id, *(table.c[n] for n in names))).all():
            values = {n: getattr(row, n) for n in names if getattr(row, n)}
            if only_clear:
                values = {n: v for n, v in values.items() if not str(v).startswith(PREFIX)}
            if values:
                conn.execute(update(table).where(table.c.id == row.id)
                             .values({n: box.rotate(str(v)) for n, v in values.items()}))
                changed += len(values)
    return changed
