"""The web side of the queue: record the request (dedupe on Slack's id), put its key on the queue.

Group commit: request threads that arrive while a batch is being written wait for the next one,
which one of them writes for all (one transaction, one queue round trip). Each thread still gets
its 200 only after its own request is stored.

Several web processes on one SQLite file take turns through a file lock (`HostLock`) around each batch:
a process that finds another writing then sleeps in the kernel until the lock is released, instead
of in SQLite's busy handler, which backs off in steps of 1, 2, 5, 10 ... ms (sqliteDefaultBusyCallback
in SQLite's main.c) and so made the slowest acks wait 10-35 ms for a write of 1-2 ms.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from bot.queue.jobs import Job, identify
from knowledge.secret_box import SecretBox
from knowledge.slack_requests import NewRequest, record_requests

log = logging.getLogger(__name__)

MAX_BATCH = 200
WAIT_LIMIT_S = 10.0  # a batch stuck longer than this (database gone): the request is refused, Slack retries


@dataclass
class _Pending:
    request: NewRequest
    retry: str
    wake: threading.Event = field(default_factory=threading.Event)  # set once: stored, or asked to lead
    lead: bool = False
    finished: bool = False
    stored: bool = False


class DurableQueue:
    """`submit(job)`: True once the request is stored (new or a retry of one already stored)."""

    def __init__(self, *, engine: Engine, box: SecretBox, enqueue_many: Callable[[list[str]], object],
                 write_lock: AbstractContextManager[object] | None = None) -> None:
        self.engine, self.box, self._enqueue_many = engine, box, enqueue_many
        self._write_lock = write_lock if write_lock is not None else nullcontext()
        self._lock = threading.Lock()
        self._waiting: list[_Pending] = []
        self._writing = False

    def submit(self, job: Job) -> bool:
        who = identify(job)
        pending = _Pending(NewRequest(key=who.key, team_id=who.team_id, kind=who.kind, mode=job.mode, body=job.body,
                                      headers=job.headers), job.headers.get("x-slack-retry-num", "-"))
        with self._lock:
            self._waiting.append(pending)
            if not self._writing:
                self._writing = pending.lead = True
        if not pending.lead and not pending.wake.wait(WAIT_LIMIT_S):
            log.error("request %s not stored within %.0f s: refused", who.key, WAIT_LIMIT_S)
            return False
        if not pending.finished:  # woken to lead: this request heads the next batch
            self._write_next()
        return pending.stored

    def _write_next(self) -> None:
        """Write the waiting requests in one batch, then hand the lead to one that came meanwhile."""
        with self._lock:
            batch, self._waiting = self._waiting[:MAX_BATCH], self._waiting[MAX_BATCH:]
        with self._write_lock:
            self._write(batch)
        with self._lock:
            if self._waiting:
                self._waiting[0].lead = True
                self._waiting[0].wake.set()
            else:
                self._writing = False

    def _write(self, batch: list[_Pending]) -> None:
        try:
            new = record_requests(self.engine, [p.request for p in batch], box=self.box, now=datetime.now(UTC))
        except SQLAlchemyError as exc:  # the database is down: say "busy" (Slack retries events)
            log.error("could not record %d request(s): %s", len(batch), type(exc).__name__)
            new, stored = set(), False
        else:
            stored = True
        for p in batch:
            if stored and p.request.key not in new:
                log.info("request %s already accepted (Slack retry %s): not queued again", p.request.key, p.retry)
        keys = [p.request.key for p in batch if p.request.key in new]
        if keys:
            try:
                self._enqueue_many(keys)
            except Exception as exc:  # noqa: BLE001  # the queue is down: records kept, a worker's sweep queues them
                log.warning("%d request(s) recorded but not queued (%s); the recovery sweep will queue them",
                            len(keys), type(exc).__name__)
        for p in batch:
            p.stored, p.finished = stored, True
            p.wake.set()


class HostLock:
    """An exclusive lock shared by the processes of one host: flock(2) on a file (created owner-only).

    A waiter blocks in the kernel and wakes as soon as the holder unlocks (or dies: the kernel drops
    the lock with the process). One holder per process at a time: DurableQueue writes one batch at once.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)

    def __enter__(self) -> HostLock:
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self._fd)


def sqlite_write_lock(database_url: str) -> HostLock | None:
    """For a SQLite file: a HostLock beside it (`<file>.write-lock`); None for a server database."""
    prefix = "sqlite:///"
    if not database_url.startswith(prefix) or database_url[len(prefix):] in ("", ":memory:"):
        return None
    database = Path(database_url[len(prefix):].split("?", 1)[0]).expanduser()
    return HostLock(database.with_name(database.name + ".write-lock"))
