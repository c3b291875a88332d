"""`gpu-advisor serve --http [--port PORT] | --socket`: run the Slack app."""

from __future__ import annotations

import argparse
import logging
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.cli.context import Subparsers
    from bot.settings import Settings

log = logging.getLogger(__name__)


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "serve", help="run the Slack app over HTTP (production) or Socket Mode (development)"
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--http", action="store_true", help="serve /slack/events under gunicorn (default)")
    mode.add_argument("--socket", action="store_true", help="Socket Mode with SLACK_APP_TOKEN")
    parser.add_argument("--port", type=int, default=None, help="HTTP port (default: $PORT or 3000)")
    parser.add_argument("--host", default="0.0.0.0", help="HTTP address to bind (default: 0.0.0.0)")
    parser.add_argument(
        "--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", "2")),
        help="HTTP worker processes (default: $WEB_CONCURRENCY or 2)",
    )
    parser.add_argument("--threads", type=int, default=16, help="threads per HTTP worker (default: 16)")
    parser.add_argument(
        "--answer-workers", type=int, default=1,
        help="answer processes per HTTP worker, at lower CPU priority (default: 1)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from bot.settings import load_settings

    settings = load_settings()
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s",
        force=True,
    )
    if args.socket:
        return run_socket(settings)
    return run_http(
        settings, host=args.host, port=args.port or settings.port, workers=args.workers,
        threads=args.threads, answer_workers=args.answer_workers,
    )


def run_http(settings: Settings, *, host: str, port: int, workers: int, threads: int, answer_workers: int) -> int:
    """Web processes only verify, enqueue and acknowledge; answers run in their worker processes."""
    from functools import partial

    from bot.settings import require_slack_http
    from bot.slack.app import build_http_front
    from bot.slack.wsgi import GunicornServer, gunicorn_options
    from knowledge.setup import prepare_database

    require_slack_http(settings)
    prepare_database(settings.database_url).dispose()  # migrate once, before the workers fork
    options = gunicorn_options(host=host, port=port, workers=workers, threads=threads, log_level=settings.log_level)
    GunicornServer(partial(build_http_front, settings, answer_workers=answer_workers), options).run()
    return 0


def run_socket(settings: Settings) -> int:
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    from bot.settings import require_slack_socket
    from bot.slack.app import build_production_app

    require_slack_socket(settings)
    app = build_production_app(settings)
    SocketModeHandler(app, app_token=settings.slack_app_token).start()  # type: ignore[no-untyped-call]  # slack_bolt leaves start() unannotated
    return 0
