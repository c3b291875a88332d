"""Load the reviewed catalog data files into the database, validating every row first."""

from __future__ import annotations

import csv
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError
from sqlalchemy import Engine, delete
from sqlmodel import Session, SQLModel, select

from knowledge.tables import (
    Gpu,
    GpuAlias,
    GpuAliasBase,
    GpuBase,
    ModelAlias,
    ModelAliasBase,
    ModelPreset,
    ModelPresetBase,
    Provider,
    ProviderBase,
)

log = logging.getLogger(__name__)
DATA_DIR = Path(__file__).parent / "data"
B = TypeVar("B", bound=SQLModel)


class DataFileError(ValueError):
    """A data file row is malformed: carries `file:line: field: problem`."""


@dataclass(frozen=True, slots=True)
class LoadReport:
    gpus: int
    gpu_aliases: int
    models: int
    model_aliases: int
    providers: int


def _cell(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None


def read_rows(path: Path, base: type[B]) -> Iterator[tuple[int, B]]:
    """Yield (line, validated row) from a CSV whose header is `base`'s field names."""
    fields = set(base.model_fields)
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        unknown = [h for h in header if h not in fields]
        missing = [f for f, info in base.model_fields.items() if info.is_required() and f not in header]
        if unknown or missing:
            raise DataFileError(
                f"{path.name}:1: header: unknown columns {unknown}, missing columns {missing}"
            )
        for row in reader:
            line = reader.line_num
            if None in row:  # more cells than header columns
                raise DataFileError(f"{path.name}:{line}: row has more cells than the header")
            values = {k: _cell(v) for k, v in row.items() if _cell(v) is not None}
            try:
                yield line, base.model_validate(values)
            except ValidationError as exc:
                first = exc.errors()[0]
                field = ".".join(str(p) for p in first["loc"]) or "row"
                raise DataFileError(
                    f"{path.name}:{line}: {field}: {first['msg']} (got {values.get(field)!r})"
                ) from None


def _unique(path: Path, rows: Sequence[tuple[int, B]], key: Callable[[B], Any]) -> None:
    seen: dict[Any, int] = {}
    for line, row in rows:
        k = key(row)
        if k in seen:
            raise DataFileError(f"{path.name}:{line}: duplicate {k!r} (first on line {seen[k]})")
        seen[k] = line


def _check_refs(path: Path, rows: Sequence[tuple[int, B]], attr: str, known: set[str]) -> None:
    for line, row in rows:
        ref = getattr(row, attr)
        if ref not in known:
            raise DataFileError(f"{path.name}:{line}: {attr}: unknown id {ref!r}")


def read_catalog(data_dir: Path = DATA_DIR) -> dict[str, list[SQLModel]]:
    """Read and cross-check every catalog file; raise DataFileError on the first bad row."""
    from knowledge.resolve import normalise_gpu_name

    gpus = list(read_rows(data_dir / "gpus.csv", GpuBase))
    _unique(data_dir / "gpus.csv", gpus, lambda r: r.id)
    models = list(read_rows(data_dir / "models.csv", ModelPresetBase))
    _unique(data_dir / "models.csv", models, lambda r: r.id)
    providers = list(read_rows(data_dir / "providers.csv", ProviderBase))
    _unique(data_dir / "providers.csv", providers, lambda r: r.id)

    gpu_aliases = []
    for line, row in read_rows(data_dir / "gpu_aliases.csv", GpuAliasBase):
        gpu_aliases.append((line, row.model_copy(update={"alias": normalise_gpu_name(row.alias)})))
    _check_refs(data_dir / "gpu_aliases.csv", gpu_aliases, "gpu_id", {r.id for _, r in gpus})
    gpu_aliases = _first_per_key(gpu_aliases, lambda r: r.alias)

    model_aliases = []
    for line, model_alias in read_rows(data_dir / "model_aliases.csv", ModelAliasBase):
        model_aliases.append((line, model_alias.model_copy(update={"alias": model_alias.alias.strip().casefold()})))
    _check_refs(data_dir / "model_aliases.csv", model_aliases, "model_id", {r.id for _, r in models})
    model_aliases = _first_per_key(model_aliases, lambda r: r.alias)
    return {
        "gpus": [r for _, r in gpus],
        "models": [r for _, r in models],
        "providers": [r for _, r in providers],
        "gpu_aliases": [r for _, r in gpu_aliases],
        "model_aliases": [r for _, r in model_aliases],
    }


def _first_per_key(rows: list[tuple[int, B]], key: Callable[[B], Any]) -> list[tuple[int, B]]:
    """Aliases that normalise to the same text must agree; the first one wins if they do."""
    seen: dict[Any, tuple[int, B]] = {}
    for line, row in rows:
        k = key(row)
        if k in seen:
            first_line, first = seen[k]
            if first.model_dump() != row.model_dump():
                raise DataFileError(
                    f"line {line}: alias {k!r} conflicts with line {first_line} after normalising"
                )
            continue
        seen[k] = (line, row)
    return list(seen.values())


def load_catalog(engine: Engine, data_dir: Path = DATA_DIR) -> LoadReport:
    """Upsert the catalog from the data files in one transaction (idempotent).

    GPUs, models and providers are upserted (never deleted: offers and history refer to them);
    aliases are replaced wholesale since nothing refers to them.
    """
    data = read_catalog(data_dir)
    with Session(engine) as session:
        for base_rows, table in (
            (data["gpus"], Gpu),
            (data["models"], ModelPreset),
            (data["providers"], Provider),
        ):
            existing = {str(row.model_dump()["id"]): row for row in session.exec(select(table)).all()}
            for row in base_rows:
                values = row.model_dump()
                current = existing.get(values["id"])
                if current is None:
                    session.add(table(**values))
                else:
                    for key, value in values.items():
                        setattr(current, key, value)
        session.flush()
        session.exec(delete(GpuAlias))
        session.exec(delete(ModelAlias))
        session.add_all(GpuAlias(**r.model_dump()) for r in data["gpu_aliases"])
        session.add_all(ModelAlias(**r.model_dump()) for r in data["model_aliases"])
        session.commit()
    report = LoadReport(*(len(data[k]) for k in ("gpus", "gpu_aliases", "models", "model_aliases", "providers")))
    log.info("catalog loaded: %s", report)
    return report
