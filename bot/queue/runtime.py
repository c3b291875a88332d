"""Putting the queue together from settings: the web side (record + enqueue) and a worker process."""

from __future__ import annotations

import json
import logging
from functools import partial
from typing import TYPE_CHECKING, Any

from bot.queue.engine import answer_task, backend, consumer_options, enqueue_many, make_huey
from bot.queue.intake import DurableQueue, sqlite_write_lock
from bot.queue.jobs import SOCKET_MODE, Job, parse_body
from knowledge.secret_box import SecretBox, load_box

if TYPE_CHECKING:  # a web process imports none of the worker's modules (start time): imported where used
    from huey import Huey
    from slack_bolt import App
    from sqlalchemy import Engine

    from bot.queue.worker import AnswerWorker, Keeper, WorkerConfig
    from bot.settings import Settings
    from bot.slack.front import Front, Wsgi
    from bot.slack.ratelimit import Limiter
    from knowledge.slack_requests import ClaimedRequest

log = logging.getLogger(__name__)


def sqlite_normal_sync(engine: Engine) -> Engine:
    """On SQLite, synchronous=NORMAL for this engine's connections: in WAL mode a commit still survives the
    process being killed (the ack path's promise), without an fsync per commit (one per checkpoint)."""
    if engine.dialect.name == "sqlite":
        from sqlalchemy import event

        def _normal(dbapi_conn: Any, _record: object) -> None:
            dbapi_conn.execute("PRAGMA synchronous=NORMAL")

        event.listen(engine, "connect", _normal)
        engine.dispose()  # connections opened before this get the pragma too
    return engine


def secret_box(settings: Settings) -> SecretBox:
    return load_box(settings.secret_keys, settings.secret_key_file)


def intake(settings: Settings, engine: Engine) -> DurableQueue:
    """What a web (or Socket Mode) process submits to: the request stored, its key on the queue."""
    huey = make_huey(settings)
    task = answer_task(huey, lambda key: None)  # registered to enqueue; never run in this process
    return DurableQueue(engine=engine, box=secret_box(settings), enqueue_many=partial(enqueue_many, huey, task),
                        write_lock=sqlite_write_lock(settings.database_url))


def limiter_for(settings: Settings, engine: Engine) -> Limiter:
    """Rate slots where every worker sees them: Redis with a Redis queue, else the database."""
    from bot.slack.ratelimit import RedisLimiter, SqlLimiter

    if backend(settings.queue_url) == "redis":
        from redis import Redis

        return RedisLimiter(Redis.from_url(settings.queue_url), prefix=f"{settings.queue_name}")
    return SqlLimiter(engine)


def bolt_dispatch(app: App) -> object:
    """Run a stored request through the worker's Bolt app (listeners answer inline)."""
    from slack_bolt.request import BoltRequest

    def dispatch(request: ClaimedRequest) -> None:
        body: str | dict[str, object] = json.loads(request.body) if request.mode == SOCKET_MODE else request.body
        response = app.dispatch(BoltRequest(body=body, headers=dict(request.headers), mode=request.mode))
        if response.status >= 400:
            log.warning("request %s: the app answered %d (no listener or refused)", request.key, response.status)

    return dispatch


def failure_notifier(settings: Settings, app: App) -> object:
    """Tell the user a request could not be answered: at its response URL, else ephemerally in the channel."""
    from bot.slack.notices import notice
    from bot.slack.retries import webhook_client

    def notify(request: ClaimedRequest, reason: str) -> None:
        body = parse_body(Job(request.body, request.headers, request.mode))
        text = notice(settings.default_language, "error", request_id=request.key.rsplit(":", 1)[-1])
        url = body.get("response_url")
        if url:
            webhook_client(str(url)).send(text=text, response_type="ephemeral", replace_original=False)
            return
        event = body.get("event")
        if isinstance(event, dict) and event.get("channel") and event.get("user"):
            token = _bot_token(settings, app, request.team_id)
            if token:
                app.client.chat_postEphemeral(token=token, channel=str(event["channel"]), user=str(event["user"]),
                                              text=text)

    return notify


def _bot_token(settings: Settings, app: App, team_id: str) -> str | None:
    if settings.slack_bot_token:
        return settings.slack_bot_token
    store = app.installation_store
    bot = store.find_bot(enterprise_id=None, team_id=team_id) if store is not None else None
    return bot.bot_token if bot is not None else None


def build_worker(settings: Settings, *, config: WorkerConfig | None = None) -> tuple[Huey, AnswerWorker, Keeper]:
    """A worker process's parts: the app on the real pipeline, the worker, its keeper, the queue."""
    from bot.queue.worker import AnswerWorker, Keeper, WorkerConfig
    from bot.slack.app import build_production_app, production_engine
    from knowledge.slack_secrets import check_secrets

    engine = sqlite_normal_sync(production_engine(settings))
    box = secret_box(settings)
    check_secrets(engine, box)
    app = build_production_app(settings, inline=True, engine=engine)
    huey = make_huey(settings)
    worker = AnswerWorker(engine=engine, box=box, limiter=limiter_for(settings, engine),
                          dispatch=bolt_dispatch(app),  # type: ignore[arg-type]  # Dispatch
                          notify_failure=failure_notifier(settings, app),  # type: ignore[arg-type]  # Notify
                          config=config or WorkerConfig())
    task = answer_task(huey, worker.run)
    return huey, worker, Keeper(worker, enqueue=task)


def run_worker(settings: Settings, *, threads: int) -> int:
    """A queue consumer until SIGINT/SIGTERM: `threads` answer at once; heartbeat and recovery alongside."""
    huey, worker, keeper = build_worker(settings)
    for name in ("huey", "huey.consumer"):  # one line per task at INFO is our own log's job
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLogger().level))
    keeper.start()
    log.info("answer worker %s: %d thread(s) on %s queue %r", worker.worker_id, threads,
             backend(settings.queue_url), settings.queue_name)
    try:
        huey.create_consumer(**consumer_options(settings, threads=threads)).run()
    finally:
        keeper.stop()
    return 0


def build_front(settings: Settings) -> Front:
    """A web process of HTTP mode: verify, record, enqueue, 200 (bot.slack.front); OAuth pages beside it."""
    from bot.settings import is_oauth
    from bot.slack.front import Front, not_found
    from knowledge.db import make_engine

    queue = intake(settings, sqlite_normal_sync(make_engine(settings.database_url)))
    fallback: Wsgi = not_found
    if is_oauth(settings):  # Bolt (bot.slack.app) is imported only to serve the OAuth pages
        from bot.slack.app import build_oauth_app
        from bot.slack.wsgi import wsgi_app

        fallback = wsgi_app(build_oauth_app(settings))
    return Front(signing_secret=str(settings.slack_signing_secret), queue=queue, fallback=fallback,
                 busy_language=settings.default_language)


def run_socket(settings: Settings) -> None:
    """Socket Mode: envelopes are stored and queued (answered by `gpu-advisor worker` processes)."""
    from slack_bolt import App

    from bot.slack.app import production_engine, web_client
    from bot.slack.socket import QueueingSocketModeHandler

    engine = production_engine(settings)
    app = App(client=web_client(settings, token=settings.slack_bot_token), token_verification_enabled=False,
              request_verification_enabled=False)
    handler = QueueingSocketModeHandler(app, app_token=settings.slack_app_token)
    handler.queue = intake(settings, engine)
    handler.start()  # type: ignore[no-untyped-call]  # slack_bolt leaves start() unannotated
