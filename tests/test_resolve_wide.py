"""The wide catalog's names: China-market, modified, laptop, workstation, Apple silicon, TPU and Trainium spellings.

`tests/cases/resolve_wide_cases.csv` holds spellings per family (a domain expert can extend it). The
exact-resolution rate (found with the right id and count, ambiguous with the right candidates, none
when there is no such part) is printed; every miss is listed.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from knowledge.load import read_catalog
from knowledge.resolve import GpuIndex, GpuMatch
from knowledge.snapshot import gpu_spec

CASES = Path(__file__).parent / "cases" / "resolve_wide_cases.csv"
FLOOR = 0.97  # the rate this table must keep; misses are printed, not hidden


@pytest.fixture(scope="module")
def index() -> GpuIndex:
    catalog = read_catalog()
    return GpuIndex.build({r.id: gpu_spec(r) for r in catalog["gpus"]}, catalog["gpu_aliases"])


def case_passes(match: GpuMatch, case: dict[str, str]) -> bool:
    """found: same id and count; ambiguous: the listed ids are among the candidates; none: none."""
    count = int(case["count"]) if case["count"] else None
    if match.status != case["status"]:
        return False
    if case["status"] == "found":
        return match.gpu_id == case["gpu_id"] and match.count == count
    if case["status"] == "ambiguous":
        return set(case["gpu_id"].split("|")) <= set(match.candidates) and match.count == count
    return match.gpu_id is None


def _cases() -> list[dict[str, str]]:
    with CASES.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_table_is_wide() -> None:
    cases = _cases()
    assert len(cases) >= 400
    assert len({c["query"] for c in cases}) == len(cases), "each spelling once"


def test_exact_resolution_rate(index: GpuIndex, capsys: pytest.CaptureFixture[str]) -> None:
    cases = _cases()
    misses = [(c, index.resolve(c["query"])) for c in cases if not case_passes(index.resolve(c["query"]), c)]
    rate = 1 - len(misses) / len(cases)
    with capsys.disabled():
        print(f"\nwide catalog: exact resolution {rate:.1%} of {len(cases)} spellings ({len(misses)} wrong)")
        for case, got in misses:
            print(f"  miss {case['query']!r}: want {case['status']} {case['gpu_id']}; got {got.status} {got.gpu_id or got.candidates}")
    assert rate >= FLOOR


@pytest.mark.parametrize("query", ["4090", "4060", "5090", "4080", "4070", "RTX 4090", "NVIDIA GeForce RTX 4060"])
def test_a_desktop_name_never_resolves_to_a_laptop_or_a_regional_or_modified_card(index: GpuIndex, query: str) -> None:
    match = index.resolve(query)
    assert match.status == "found"
    gpu = index.gpus[match.gpu_id or ""]
    assert not gpu.laptop and not gpu.modified and not gpu.id.endswith(("-d", "-d-v2"))


@pytest.mark.parametrize("query", ["4090 laptop", "RTX 4060 Laptop GPU", "5090m", "笔记本4080", "4070 노트북"])
def test_a_laptop_name_never_resolves_to_the_desktop_card(index: GpuIndex, query: str) -> None:
    match = index.resolve(query)
    assert match.status == "found" and index.gpus[match.gpu_id or ""].laptop


def test_every_apple_row_is_unified_memory_with_a_usable_share_below_one(index: GpuIndex) -> None:
    apple = [g for g in index.gpus.values() if g.vendor == "Apple"]
    assert len(apple) >= 30
    assert all(g.unified_memory and 0.5 < g.gpu_usable_fraction < 1 and g.software_stack == "MLX/Metal" for g in apple)
    # macOS's default working-set limit: about two thirds up to 36 GB, three quarters above (SOURCES.md)
    assert {g.gpu_usable_fraction for g in apple if g.vram_gb <= 36} == {0.67}
    assert {g.gpu_usable_fraction for g in apple if g.vram_gb > 36} == {0.75}


def test_modified_cards_are_marked_and_unpriced(index: GpuIndex) -> None:
    mods = {g.id for g in index.gpus.values() if g.modified}
    assert mods == {"rtx-4090-mod-48gb", "rtx-2080-ti-mod-22gb"}
    assert all(index.gpus[g].purchase_usd is None for g in mods)
