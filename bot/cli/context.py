"""What every CLI command shares: settings, the database (prepared on first use), the snapshot, output."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO, TypeAlias, TypeVar

from bot.settings import Settings, load_settings

if TYPE_CHECKING:  # SQLAlchemy is imported on first database use, not to build the command line
    import argparse

    from sqlalchemy import Engine

    from knowledge.snapshot import Snapshot

    # What add_subparsers returns (each module's `register` adds to it); subscriptable for type checkers only.
    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]

log = logging.getLogger(__name__)
R = TypeVar("R")


class CliError(Exception):
    """A user-facing failure: printed as one line, exit status 1, never a traceback."""


@dataclass(slots=True)
class Context:
    settings: Settings
    _engine: Engine | None = None
    _snapshot: Snapshot | None = None
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def engine(self) -> Engine:
        """The database, with its schema upgraded and the catalog loaded when it was empty."""
        if self._engine is None:
            from knowledge.setup import prepare_database

            self._engine = prepare_database(self.settings.database_url)
        return self._engine

    def snapshot(self) -> Snapshot:
        if self._snapshot is None:
            from knowledge.snapshot import load_snapshot

            self._snapshot = load_snapshot(self.engine, stale_after_days=self.settings.price_stale_days)
        return self._snapshot


def open_context() -> Context:
    return Context(settings=load_settings())


def queries(arg: str, stdin: TextIO | None = None) -> Iterator[str]:
    """`-` reads one query per non-empty line from standard input; anything else is one query."""
    if arg != "-":
        yield arg
        return
    for line in stdin or sys.stdin:
        line = line.strip()
        if line:
            yield line


def to_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def run_each(arg: str, as_json: bool, answer: Callable[[str], R], show: Callable[[R], str]) -> int:
    """Answer one query, or one per stdin line as JSON Lines; a failing line gets an `error` object."""
    status = 0
    batch = arg == "-"
    for query in queries(arg):
        try:
            result = answer(query)
        except CliError as exc:
            if not batch:
                raise
            print(to_json({"query": query, "error": str(exc)}), flush=batch)
            status = 1
            continue
        if as_json or batch:
            print(to_json(result), flush=batch)
        else:
            print(show(result))
    return status
