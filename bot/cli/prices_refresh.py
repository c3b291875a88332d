"""`gpu-advisor prices refresh|status|chart`: live prices through gpuhunt (one transaction per provider), where
each provider's prices stand, and a price-history chart as a PNG."""

from __future__ import annotations

import argparse
from bot.cli.context import to_json  # strict JSON (issue 19): no NaN/Infinity, valid UTF-8
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.cli.context import Subparsers


def _prices_actions(subparsers: Subparsers) -> Subparsers:
    """The `prices` group's sub-commands (the catalog module registers `prices import`); made if missing."""
    parser = subparsers.choices.get("prices")
    if parser is None:
        parser = subparsers.add_parser("prices", help="price data")
        return parser.add_subparsers(dest="prices_command", metavar="ACTION")
    for action in parser._actions:  # argparse keeps a group's sub-commands as a private action
        if isinstance(action, argparse._SubParsersAction):
            return action
    return parser.add_subparsers(dest="prices_command", metavar="ACTION")


def register(subparsers: Subparsers) -> None:
    p = _prices_actions(subparsers).add_parser(
        "refresh", help="fetch live prices through gpuhunt; a provider that fails keeps its last prices")
    p.add_argument("--provider", action="append", default=[],
                   help="gpuhunt provider name (aws, azure, gcp, lambdalabs, nebius, oci, runpod, verda, cloudrift); repeatable")
    p.add_argument("--catalog-url", default=os.environ.get("GPUHUNT_CATALOG_URL"),
                   help="where gpuhunt catalogs are published (default: GPUHUNT_CATALOG_URL or gpuhunt's own)")
    p.add_argument("--json", action="store_true", help="print the outcome per provider as JSON")
    p.set_defaults(handler=cmd_refresh)
    actions = _prices_actions(subparsers)
    p = actions.add_parser("status", help="per provider: offers, observed-at, last refresh, last error")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_status)
    p = actions.add_parser("chart", help="a PNG of one GPU's cheapest price per GPU-hour over time, per market kind")
    p.add_argument("gpu", help="a GPU name (anything `resolve` understands)")
    p.add_argument("--out", type=Path, required=True, help="where to write the PNG")
    p.add_argument("--days", type=int, default=90, help="how many days back (default 90, at most 730)")
    p.add_argument("--lang", default=None, help="label language (en, zh-Hans, ko, ja, es, de, fr, vi)")
    p.set_defaults(handler=cmd_chart)


def cmd_refresh(args: argparse.Namespace) -> int:
    from bot.cli.context import open_context
    from knowledge.gpuhunt_source import refresh

    ctx = open_context()
    results = refresh(ctx.engine, catalog_url=args.catalog_url, providers=args.provider)
    if args.json:
        print(to_json([{
            "provider": r.provider, "provider_id": r.provider_id, "ok": r.ok, "catalog_version": r.catalog_version,
            "items": r.items, "observations": r.observations, "unmapped": r.unmapped, "error": r.error,
        } for r in results], indent=2))
    else:
        for r in results:
            if r.ok:
                print(f"{r.provider_id}: {r.observations} prices from gpuhunt catalog {r.catalog_version}"
                      + (f" ({sum(r.unmapped.values())} rows of unknown accelerators)" if r.unmapped else ""))
            else:
                print(f"{r.provider_id}: failed ({r.error}); its last prices stay in use")
    return 0 if any(r.ok for r in results) else 1


def status_json(ctx_engine: Any, *, now: datetime, stale_after_days: int) -> list[dict[str, Any]]:
    from knowledge.price_status import provider_status

    def iso(value: datetime | None) -> str | None:
        return value.isoformat() if value is not None else None

    return [{
        "provider": s.provider_id, "offers": s.offers, "observed_at": iso(s.observed_at), "source": s.source,
        "bundled": s.bundled, "age_days": s.age_days, "stale": s.stale, "last_refresh_at": iso(s.last_refresh_at),
        "last_failure_at": iso(s.last_failure_at), "last_error": s.last_error,
    } for s in provider_status(ctx_engine, now=now, stale_after_days=stale_after_days)]


def cmd_status(args: argparse.Namespace) -> int:
    from bot.cli.catalog import table
    from bot.cli.context import open_context

    ctx = open_context()
    rows = status_json(ctx.engine, now=datetime.now(UTC), stale_after_days=ctx.settings.price_stale_days)
    if args.json:
        print(to_json(rows, indent=2))
        return 0
    body = [[r["provider"], str(r["offers"]), (r["observed_at"] or "—")[:10],
             f"{r['age_days']:g} d" + (" (old)" if r["stale"] else "") if r["age_days"] is not None else "—",
             (r["source"] or "—") + (" (bundled)" if r["bundled"] else ""), (r["last_refresh_at"] or "never")[:16],
             (r["last_error"] or "")[:60]] for r in rows]
    print(table(["provider", "offers", "observed", "age", "source", "last refresh", "last error"], body))
    print(f"Prices older than {ctx.settings.price_stale_days} days are marked old (PRICE_STALE_DAYS); "
          "`gpu-advisor prices refresh` fetches live ones, and the clock does it every "
          f"{ctx.settings.price_refresh_hours:g} h (PRICE_REFRESH_HOURS).")
    return 0


def cmd_chart(args: argparse.Namespace) -> int:
    from bot.cli.context import CliError, open_context
    from bot.render.chart import render_price_chart
    from bot.render.messages import LANGUAGES
    from knowledge.history import price_history

    if not 1 <= args.days <= 730:
        raise CliError(f"--days must be from 1 to 730, got {args.days}")
    ctx = open_context()
    lang = args.lang or ctx.settings.default_language
    if lang not in LANGUAGES:
        raise CliError(f"--lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    snapshot = ctx.snapshot()
    match = snapshot.gpu_index.resolve(args.gpu)
    if match.status != "found" or match.gpu_id is None:
        options = ", ".join(snapshot.gpus[g].name for g in (match.candidates or match.suggestions)[:4])
        raise CliError(f"{args.gpu!r} is {'ambiguous' if match.status == 'ambiguous' else 'not in the catalog'}"
                       + (f": did you mean {options}?" if options else ""))
    series = price_history(ctx.engine, match.gpu_id, until=datetime.now(UTC), days=args.days)
    png = render_price_chart(series, gpu_name=snapshot.gpus[match.gpu_id].name, language=lang, days=args.days)
    try:
        args.out.write_bytes(png)
    except OSError as exc:
        raise CliError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    kinds = ", ".join(f"{k} ({len(v)} days)" for k, v in sorted(series.items())) or "no prices in that period"
    print(f"{args.out}: {snapshot.gpus[match.gpu_id].name}, {kinds}")
    return 0
