"""The app as `serve --http` + `gpu-advisor worker` run it, in one test process: the ack path (Front) on a
loopback server, a huey consumer answering from the queue, the keeper; against the local fake Slack."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from fake_slack import SIGNING_SECRET, AppServer, FakeCore, FakeSlack, Harness
from sqlalchemy import Engine

from bot.queue.engine import answer_task, consumer_options, make_huey
from bot.queue.runtime import bolt_dispatch, failure_notifier, intake, limiter_for, secret_box
from bot.queue.worker import AnswerWorker, Keeper, WorkerConfig
from bot.settings import Settings, load_settings
from bot.slack.app import build_app
from bot.slack.front import Front

FAST = WorkerConfig(beat_s=0.2, dead_after=timedelta(seconds=1), sweep_s=0.2, requeue_after=timedelta(seconds=1))


@dataclass
class QueueHarness(Harness):
    settings: Settings = None  # type: ignore[assignment]
    worker: AnswerWorker = None  # type: ignore[assignment]
    keeper: Keeper = None  # type: ignore[assignment]
    huey: Any = None


def queue_settings(engine: Engine, api_url: str, tmp_path: Path, **extra: str) -> Settings:
    env = {"DATABASE_URL": engine.url.render_as_string(hide_password=False), "SLACK_BOT_TOKEN": "xoxb-1-test",
           "SLACK_SIGNING_SECRET": SIGNING_SECRET, "SLACK_API_URL": api_url,
           "QUEUE_URL": f"sqlite:///{tmp_path / 'queue.db'}", "QUEUE_NAME": f"t{uuid.uuid4().hex[:10]}",
           "SECRET_KEY_FILE": str(tmp_path / "secret.key"), **extra}
    return load_settings(env)


@contextmanager
def queue_mode(engine: Engine, slack: FakeSlack, tmp_path: Path, *, core: Any = None, threads: int = 2,
               config: WorkerConfig = FAST, **extra: str) -> Iterator[QueueHarness]:
    settings = queue_settings(engine, slack.api_url, tmp_path, **extra)
    core = core or FakeCore()
    server = AppServer(Front(signing_secret=SIGNING_SECRET, queue=intake(settings, engine)))
    app = build_app(settings, engine=engine, core=core, inline=True)
    worker = AnswerWorker(engine=engine, box=secret_box(settings), limiter=limiter_for(settings, engine),
                          dispatch=bolt_dispatch(app), notify_failure=failure_notifier(settings, app),  # type: ignore[arg-type]
                          config=config)
    huey = make_huey(settings)
    task = answer_task(huey, worker.run)
    keeper = Keeper(worker, enqueue=task)
    keeper.start()
    consumer = huey.create_consumer(**consumer_options(settings, threads=threads))
    consumer._set_signal_handlers = lambda: None  # the test process keeps its own signal handlers
    consumer.start()
    try:
        yield QueueHarness(slack, core, server, engine, settings=settings, worker=worker, keeper=keeper, huey=huey)
    finally:
        consumer.stop(graceful=True)
        keeper.stop()
        server.stop()
