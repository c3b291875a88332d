"""Street prices to buy a GPU (knowledge/data/purchase_prices.csv): every row dated, sourced, a catalog GPU;
shown on the specs card as the newest new and used price."""

from __future__ import annotations

import csv
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from bot.render.cards import render_card, render_terminal
from bot.render.views import SpecsView, gpu_column
from knowledge.purchase import PURCHASE_FILE, PurchaseDataError, read_purchase_prices

GPUS = {r["id"] for r in csv.DictReader((PURCHASE_FILE.parent / "gpus.csv").open(encoding="utf-8"))}
ROWS = list(csv.DictReader(PURCHASE_FILE.open(encoding="utf-8", newline="")))


def test_every_street_price_is_a_dated_sourced_catalog_gpu() -> None:
    prices = read_purchase_prices()
    assert len(prices) == len(ROWS) >= 8
    assert {p.gpu_id for p in prices} <= GPUS
    assert {p.condition for p in prices} == {"new", "used"}
    assert all(p.observed <= date.today() and p.source.startswith("https://") for p in prices)
    # The GPUs people buy: consumer, Apple silicon and DGX Spark-class are all covered.
    assert {"rtx-3090", "rtx-4090", "rtx-5090", "dgx-spark"} <= {p.gpu_id for p in prices}
    assert any(p.gpu_id.startswith("apple-") for p in prices)


@pytest.mark.parametrize(("cell", "value", "message"), [
    ("condition", "refurbished", "condition must be new or used"),
    ("usd_low", "NaN", "need 0 < usd_low"),
    ("usd_high", "1", "need 0 < usd_low <= usd_high"),
    ("observed", "2026-02-30", "observed must be a date"),
    ("source", "a forum post", "source URL"),
])
def test_a_bad_row_is_named(tmp_path: Path, cell: str, value: str, message: str) -> None:
    rows = [dict(r) for r in ROWS]
    rows[2][cell] = value
    path = tmp_path / "purchase_prices.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(ROWS[0]))
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(PurchaseDataError, match=rf"purchase_prices\.csv:4: .*{message}"):
        read_purchase_prices(path)


def test_specs_card_shows_the_newest_new_and_used_street_price(snapshot) -> None:  # type: ignore[no-untyped-def]
    # From purchase_prices.csv: the 4090's newest new price is the Feb 2026 range, not the 2023 average.
    newest = max((r for r in ROWS if r["gpu_id"] == "rtx-4090" and r["condition"] == "new"), key=lambda r: r["observed"])
    assert (newest["usd_low"], newest["usd_high"]) == ("2200", "2800")
    card = render_card("specs", SpecsView(gpu_column(snapshot, "rtx-4090"), datetime(2026, 11, 1, tzinfo=UTC)), "en",
                       now=datetime(2026, 11, 2, tzinfo=UTC))
    text = render_terminal(card)
    assert "Street price: new $2,200–$2,800 (Feb 1, 2026)" in text
    used = gpu_column(snapshot, "rtx-3090")
    assert [p.usd_low for p in used.street if p.condition == "used"] == [Decimal("700")]
