"""Digest commands: `digest preview`, `digest run [--dry-run]`, and `scheduler` (the Procfile clock)."""

from __future__ import annotations

import argparse
import os

from bot.cli.context import to_json  # strict JSON (issue 19): no NaN/Infinity, valid UTF-8
import sys
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from bot.cli.context import Context, Subparsers
    from bot.digest.scheduler import Scheduler
    from bot.render.cards import SlackMessage
    from bot.render.digest import ChangeJson


class DigestPreview(TypedDict):
    """`digest preview --json`: the changes as data and the card as Slack would get it."""

    changes: list[ChangeJson]
    card: SlackMessage


def register(subparsers: Subparsers) -> None:
    digest = subparsers.add_parser("digest", help="price-change digests").add_subparsers(dest="digest_command", metavar="ACTION")
    p = digest.add_parser("preview", help="the digest between the prices at --since and the latest")
    p.add_argument("--since", help="ISO-8601 time (default: 24 hours before the newest prices)")
    p.add_argument("--gpus", help="comma-separated GPU names (default: every GPU)")
    p.add_argument("--threshold-pct", default="5", help="smallest change to report, percent (default 5)")
    p.add_argument("--threshold-usd", default="0.05", help="smallest change to report, $ per GPU-hour (default 0.05)")
    p.add_argument("--lang", default=None, help="card language (en, zh-Hans, ko, ja, es, de, fr, vi)")
    p.add_argument("--json", action="store_true", help="print {changes, card} as JSON")
    p.set_defaults(handler=cmd_preview)
    p = digest.add_parser("run", help="post the digests that are due now (once per subscription and period)")
    p.add_argument("--dry-run", action="store_true", help="show what is due without claiming or posting")
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    p.set_defaults(handler=cmd_run)
    p = subparsers.add_parser("scheduler", help="the digest clock: post due digests and fire alerts, forever")
    p.add_argument("--once", action="store_true", help="one tick, then exit")
    p.add_argument("--tick", type=float, default=30.0, help="seconds between ticks (default 30)")
    p.add_argument("--lease-seconds", type=float, default=300.0,
                   help="take over a claim whose owner has not finished after this long (default 300)")
    p.add_argument("--timeout", type=int, default=30, help="Slack request timeout in seconds (default 30)")
    p.add_argument("--no-refresh", action="store_true",
                   help="do not refresh live prices (default: every PRICE_REFRESH_HOURS, 6 h)")
    p.set_defaults(handler=cmd_scheduler)


def _parse_since(text: str | None) -> datetime | None:
    from bot.cli.context import CliError

    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise CliError(f"--since {text!r} is not an ISO-8601 time such as 2025-06-01T09:00:00Z") from None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _decimal(text: str, flag: str) -> Decimal:
    from bot.cli.context import CliError

    try:
        value = Decimal(text.rstrip("%").lstrip("$"))
    except InvalidOperation:
        value = Decimal(-1)
    if not value.is_finite() or value < 0:
        raise CliError(f"{flag} must be a number ≥ 0, got {text!r}")
    return value


def preview(ctx: Context, args: argparse.Namespace) -> DigestPreview:
    """{changes, card} between the prices at --since and the latest."""
    from bot.cli.context import CliError
    from bot.digest.card import changes_json, render_digest
    from bot.digest.commands import CommandProblem, resolve_gpus
    from knowledge.history import compute_digest, list_imports, newest_observation
    from rules.market.changes import Thresholds

    snapshot = ctx.snapshot()
    try:
        gpus = resolve_gpus(snapshot, [n for n in (args.gpus or "").split(",") if n.strip()])
    except CommandProblem as exc:
        raise CliError(str(exc)) from None
    since = _parse_since(args.since)
    if since is None:
        newest = newest_observation(list_imports(ctx.engine))
        if newest is None:
            raise CliError("no prices imported yet: run `gpu-advisor prices import FILE` or `prices refresh`")
        since = newest - timedelta(hours=24)  # the newest user or live data, else the bundled baseline
    thresholds = Thresholds(_decimal(args.threshold_pct, "--threshold-pct"), _decimal(args.threshold_usd, "--threshold-usd"))
    digest = compute_digest(ctx.engine, since=since, thresholds=thresholds, gpu_filter=frozenset(gpus),
                            gpu_order=tuple(snapshot.gpus))
    lang = args.lang or ctx.settings.default_language
    card = render_digest(digest, gpus=snapshot.gpus, providers=snapshot.providers, lang=lang)
    return {"changes": changes_json(digest, snapshot.gpus), "card": {"text": card["text"], "blocks": card["blocks"]}}


