"""Catalog commands: `resolve`, `specs`, `compare`, `db upgrade`, `prices import`."""

from __future__ import annotations

import argparse
from dataclasses import fields
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.cli.context import CliError, open_context, run_each, to_json
from rules.types import GpuSpec

if TYPE_CHECKING:
    from bot.cli.context import Subparsers
    from knowledge.prices import ImportReport
    from knowledge.snapshot import Snapshot

# `specs --json` gives every catalog field, in GpuSpec order (README "Catalog and prices" lists them).
SPEC_FIELDS = tuple(f.name for f in fields(GpuSpec))
COMPARE_ROWS = (
    ("vendor", "Vendor"), ("architecture", "Architecture"), ("vram", "VRAM"),
    ("memory_bandwidth_gbs", "Bandwidth (GB/s)"), ("bf16_dense_tflops", "FP16/BF16 tensor, dense (TFLOPS)"),
    ("fp8_dense_tflops", "FP8 dense (TFLOPS)"), ("fp32_tflops", "FP32 (TFLOPS)"), ("tdp_w", "TDP (W)"),
    ("release_year", "Year"), ("segment", "Segment"), ("scaleup", "Scale-up link"),
    ("cheapest_on_demand_usd_per_hour", "Cheapest on-demand ($/GPU-h)"), ("provider_count", "Providers"),
)


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser("resolve", help="resolve a GPU name as people or clouds write it")
    p.add_argument("name", help="a GPU name, or - to read one per line")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_resolve)

    p = subparsers.add_parser("specs", help="the catalog facts of one GPU")
    p.add_argument("name", help="a GPU name, or - to read one per line")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_specs)

    p = subparsers.add_parser("compare", help="2-4 GPUs side by side, with the cheapest on-demand price")
    p.add_argument("names", nargs="+", metavar="NAME", help="2 to 4 GPU names, or - to read one comparison per line")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_compare)

    db = subparsers.add_parser("db", help="database maintenance").add_subparsers(dest="db_command", metavar="ACTION")
    p = db.add_parser("upgrade", help="create or upgrade the schema, refresh the catalog, load bundled prices")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_db_upgrade)

    prices = subparsers.add_parser("prices", help="price data").add_subparsers(dest="prices_command", metavar="ACTION")
    p = prices.add_parser("import", help="import a price file in one transaction")
    p.add_argument("file", type=Path)
    p.add_argument("--format", choices=("skypilot", "csv", "json"), default=None,
                   help="default: json for .json, skypilot for a CSV named after a provider, else csv")
    p.add_argument("--provider", help="provider id (default: the SkyPilot file's name)")
    p.add_argument("--observed-at", help="ISO-8601 time the prices were observed, the source's own date (default: now)")
    p.add_argument("--allow-deactivate", action="store_true",
                   help="accept an import that switches off the provider's offers (an empty file, a shrunk catalog)")
    p.add_argument("--max-deactivated-pct", type=float, default=100.0,
                   help="refuse an import that switches off at least this share of the provider's offers (default 100)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_prices_import)


def gpu_ref(snapshot: Snapshot, gpu_id: str) -> dict[str, str]:
    return {"id": gpu_id, "name": snapshot.gpus[gpu_id].name}


def resolve_json(snapshot: Snapshot, name: str) -> dict[str, Any]:
    match = snapshot.gpu_index.resolve(name)
    return {
        "query": name,
        "status": match.status,
        "gpu": gpu_ref(snapshot, match.gpu_id) if match.status == "found" and match.gpu_id else None,
        "count": match.count,
        "candidates": [gpu_ref(snapshot, g) for g in match.candidates],
        "suggestions": [gpu_ref(snapshot, g) for g in match.suggestions],
    }


def specs_json(snapshot: Snapshot, name: str) -> dict[str, Any]:
    out = resolve_json(snapshot, name)
    if out["gpu"] is not None:
        spec = snapshot.gpus[out["gpu"]["id"]]
        out.update({f: _json_value(getattr(spec, f)) for f in SPEC_FIELDS})
        # what the GPU can hold: all of its VRAM, or macOS's default share of a Mac's unified memory
        out["usable_vram_gb"] = round(spec.vram_gb * spec.gpu_usable_fraction, 2)
    return out


def _json_value(value: object) -> object:
    """Money as a number (USD), dates as ISO-8601 text; everything else as it is."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, date):
        return value.isoformat()
    return value


def market_json(snapshot: Snapshot, gpu_id: str) -> dict[str, Any]:
    offers = snapshot.offers_by_gpu.get(gpu_id, ())
    on_demand = [o.usd_per_gpu_hour for o in offers if o.tier == "on-demand"]
    cheapest: Decimal | None = min(on_demand) if on_demand else None
    return {
        "cheapest_on_demand_usd_per_hour": float(cheapest) if cheapest is not None else None,
        "provider_count": len({o.provider_id for o in offers}),
    }


def _describe_miss(r: dict[str, Any]) -> str:
    names = [c["name"] for c in r["candidates"] or r["suggestions"]]
    hint = f": did you mean {' or '.join(names)}?" if names else ""
    word = "is ambiguous" if r["status"] == "ambiguous" else "is not in the catalog"
    return f"{r['query']!r} {word}{hint}"


def compare_json(snapshot: Snapshot, names: list[str]) -> dict[str, Any]:
    if not 2 <= len(names) <= 4:
        raise CliError("compare takes 2 to 4 GPU names")
    rows = [specs_json(snapshot, n) for n in names]
    misses = [_describe_miss(r) for r in rows if r["gpu"] is None]
    if misses:
        raise CliError("; ".join(misses))
    for r in rows:
        r.update(market_json(snapshot, r["id"]))
    return {"gpus": rows}


def _fmt(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".") if value < 100 else f"{value:,.0f}"
    return str(value)


def _table_cell(row: dict[str, Any], key: str) -> str:
    if key == "vram":
        return f"{_fmt(row['vram_gb'])} GB {row['memory_type']}"
    if key == "scaleup":
        return f"{row['scaleup_link']} ({_fmt(row['scaleup_bw_gbs'])} GB/s)" if row["scaleup_bw_gbs"] else row["scaleup_link"]
    return _fmt(row.get(key))


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def show_resolve(r: dict[str, Any]) -> str:
    if r.get("error"):
        return f"{r['query']}: {r['error']}"
    if r["status"] == "found":
        count = f" × {r['count']}" if r.get("count") else ""
        return f"{r['query']} → {r['gpu']['name']} ({r['gpu']['id']}){count}"
    return f"{r['query']}: {_describe_miss(r)}"


def show_specs(r: dict[str, Any]) -> str:
    if r["gpu"] is None:
        return show_resolve(r)
    keys = [k for k in SPEC_FIELDS if k not in ("id", "name")]
    return f"{r['name']} ({r['id']})\n" + table(["field", "value"], [[k, _fmt(r[k])] for k in keys])


def show_compare(result: dict[str, Any]) -> str:
    if result.get("error"):
        return f"{result['query']}: {result['error']}"
    gpus = result["gpus"]
    return table([""] + [g["name"] for g in gpus], [[label] + [_table_cell(g, k) for g in gpus] for k, label in COMPARE_ROWS])


def cmd_resolve(args: argparse.Namespace) -> int:
    snapshot = open_context().snapshot()
    return run_each(args.name, args.json, lambda q: resolve_json(snapshot, q), show_resolve)


def cmd_specs(args: argparse.Namespace) -> int:
    snapshot = open_context().snapshot()

    def answer(query: str) -> dict[str, Any]:
        out = specs_json(snapshot, query)
        if out["gpu"] is None and args.name != "-" and not args.json:
            raise CliError(_describe_miss(out))
        return out

    return run_each(args.name, args.json, answer, show_specs)


def cmd_compare(args: argparse.Namespace) -> int:
    snapshot = open_context().snapshot()
    if args.names == ["-"]:
        return run_each("-", True, lambda line: compare_json(snapshot, _split_names(line)), show_compare)
    result = compare_json(snapshot, args.names)
    print(to_json(result) if args.json else show_compare(result))
    return 0


def _split_names(line: str) -> list[str]:
    """One comparison per line: names separated by commas, ' vs ' or tabs."""
    for sep in ("\t", ",", " vs ", " VS ", " Vs "):
        if sep in line:
            return [p.strip() for p in line.split(sep) if p.strip()]
    return line.split()


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    from knowledge.db import make_engine
    from knowledge.load import DataFileError
    from knowledge.setup import upgrade_and_load

    settings = open_context().settings
    try:
        report = upgrade_and_load(make_engine(settings.database_url))
    except DataFileError as exc:
        raise CliError(f"catalog data: {exc}") from None
    summary = {
        "catalog": report.catalog and {k: getattr(report.catalog, k) for k in report.catalog.__slots__},
        "imports": [_import_json(r) for r in report.imports],
    }
    print(to_json(summary) if args.json else _show_setup(summary))
    return 0


def _import_json(r: ImportReport) -> dict[str, Any]:
    return {
        "file": r.file_name, "provider": r.provider_id, "rows_read": r.rows_read, "rows_kept": r.rows_kept,
        "offers": r.offers_written, "observations": r.observations,
        "deactivated": r.offers_deactivated, "unmapped": r.unmapped, "skipped": r.skipped,
        "observed_at": r.observed_at.isoformat(), "bundled": r.bundled, "current": r.current,
    }


def _show_setup(summary: dict[str, Any]) -> str:
    c = summary["catalog"]
    lines = [f"catalog: {c['gpus']} GPUs, {c['models']} models, {c['providers']} providers, "
             f"{c['gpu_aliases']} GPU aliases, {c['model_aliases']} model aliases"]
    lines += [_show_import(i) for i in summary["imports"]] or ["prices: already imported"]
    return "\n".join(lines)


def _show_import(i: dict[str, Any]) -> str:
    unmapped = ", ".join(f"{k} ({v})" for k, v in list(i["unmapped"].items())[:8])
    more = len(i["unmapped"]) - 8
    skipped = ", ".join(f"{k} ({v})" for k, v in i.get("skipped", {}).items())
    history = "" if i.get("current", True) else "; older than the prices in force: kept as history only"
    return (f"{i['file']}: {i['rows_read']} accelerator rows, {i.get('rows_kept', '?')} kept → {i['offers']} offers, "
            f"{i['deactivated']} switched off, observed {i.get('observed_at', '?')[:10]}"
            + (f"; skipped: {skipped}" if skipped else "")
            + (f"; unmapped: {unmapped}" + (f" and {more} more" if more > 0 else "") if unmapped else "") + history)


def cmd_prices_import(args: argparse.Namespace) -> int:
    from knowledge.price_validation import parse_observed_at
    from knowledge.prices import ImportPolicy, PriceImportError, import_prices

    fmt = args.format or ("json" if args.file.suffix == ".json" else "skypilot" if not args.provider and args.file.suffix == ".csv" and _is_skypilot(args.file) else "csv")
    if not 0 < args.max_deactivated_pct <= 100:
        raise CliError(f"--max-deactivated-pct must be more than 0 and at most 100, got {args.max_deactivated_pct}")
    policy = ImportPolicy(args.allow_deactivate, Decimal(str(args.max_deactivated_pct)) / 100)
    try:
        observed = parse_observed_at(args.observed_at) if args.observed_at else None
        engine = open_context().engine
        report = import_prices(engine, args.file, fmt=fmt, provider=args.provider, observed_at=observed, policy=policy)
    except PriceImportError as exc:
        raise CliError(f"nothing imported: {exc}") from None
    except OSError as exc:
        raise CliError(f"nothing imported: {args.file}: {exc.strerror or exc}") from None
    out = _import_json(report)
    print(to_json(out) if args.json else _show_import(out))
    return 0


def _is_skypilot(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return b"AcceleratorName" in fh.readline(65536)
    except OSError:
        return False
