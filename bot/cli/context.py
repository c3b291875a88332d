"""What every CLI command shares: settings, the database (prepared on first use), the snapshot, output."""

from __future__ import annotations

import json
import logging
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, TypeAlias, TypeVar

from bot.settings import Settings, load_settings

if TYPE_CHECKING:  # SQLAlchemy is imported on first database use, not to build the command line
    import argparse

    from sqlalchemy import Engine

    from knowledge.snapshot import Snapshot

    # What add_subparsers returns (each module's `register` adds to it); subscriptable for type checkers only.
    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]

log = logging.getLogger(__name__)
R = TypeVar("R")
REPLACEMENT = "\ufffd"
# Lone surrogates: what Python makes of bytes it could not decode (argv, surrogateescape streams).
_SURROGATES = re.compile("[\ud800-\udfff]")


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
        """The catalog and offers; on SQLite the one kept beside the database while it is unchanged
        (knowledge.snapshot_cache: a warm `ask` then imports no SQLAlchemy and reads no table)."""
        if self._snapshot is None:
            from knowledge import snapshot_cache
            from knowledge.snapshot import load_snapshot

            days = self.settings.price_stale_days
            database = snapshot_cache.sqlite_file(self.settings.database_url)
            if database is not None:
                self._snapshot = snapshot_cache.load(database, stale_after_days=days)
            if self._snapshot is None:
                engine = self.engine  # prepared (migrated, catalog loaded) before the stamp is read
                stamp = snapshot_cache.read_stamp(database) if database is not None else None
                self._snapshot = load_snapshot(engine, stale_after_days=days)
                if database is not None:
                    snapshot_cache.store(database, stamp, self._snapshot)
        return self._snapshot


def open_context() -> Context:
    return Context(settings=load_settings())


@dataclass(frozen=True, slots=True)
class Query:
    """One query as read: its text (undecodable bytes replaced by U+FFFD) and a note when any were."""

    text: str
    note: str | None = None


def clean_argument(text: str) -> Query:
    """Text from the command line: bytes the locale could not decode (surrogate escapes) become U+FFFD."""
    replaced = len(_SURROGATES.findall(text))
    if not replaced:
        return Query(text)
    return Query(_SURROGATES.sub(REPLACEMENT, text), f"{replaced} byte(s) that are not UTF-8 replaced by U+FFFD")


def read_queries(arg: str, stdin: IO[Any] | None = None) -> Iterator[Query]:
    """`-` reads one query per non-empty line from standard input; anything else is one query.

    Standard input is read as bytes and decoded as UTF-8 (a leading BOM dropped): a byte that is not
    UTF-8 is replaced by U+FFFD and the line's note says how many were, so a line is never lost and
    never echoed raw into the output.
    """
    if arg != "-":
        query = clean_argument(arg)
        if query.note:
            log.warning("the text argument had %s", query.note)
        yield query
        return
    stream = stdin or sys.stdin
    binary = getattr(stream, "buffer", None)
    for number, line in enumerate(binary if binary is not None else stream, start=1):
        query = _decode_line(line, number)
        if query.text:
            yield query


def _decode_line(line: bytes | str, number: int) -> Query:
    """One line of standard input as text; the note names the line and how many bytes were replaced."""
    if isinstance(line, str):  # a text stream handed in (tests, embedding): only escapes to repair
        replaced = len(_SURROGATES.findall(line))
        text = _SURROGATES.sub(REPLACEMENT, line)
    else:
        text = line.decode("utf-8", "replace")
        replaced = text.count(REPLACEMENT) - line.count(REPLACEMENT.encode())
    if number == 1:
        text = text.removeprefix("\ufeff")
    note = f"line {number}: {replaced} byte(s) that are not UTF-8 replaced by U+FFFD" if replaced else None
    if note:
        log.warning("standard input %s", note)
    return Query(text.strip(), note)


def queries(arg: str, stdin: IO[Any] | None = None) -> Iterator[str]:
    """The texts of `read_queries` (notes are logged there)."""
    for query in read_queries(arg, stdin):
        yield query.text


def to_json(value: object, *, indent: int | None = None) -> str:
    """Strict JSON for every `--json` output: no NaN/Infinity, and text that encodes as UTF-8.

    A non-finite number is a bug upstream, never a value to print: it is an error naming where it is.
    Lone surrogates (undecodable bytes that reached a string) become U+FFFD. Line and paragraph
    separators that JSON allows raw (U+2028, U+2029, NEL U+0085, and the C1/CJK-compatible breaks that
    `str.splitlines()` honours) are written escaped, so one output line is one JSON value whoever splits it.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str, indent=indent)
    except ValueError as error:
        where = find_non_finite(value)
        if where is None:
            raise
        raise CliError(f"the result holds a non-finite number at {where}, so it is not printed "
                       "(no JSON for NaN or infinity); please report the command") from error
    return _LINE_BREAKS.sub(_escaped, _SURROGATES.sub(REPLACEMENT, text))


# Characters other than \n and \r that str.splitlines() breaks on and json.dumps leaves raw
# (\x0b, \x0c, \x1c-\x1e are control characters, which json.dumps already escapes).
_LINE_BREAKS = re.compile("[\u0085\u2028\u2029]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def find_non_finite(value: object, path: str = "$") -> str | None:
    """The path ($.options[0].hours) of the first NaN or infinity in `value`, or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{path} ({value})"
    if isinstance(value, Mapping):
        items: Iterable[tuple[str, object]] = ((f"{path}.{k}", v) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for where, item in items:
        found = find_non_finite(item, where)
        if found is not None:
            return found
    return None


def print_json(value: object, *, indent: int | None = None, flush: bool = False) -> None:
    print(to_json(value, indent=indent), flush=flush)


def run_each(arg: str, as_json: bool, answer: Callable[[str], R], show: Callable[[R], str]) -> int:
    """Answer one query, or one per stdin line as JSON Lines; a failing line gets an `error` object."""
    status = 0
    batch = arg == "-"
    for query in read_queries(arg):
        try:
            result = answer(query.text)
            line = to_json(_noted(result, query)) if as_json or batch else show(result)
        except CliError as exc:
            if not batch:
                raise
            print_json(_noted({"query": query.text, "error": str(exc)}, query), flush=batch)
            status = 1
            continue
        print(line, flush=batch)
    return status


def _noted(result: R, query: Query) -> R | dict[str, object]:
    """The result with the input note added (`input_note`) when the query's bytes were repaired."""
    if query.note is None or not isinstance(result, dict):
        return result
    return {**result, "input_note": query.note}