def cmd_preview(args: argparse.Namespace) -> int:
    from bot.cli.context import open_context

    result = preview(open_context(), args)
    if args.json:
        print(to_json(result, indent=2))
        return 0
    print(result["card"]["text"])
    for c in result["changes"]:
        pct = f" ({c['change_pct']:+.1f}%)" if c["change_pct"] is not None else ""
        print(f"  {c['kind']:<4} {c['gpu']['name']:<22} {c['provider']:<14} {c['gpu_count']}× {c['tier']:<9} "
              f"{c['old_usd_per_hour'] or '-':>10} → {c['new_usd_per_hour'] or '-':<10}{pct}")
    return 0


def build_scheduler(ctx: Context, *, dry_run: bool = False, lease_s: float = 300.0, timeout_s: int = 30,
                    refresh: bool = False) -> Scheduler:
    """A Scheduler on the context's database, with the workspace tokens available (bot token or OAuth store)."""
    from bot.digest.scheduler import InstallationTokens, Scheduler, SchedulerConfig, StaticTokens, TokenSource
    from knowledge.snapshot import load_snapshot

    settings = ctx.settings
    tokens: TokenSource = StaticTokens(settings.slack_bot_token)
    if settings.slack_client_id and not settings.slack_bot_token:
        from knowledge.slack_store import DbInstallationStore

        tokens = InstallationTokens(DbInstallationStore(engine=ctx.engine, client_id=settings.slack_client_id))
    every = timedelta(hours=settings.price_refresh_hours) if refresh and settings.price_refresh_hours > 0 else None
    cfg = SchedulerConfig(api_url=settings.slack_api_url, lease=timedelta(seconds=lease_s), timeout_s=timeout_s,
                          dry_run=dry_run, refresh_every=every, catalog_url=os.environ.get("GPUHUNT_CATALOG_URL"))
    engine = ctx.engine
    days = settings.price_stale_days
    return Scheduler(engine=engine, tokens=tokens, cfg=cfg, catalog=lambda: load_snapshot(engine, stale_after_days=days))


def cmd_run(args: argparse.Namespace) -> int:
    from bot.cli.context import open_context

    scheduler = build_scheduler(open_context(), dry_run=args.dry_run)
    report = scheduler.run_once()
    result = {"outcomes": report.outcomes, "alerts_fired": report.alerts_fired, "dry_run": scheduler.printed}
    if args.json:
        print(to_json(result, indent=2))
    else:
        for outcome, items in sorted(report.outcomes.items()):
            print(f"{outcome}: {len(items)}")
        for item in scheduler.printed:
            print(f"  would post to {item['channel_id']} for {item['period']}: {item['changes']} changes")
    return 0


def cmd_scheduler(args: argparse.Namespace) -> int:
    import logging
    import signal
    import threading

    from bot.cli.context import open_context

    ctx = open_context()
    logging.getLogger().setLevel(ctx.settings.log_level)  # LOG_LEVEL, as for `serve`
    scheduler = build_scheduler(ctx, lease_s=args.lease_seconds, timeout_s=args.timeout, refresh=not args.no_refresh)
    if args.once:
        report = scheduler.run_once()
        print(to_json({"outcomes": report.outcomes, "alerts_fired": report.alerts_fired}), flush=True)
        return 0
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(f"scheduler {scheduler.cfg.worker}: ticking every {args.tick:.0f} s", file=sys.stderr, flush=True)
    scheduler.run_forever(tick_s=args.tick, stop=stop)
    return 0
