"""The web side of the queue: record the request (dedupe on Slack's id), put its key on the queue."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from bot.queue.jobs import Job, identify
from knowledge.secret_box import SecretBox
from knowledge.slack_requests import NewRequest, record_request

log = logging.getLogger(__name__)


class DurableQueue:
    """`submit(job)`: True once the request is stored (new or a retry of one already stored)."""

    def __init__(self, *, engine: Engine, box: SecretBox, enqueue: Callable[[str], object]) -> None:
        self.engine, self.box, self._enqueue = engine, box, enqueue

    def submit(self, job: Job) -> bool:
        who = identify(job)
        request = NewRequest(key=who.key, team_id=who.team_id, kind=who.kind, mode=job.mode, body=job.body,
                             headers=job.headers)
        try:
            new = record_request(self.engine, request, box=self.box, now=datetime.now(UTC))
        except SQLAlchemyError as exc:  # the database is down: say "busy" (Slack retries events)
            log.error("could not record request %s: %s", who.key, type(exc).__name__)
            return False
        if not new:
            log.info("request %s already accepted (Slack retry %s): not queued again", who.key,
                     job.headers.get("x-slack-retry-num", "-"))
            return True
        try:
            self._enqueue(who.key)
        except Exception as exc:  # noqa: BLE001  # the queue is down: the record is kept, a worker's sweep queues it
            log.warning("request %s recorded but not queued (%s); the recovery sweep will queue it",
                        who.key, type(exc).__name__)
        return True
