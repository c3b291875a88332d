"""Alembic environment: runs migrations on the engine handed over by knowledge.db."""

import importlib
import pkgutil

from alembic import context
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
    with engine.begin() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        context.run_migrations()


run_migrations_online()
