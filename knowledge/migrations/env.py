"""Alembic environment: runs migrations on the engine handed over by knowledge.db."""

import importlib
import pkgutil

from alembic import context
from sqlalchemy import Engine
from sqlmodel import SQLModel

import knowledge
from knowledge import tables  # noqa: F401  (registers the catalog tables on the metadata)

# Every knowledge/*_tables.py module holds tables of one area (Slack state, digests ...).
for info in pkgutil.iter_modules(knowledge.__path__):
    if info.name.endswith("_tables"):
        importlib.import_module(f"knowledge.{info.name}")

config = context.config
target_metadata = SQLModel.metadata


def run_migrations_online() -> None:
    engine = config.attributes.get("engine")
    if engine is None:
        from knowledge.db import make_engine

        url = config.get_main_option("sqlalchemy.url")
        if url is None:
            raise RuntimeError("alembic: set sqlalchemy.url, or pass the engine in config.attributes['engine']")
        engine = make_engine(url)
    if engine.dialect.name == "sqlite":
        _run_sqlite(engine)
        return
    with engine.begin() as connection:
        context.configure(connection=connection, target_metadata=target_metadata)
        context.run_migrations()


def _run_sqlite(engine: Engine) -> None:
    """All migrations in one SQLite transaction, foreign keys checked at the end.

    pysqlite opens transactions only before INSERT/UPDATE/DELETE, so the CREATE/DROP/RENAME of a batch
    migration (SQLite alters a table by copying it) ran one by one, and a failure half way left a copy
    behind; dropping the old table is also refused while populated tables point at it, and the pragma that
    lifts that is a no-op inside a transaction. So, on this connection only: the driver's transaction
    handling off, keys off, our own BEGIN, the keys checked before COMMIT (Alembic's batch docs, "Dealing
    with Constraints"; the sqlite3 docs on `isolation_level = None`), then everything as it was.
    """
    with engine.connect() as connection:
        raw = connection.connection.driver_connection
        assert raw is not None
        previous = raw.isolation_level
        raw.isolation_level = None
        raw.execute("PRAGMA foreign_keys=OFF")
        try:
            # SQLAlchemy's commit/rollback at the end of this block end the transaction BEGIN opened.
            with connection.begin():
                raw.execute("BEGIN")
                context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
                context.run_migrations()
                broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise RuntimeError(f"schema upgrade would break {len(broken)} foreign keys: {broken[:5]}")
        finally:
            raw.execute("PRAGMA foreign_keys=ON")
            raw.isolation_level = previous


run_migrations_online()
