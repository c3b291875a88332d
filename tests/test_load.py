"""The catalog loader: idempotent upserts, and bad rows stopped with file, line and field."""

import shutil

import pytest
from sqlalchemy import func, select
from sqlmodel import Session

from knowledge import tables
from knowledge.load import DATA_DIR, DataFileError, load_catalog, read_catalog


def _count(engine, table):
    with Session(engine) as s:
        return s.execute(select(func.count()).select_from(table)).scalar_one()


def _data_copy(tmp_path):
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, target, ignore=shutil.ignore_patterns("prices"))
    return target


def _replace_line(path, line_no, transform):
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[line_no - 1] = transform(lines[line_no - 1])
    path.write_text("".join(lines), encoding="utf-8")


def test_load_is_idempotent(engine):
    first = load_catalog(engine)
    counts = {t: _count(engine, t) for t in (tables.Gpu, tables.GpuAlias, tables.ModelPreset, tables.Provider)}
    second = load_catalog(engine)
    assert first == second
    assert counts == {t: _count(engine, t) for t in counts}
    assert counts[tables.Gpu] == first.gpus >= 45
    assert counts[tables.ModelPreset] == first.models >= 40


def test_changed_row_is_updated_in_place(engine, tmp_path):
    data = _data_copy(tmp_path)
    load_catalog(engine, data)
    header = (data / "gpus.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    col = header.index("tdp_w")

    def bump(line):
        cells = line.rstrip("\r\n").split(",")
        cells[col] = "999"
        return ",".join(cells) + "\n"

    _replace_line(data / "gpus.csv", 2, bump)
    gpu_id = (data / "gpus.csv").read_text(encoding="utf-8").splitlines()[1].split(",")[header.index("id")]
    load_catalog(engine, data)
    with Session(engine) as s:
        assert s.get(tables.Gpu, gpu_id).tdp_w == 999


def test_malformed_number_names_file_line_and_field(tmp_path):
    data = _data_copy(tmp_path)
    header = (data / "gpus.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    col = header.index("vram_gb")

    def corrupt(line):
        cells = line.rstrip("\r\n").split(",")
        cells[col] = "lots"
        return ",".join(cells) + "\n"

    _replace_line(data / "gpus.csv", 4, corrupt)
    with pytest.raises(DataFileError, match=r"gpus\.csv:4: vram_gb"):
        read_catalog(data)


def test_unknown_column_is_refused(tmp_path):
    data = _data_copy(tmp_path)
    _replace_line(data / "providers.csv", 1, lambda line: line.rstrip("\r\n") + ",colour\n")
    with pytest.raises(DataFileError, match=r"providers\.csv:1: header: unknown columns \['colour'\]"):
        read_catalog(data)


def test_alias_to_unknown_gpu_is_refused(tmp_path):
    data = _data_copy(tmp_path)
    with (data / "gpu_aliases.csv").open("a", encoding="utf-8") as fh:
        fh.write("my imaginary card,no-such-gpu,user,0\n")
    with pytest.raises(DataFileError, match=r"gpu_aliases\.csv:\d+: gpu_id: unknown id 'no-such-gpu'"):
        read_catalog(data)


def test_duplicate_id_is_refused(tmp_path):
    data = _data_copy(tmp_path)
    lines = (data / "models.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (data / "models.csv").write_text("".join(lines + [lines[1]]), encoding="utf-8")
    with pytest.raises(DataFileError, match=rf"models\.csv:{len(lines) + 1}: duplicate"):
        read_catalog(data)


def test_failed_load_changes_nothing(engine, tmp_path):
    load_catalog(engine)
    before = _count(engine, tables.GpuAlias)
    data = _data_copy(tmp_path)
    with (data / "gpu_aliases.csv").open("a", encoding="utf-8") as fh:
        fh.write("ghost,no-such-gpu,user,0\n")
    with pytest.raises(DataFileError):
        load_catalog(engine, data)
    assert _count(engine, tables.GpuAlias) == before
