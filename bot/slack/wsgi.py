"""HTTP mode: the WSGI apps (the ack path, Bolt's adapter for OAuth) and Granian, the server that runs them."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

if TYPE_CHECKING:  # Bolt serves only the OAuth pages: the server's master process never imports it
    from slack_bolt import App

log = logging.getLogger(__name__)

HEALTH_PATH = "/healthz"
Wsgi = WSGIApplication


def wsgi_app(app: App, *, signing_secret: str | None = None) -> Wsgi:
    """Bolt's handler (`/slack/events`, `/slack/install`, `/slack/oauth_redirect`) plus a health check.

    A POST to `/slack/events` is screened first (bot.slack.bodies: 413, 401, 400) so that Bolt only
    ever parses a signed body of the shape it reads; `signing_secret` defaults to the app's own.
    """
    from slack_bolt.adapter.wsgi import SlackRequestHandler

    from bot.slack.bodies import Refusal, response, screen

    slack = SlackRequestHandler(app)
    secret = signing_secret if signing_secret is not None else str(getattr(app, "_signing_secret", "") or "")

    def serve(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        method, path = environ.get("REQUEST_METHOD"), environ.get("PATH_INFO")
        if path == HEALTH_PATH and method == "GET":
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"ok"]
        if path == slack.path and method == "POST":
            checked = screen(environ, signing_secret=secret)
            if isinstance(checked, Refusal):
                status, content_type, body = response(checked)
                start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body)))])
                return [body]
        return slack(environ, start_response)

    return serve


def serve_granian(build: Callable[[], Wsgi], *, host: str, port: int, workers: int, threads: int,
                  log_level: str) -> None:
    """Granian's WSGI server until SIGINT/SIGTERM: `workers` processes (forked; each builds its own app with
    `build`), `threads` blocking threads each running the app, a worker that dies is started again. Granian
    sets up logging in each worker (dictConfig of its own loggers) before `build` runs: `build` sets ours.

    Granian reads and writes HTTP in Rust (hyper) and calls Python only for the app: a do-nothing app costs
    about 0.05 ms of CPU per request under it, against 0.27 ms under gunicorn gthread on the same 2-core
    host (docs/BENCHMARKS.md, "The HTTP server"). Options are Granian's own (granian/server/common.py,
    `Server.__init__`).
    """
    from granian.constants import Interfaces
    from granian.log import LogLevels
    from granian.server import Server

    server = Server(
        "gpu-advisor",  # a label only: the app comes from `build` (target_loader), not from an import path
        address=host, port=port, interface=Interfaces.WSGI, workers=workers, blocking_threads=threads,
        respawn_failed_workers=True, respawn_interval=RESPAWN_S, workers_kill_timeout=STOP_LIMIT_S,
        log_level=LogLevels(_granian_level(log_level)), log_access=False, websockets=False,
    )
    server.serve(target_loader=build, wrap_loader=False)


RESPAWN_S = 0.2  # a killed web worker is replaced after this pause (Granian's default is 3.5 s)
# A worker still running this long after SIGTERM is killed. Without a limit Granian waits for ever, and a
# worker forked just before the signal (still building its app, Granian's handlers not yet installed in it)
# never sees it: 2 of 20 quick start-stop cycles hung so. An ack takes milliseconds.
STOP_LIMIT_S = 10


def _granian_level(level: str) -> str:
    name = level.lower()
    return name if name in ("critical", "error", "warning", "info", "debug") else "info"
