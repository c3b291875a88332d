"""Database engine and schema upgrades (Alembic). The only module that creates engines."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, Table, event, inspect, text
from sqlmodel import SQLModel, create_engine

from knowledge.revision import MIGRATIONS_DIR as MIGRATIONS_DIR
from knowledge.revision import as_utc as as_utc  # re-exported: every module reads rows through knowledge.db
from knowledge.revision import head_revision as head_revision

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.engine.interfaces import DBAPIConnection
    from sqlalchemy.pool import ConnectionPoolEntry

log = logging.getLogger(__name__)


def table_of(model: type[SQLModel]) -> Table:
    """The Core table of a SQLModel table class (SQLModel sets `__table__` without declaring it to type checkers)."""
    table = getattr(model, "__table__", None)
    if not isinstance(table, Table):
        raise TypeError(f"{model.__name__} is not a table model")
    return table


def make_engine(database_url: str) -> Engine:
    """An engine for SQLite (file created with its folder) or PostgreSQL (pre-pinged connections)."""
    if database_url.startswith("sqlite:///"):
        path = database_url[len("sqlite:///") :]
        if path and path != ":memory:":
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(database_url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA journal_mode=WAL")
            cur.close()

        return engine
    # pool_pre_ping: a PostgreSQL restart under load is survived by reconnecting.
    return create_engine(database_url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def alembic_config(engine: Engine) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False))
    cfg.attributes["engine"] = engine
    return cfg


def upgrade_schema(engine: Engine) -> None:
    """Create or upgrade the schema to the newest migration (one transaction, SQLite included: migrations/env.py)."""
    from alembic import command

    _drop_stale_batch_tables(engine)
    command.upgrade(alembic_config(engine), "head")


def _drop_stale_batch_tables(engine: Engine) -> None:
    """Alembic's SQLite batch mode copies a table through `_alembic_tmp_<name>`; an upgrade that failed or
    was killed before migrations ran in one transaction left that copy behind, and every later upgrade
    failed on it. Migrations are now all-or-nothing, so such a table is only ever a leftover: drop it."""
    if engine.dialect.name != "sqlite":
        return
    with engine.begin() as conn:
        stale = [name for name in inspect(conn).get_table_names() if name.startswith("_alembic_tmp_")]
        for name in stale:
            log.warning("dropping %s, left by an interrupted schema upgrade", name)
            conn.exec_driver_sql(f'DROP TABLE "{name}"')


def schema_is_current(engine: Engine) -> bool:
    """True when the database is at the newest migration (one small query, no Alembic import)."""
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return False
        current = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    return current == [head_revision()]
