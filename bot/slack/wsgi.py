"""HTTP mode: Bolt's WSGI adapter (events, commands, interactivity, OAuth) under gunicorn gthread workers."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from gunicorn.app.base import BaseApplication

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


class GunicornServer(BaseApplication):  # type: ignore[misc]  # gunicorn ships no types: its base class is untyped
    """gunicorn run in-process: each worker builds its own WSGI app (and answer workers) after the fork."""

    def __init__(self, build: Callable[[], Wsgi], options: Mapping[str, object]) -> None:
        self._build, self._options = build, options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self._options.items():
            self.cfg.set(key, value)

    def load(self) -> Wsgi:
        return self._build()


def drain_on_exit(server: object, worker: object) -> None:
    """gunicorn `worker_exit` hook: answer the requests already accepted before the process goes."""
    close = getattr(getattr(worker, "wsgi", None), "close", None)
    if close is not None:
        close()


def gunicorn_options(*, host: str, port: int, workers: int, threads: int, log_level: str) -> dict[str, object]:
    """gthread workers: threads wait on Slack and the database, so few processes serve many requests."""
    return {
        "bind": f"{host}:{port}",
        "workers": workers,
        "worker_class": "gthread",
        "threads": threads,
        "timeout": 30,
        "graceful_timeout": 10,
        "keepalive": 5,
        "accesslog": None,
        "errorlog": "-",
        "loglevel": log_level.lower(),
        "preload_app": False,
        "worker_exit": drain_on_exit,
    }
