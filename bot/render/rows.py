"""Localized table rows for the comparison, specs and price cards (the guides' comparison-table rows)."""

from __future__ import annotations

from bot.render.formats import DASH, Formatter
from bot.render.market import labelled_rate
from bot.render.views import GpuColumn, PriceView
from rules.types import PurchasePrice


def spec_rows(columns: tuple[GpuColumn, ...], f: Formatter) -> list[list[str]]:
    """Rows of the guides' tables: label then one cell per GPU; first row names the GPUs."""
    p = f.messages.plain
    gpus = [c.gpu for c in columns]
    rows = [
        [""] + [g.name for g in gpus],
        [p("row.vendor")] + [g.vendor for g in gpus],
        [p("row.architecture")] + [f.architecture(g.architecture) for g in gpus],
        [p("row.vram")] + [f"{f.gb(g.vram_gb)} {g.memory_type}" for g in gpus],
        [p("row.bandwidth")] + [f"{f.number(g.memory_bandwidth_gbs)} GB/s" for g in gpus],
        [p("row.fp16")] + [_fp16(g.fp16_dense_tflops, g.bf16_dense_tflops, f) for g in gpus],
        [p("row.fp8")] + [f.tflops(g.fp8_dense_tflops) for g in gpus],
        [p("row.fp32")] + [f.tflops(g.fp32_tflops) for g in gpus],
        [p("row.tdp")] + [f"{f.number(g.tdp_w)} W" for g in gpus],
        [p("row.year")] + [str(g.release_year) for g in gpus],
        [p("row.segment")] + [f.segment(g.segment) for g in gpus],
    ]
    return rows


def market_rows(columns: tuple[GpuColumn, ...], f: Formatter) -> list[list[str]]:
    p = f.messages.plain
    return [
        [p("row.cheapest")] + [_cheapest(c, f) for c in columns],
        [p("row.providers")] + [f.number(c.provider_count) for c in columns],
    ]


def comparison_table(columns: tuple[GpuColumn, ...], f: Formatter) -> list[list[str]]:
    """The full side-by-side table: spec rows, then the cloud-price rows under their group label."""
    p = f.messages.plain
    spacer = [f"[{p('row.group.prices')}]"]
    return spec_rows(columns, f) + [spacer] + market_rows(columns, f)


def detail_rows(column: GpuColumn, f: Formatter) -> list[tuple[str, str]]:
    """Specs-card label/value pairs beyond the comparison rows."""
    p = f.messages.plain
    g = column.gpu
    link = g.scaleup_link if not g.has_nvlink_class_link else f"{g.scaleup_link}, {f.number(g.scaleup_bw_gbs)} GB/s"
    mig = p("value.mig", count=g.mig_instances) if g.mig_instances else p("value.no")
    return [
        (p("row.scaleup"), link),
        (p("row.multinode"), p("value.yes") if g.multinode_fabric else p("value.no")),
        (p("row.mig"), mig),
        (p("row.software"), g.software_stack),
        (p("row.form_factor"), g.form_factor),
        (p("row.purchase"), f.money(g.purchase_usd, cents=False) if g.purchase_usd else DASH),
        *([(p("row.street"), street_text(column, f))] if column.street else []),
    ]


def street_text(column: GpuColumn, f: Formatter) -> str:
    """The newest street price per condition: "new $2,200–$2,800 (Feb 1, 2026) · used $700–$1,000 (…)"."""
    newest: dict[str, PurchasePrice] = {}
    for price in column.street:  # newest first
        newest.setdefault(price.condition, price)
    parts = []
    for condition in ("new", "used"):
        found = newest.get(condition)
        if found is None:
            continue
        price = found
        amount = f.money(price.usd_low, cents=False)
        if price.usd_high != price.usd_low:
            amount += "–" + f.money(price.usd_high, cents=False)
        parts.append(f.messages.plain(f"value.street_{condition}", price=amount, date=f.date(price.observed)))
    return " · ".join(parts)


def price_table(view: PriceView, f: Formatter, limit: int) -> list[list[str]]:
    """Provider rows: on-demand and spot $/GPU-hour, billing increment, observed date."""
    p = f.messages.plain
    header = [p("price.col.provider"), p("price.col.on_demand"), p("price.col.spot"),
              p("price.col.billing"), p("price.col.observed")]
    body = [
        [r.provider_name, labelled_rate(r.on_demand_usd, r.on_demand_market, f),
         labelled_rate(r.spot_usd, r.spot_market, f), f.billing(r.billing_increment_s), f.date(r.observed_at)]
        for r in view.rows[:limit]
    ]
    return [header] + body


def _fp16(fp16: float, bf16: float | None, f: Formatter) -> str:
    if bf16 is None or bf16 == fp16:
        return f.tflops(fp16) + ("" if bf16 is not None else " (FP16)")
    return f"{f.tflops(fp16)} / {f.tflops(bf16)}"


def _cheapest(column: GpuColumn, f: Formatter) -> str:
    offer = column.cheapest_on_demand
    if offer is None:
        return DASH
    if offer.market == "marketplace":  # a median of listings: a price to start from, not a machine's fixed rate
        return f.messages.plain("price.from", rate=f.rate(offer.usd_per_gpu_hour))
    return f.rate(offer.usd_per_gpu_hour)
