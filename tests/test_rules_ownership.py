"""Buy vs rent (issue 17 item 6): owning the cards for the job against the cheapest rental of the same job.

Expected values are hand arithmetic from the catalog's launch price (RTX 4090: $1,599, 450 W), the stated
electricity price and resale share, never the engine's output.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from types import SimpleNamespace

import pytest
from test_rules_support import catalog_gpus, model, providers, tables

from rules.engine import evaluate
from rules.market.ownership import buy_vs_rent, purchase_prices
from rules.plans.ranking import Scored
from rules.types import Offer, Workload, field_names
from rules.verdict import MemoryEstimate, Option

GPUS = catalog_gpus()
STAMP = datetime(2026, 1, 1, tzinfo=UTC)


def scored(gpu_id: str, count: int, hours: float, work_usd: float | None) -> Scored:
    memory = MemoryEstimate(10.0, 9.0, 11.0, {}, count, "none", 0.0)
    option = Option(gpu_id, count, 1, "none", (), memory, hours, None, None, ())
    return Scored(option, work_usd, None, hours, 1.0)


def test_break_even_by_hand():
    """Own one RTX 4090 ($1,599; 450 W x 1.3 x $0.15/kWh = $0.08775 per hour); the job takes 10 h on it and
    the cheapest rental (an A100 plan; a rented 4090 would cost $25) does it for $20. Net of resale (57 % after 3 years) the card costs $687.57; each job
    saves 20 - 0.8775 = $19.1225; break-even after 35.96 jobs = 359.6 hours of use = 1.37 % of 3 years."""
    gpu = GPUS["rtx-4090"]
    assert (float(gpu.purchase_usd), gpu.tdp_w) == (1599.0, 450)
    own = scored("rtx-4090", 1, 10.0, 25.0)  # renting a 4090 for the job: $25, dearer than the A100 plan
    rent = scored("a100-sxm-80gb", 1, 3.0, 20.0)
    t = replace(tables(), power_usd_per_kwh=0.15, resale_share=0.57, ownership_years=3.0)
    (finding,) = buy_vs_rent(gpu, own, [own, rent], Workload(), t, dataset_known=True)
    n = finding.numbers
    net = 1599 * (1 - 0.57)
    margin = 20.0 - 0.450 * 1.3 * 0.15 * 10.0
    assert n["rent_gpu"] == "a100-sxm-80gb" and n["rent_usd_per_job"] == 20.0  # the cheapest rental of the job
    assert n["net_capex_usd"] == pytest.approx(net, abs=0.01)
    assert n["break_even_jobs"] == pytest.approx(net / margin, abs=0.05)
    assert n["break_even_hours"] == pytest.approx(net / margin * 10.0, abs=0.05)
    assert n["utilisation_pct"] == pytest.approx(100 * net / margin * 10.0 / (3 * 8760), abs=0.05)
    assert n["owning_wins"] == "yes" and n["price_basis"] == "new"


def test_a_job_longer_than_the_break_even_pays_off_within_itself():
    """A 4090 job of 10,000 h whose cheapest rental costs $3,000: net of resale the card costs $687.57, the job
    saves 3,000 - 0.450 x 1.3 x 0.15 x 10,000 = $2,122.50, so owning has paid for itself after 0.32 of the job
    (3,239.4 h): said as within this one job, not "after 0.3 jobs"."""
    own = scored("rtx-4090", 1, 10_000.0, 4_000.0)
    rent = scored("a100-sxm-80gb", 1, 3_000.0, 3_000.0)
    t = replace(tables(), power_usd_per_kwh=0.15, resale_share=0.57, ownership_years=3.0)
    (finding,) = buy_vs_rent(GPUS["rtx-4090"], own, [own, rent], Workload(), t, dataset_known=True)
    margin = 3_000.0 - 0.450 * 1.3 * 0.15 * 10_000.0
    assert finding.code == "buy.vs_rent_within_job"
    assert finding.numbers["break_even_hours"] == pytest.approx(1599 * 0.43 / margin * 10_000.0, abs=0.05)


def test_a_dated_street_price_wins_over_the_launch_price():
    """knowledge/data/purchase_prices.csv: RTX 4090 new $2,000 (2023-11-23) and $2,200-2,800 (2026-02-01): the
    newest, at the low end of its range, replaces the $1,599 launch price; RTX 3090 used $700-1,000 (2026-02-01)
    comes beside its $1,499 launch price. Without street prices the launch price stands."""
    from knowledge.purchase import by_gpu, read_purchase_prices

    street = by_gpu(read_purchase_prices(), GPUS)
    (new,) = purchase_prices(GPUS["rtx-4090"], street["rtx-4090"])
    assert (new.basis, new.usd, new.date) == ("street", 2200.0, "2026-02-01")
    prices = purchase_prices(GPUS["rtx-3090"], street["rtx-3090"])
    assert [(p.basis, p.usd, p.date) for p in prices] == [("new", 1499.0, prices[0].date), ("used", 700.0, "2026-02-01")]
    assert [p.basis for p in purchase_prices(GPUS["rtx-4090"])] == ["new"]
    own = scored("rtx-4090", 1, 10.0, 25.0)
    (finding,) = buy_vs_rent(GPUS["rtx-4090"], own, [own, scored("a100-sxm-80gb", 1, 3.0, 20.0)], Workload(),
                             tables(), True, street["rtx-4090"])
    assert finding.numbers["purchase_usd"] == 2200.0 and finding.numbers["price_basis"] == "street"
    assert finding.numbers["price_source"].startswith("https://insiderllm.com/")


def test_the_users_electricity_price_is_used():
    """At $0.40/kWh the 4090 draws 0.585 kW x 0.40 = $0.234 an hour."""
    own = scored("rtx-4090", 1, 10.0, 5.0)
    workload = Workload(electricity_usd_per_kwh=Decimal("0.40"))
    (finding,) = buy_vs_rent(GPUS["rtx-4090"], own, [own], workload, tables(), dataset_known=False)
    assert finding.numbers["power_usd_per_hour"] == pytest.approx(0.450 * 1.3 * 0.40, abs=1e-4)
    assert finding.numbers["power_usd_per_kwh"] == 0.40 and finding.numbers["job_basis"] == "reference"


def test_owning_never_wins_when_power_costs_more_than_renting():
    own = scored("rtx-4090", 1, 100.0, 5.0)
    (finding,) = buy_vs_rent(GPUS["rtx-4090"], own, [own, scored("l4", 1, 1.0, 1.0)], Workload(), tables(), True)
    assert finding.numbers["owning_wins"] == "never"


def test_new_and_used_prices_with_date_and_source_when_the_catalog_has_them():
    fields = {name: getattr(GPUS["rtx-3090"], name) for name in field_names(type(GPUS["rtx-3090"]))}
    fields.update(purchase_date="2020-09-24", purchase_source="NVIDIA launch MSRP",
                  used_usd=Decimal("800"), used_date="2026-01", used_source="eBay sold listings")
    card = SimpleNamespace(**fields)
    prices = purchase_prices(card)
    assert [(p.basis, p.usd, p.date) for p in prices] == [("new", 1499.0, "2020-09-24"), ("used", 800.0, "2026-01")]
    own = scored("rtx-3090", 2, 10.0, 5.0)
    found = buy_vs_rent(card, own, [own, scored("h100-sxm-80gb", 1, 2.0, 30.0)], Workload(), tables(), True)
    used = next(f for f in found if f.numbers["price_basis"] == "used")
    assert used.numbers["purchase_usd"] == 1600.0 and used.numbers["price_source"] == "eBay sold listings"


def offer(gpu_id: str, usd: str, count: int = 1) -> Offer:
    price = Decimal(usd)
    return Offer(gpu_id, "secs", f"{gpu_id}-{count}", count, "us", "on-demand", price * count, price, 1,
                 "NVLink", STAMP, "test")


def test_should_i_buy_a_4090_or_rent_is_answered_in_the_verdict():
    """'Should I buy a 4090 or rent an A100?': the pinned 4090's plan against the cheapest rental of the job."""
    pool = ("rtx-4090", "a100-sxm-80gb")
    gpus = {g: GPUS[g] for g in pool}
    offers = {"rtx-4090": (offer("rtx-4090", "0.35"),), "a100-sxm-80gb": (offer("a100-sxm-80gb", "1.20"),)}
    workload = Workload(model=model("meta-llama/Llama-3.1-8B"), method="qlora", seq_len=2048, tokens=2e8,
                        gpu="rtx-4090", gpus=1)
    verdict = evaluate(workload, gpus=gpus, offers_by_gpu=offers, providers=providers(), tables=tables())
    finding = next(f for f in verdict.findings if f.code == "buy.vs_rent")
    n = finding.numbers
    assert n["gpu"] == "rtx-4090" and n["gpus"] == 1 and n["job_basis"] == "dataset"
    assert n["rent_gpu"] in pool and n["break_even_hours"] > 0 and 0 < n["utilisation_pct"]


def test_serving_buy_findings_use_the_street_price_where_recorded():
    """knowledge/data/purchase_prices.csv: RTX 4090 new from $2,200 (2026-02-01), above a $2,000 budget although
    its $1,599 launch price is below it; RTX 5090 from $2,699 (2026-06-22); a card without a street price keeps its
    list price and the year of it."""
    from knowledge.purchase import by_gpu, read_purchase_prices
    from rules.plans.serving_verdict import buy_price

    street = by_gpu(read_purchase_prices(), GPUS)
    assert buy_price(GPUS["rtx-4090"], street) == (2200.0, {
        "price_basis": "street", "price_date": "2026-02-01", "price_source": street["rtx-4090"][0].source})
    assert buy_price(GPUS["rtx-5090"], street)[0] == 2699.0
    usd, basis = buy_price(GPUS["rtx-3090-ti"], street)
    assert usd == float(GPUS["rtx-3090-ti"].purchase_usd) and basis["price_basis"] == "new"
    assert buy_price(GPUS["rtx-4090"], None) == (1599.0, {"price_basis": "new", "price_year": "2022"})
