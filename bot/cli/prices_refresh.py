"""`gpu-advisor prices refresh`: live prices through the gpuhunt catalog, one transaction per provider."""

from __future__ import annotations

import argparse
from bot.cli.context import to_json  # strict JSON (issue 19): no NaN/Infinity, valid UTF-8
import os
from typing import TYPE_CHECKING

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
