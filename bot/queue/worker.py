"""The answer worker: claim a stored request, answer it through the Bolt app, settle it; and the keeper
thread that beats for this worker and re-queues what crashed workers and lost queue entries left.

huey hands a task to one worker and forgets it (no acknowledgement): the request record is the
acknowledgement. A claim names its worker; a worker that stops beating for `dead_after` has its
running requests queued again, and its "delivering" ones closed as sent-or-not (never sent twice).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from bot.slack.guard import Delivery, Reschedule, backoff_s, delivering
from bot.slack.ratelimit import Limiter
from bot.slack.reconnect import once_more
from knowledge.secret_box import SecretBox
from knowledge.slack_requests import (
    DONE,
    FAILED,
    ClaimedRequest,
    beat,
    claim_request,
    finish_request,
    recover,
    reschedule_request,
    retire_worker,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    max_attempts: int = 6  # runs of one request (crashes, 429s, transient errors) before the user is told
    beat_s: float = 2.0
    dead_after: timedelta = timedelta(seconds=10)  # no heartbeat for this long: the worker is gone
    sweep_s: float = 5.0
    requeue_after: timedelta = timedelta(seconds=30)  # a queued row untouched this long lost its queue entry


def new_worker_id() -> str:
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


Dispatch = Callable[[ClaimedRequest], None]
Notify = Callable[[ClaimedRequest, str], None]


class AnswerWorker:
    """`run(key)` answers one request at most once; returns seconds until it must run again, or None."""

    def __init__(
        self, *, engine: Engine, box: SecretBox, limiter: Limiter, dispatch: Dispatch, notify_failure: Notify,
        worker_id: str | None = None, config: WorkerConfig = WorkerConfig(),
    ) -> None:
        self.engine, self.box, self.limiter = engine, box, limiter
        self.dispatch, self.notify_failure = dispatch, notify_failure
        self.worker_id = worker_id or new_worker_id()
        self.config = config

    def run(self, key: str) -> float | None:
        claimed = once_more(claim_request, self.engine, key, worker_id=self.worker_id, box=self.box,
                            now=datetime.now(UTC))
        if claimed is None:  # answered, failed, or held by another worker: a duplicate queue entry
            log.debug("request %s: nothing to do", key)
            return None
        if claimed.attempts > self.config.max_attempts:  # e.g. a request that kills its worker each time
            return self._give_up(claimed, "too many attempts")
        delivery = Delivery(key=key, team_id=claimed.team_id, worker_id=self.worker_id, attempts=claimed.attempts,
                            engine=self.engine, limiter=self.limiter, slot_at=claimed.slot_at,
                            may_retry=claimed.attempts < self.config.max_attempts)
        try:
            with delivering(delivery):
                self.dispatch(claimed)
        except Reschedule as again:
            return self._again(claimed, again)
        except Exception as exc:  # noqa: BLE001  # outside the listeners' own error boundary (Bolt, the database)
            if claimed.attempts < self.config.max_attempts and not delivery.sent:
                log.warning("request %s: attempt %d failed (%s); trying again", key, claimed.attempts,
                            type(exc).__name__)
                return self._again(claimed, Reschedule(backoff_s(claimed.attempts), type(exc).__name__, transient=True))
            log.exception("request %s: attempt %d failed", key, claimed.attempts)
            if not delivery.sent:
                return self._give_up(claimed, type(exc).__name__)
        outcome = "answered" if delivery.sent else "no_reply"
        once_more(finish_request, self.engine, key, worker_id=self.worker_id, state=DONE, outcome=outcome,
                  now=datetime.now(UTC))
        log.info("request %s: %s (attempt %d%s)", key, outcome, claimed.attempts,
                 "; " + ", ".join(delivery.events) if delivery.events else "")
        return None

    def _again(self, claimed: ClaimedRequest, again: Reschedule) -> float | None:
        if claimed.attempts >= self.config.max_attempts:
            return self._give_up(claimed, again.reason)
        now = datetime.now(UTC)
        if not once_more(reschedule_request, self.engine, claimed.key, worker_id=self.worker_id, slot_at=again.slot_at,
                                  not_before=now + timedelta(seconds=again.delay_s), now=now):
            return None  # our claim was taken over meanwhile: the other run owns it
        log.info("request %s: %s; attempt %d re-scheduled in %.1f s", claimed.key, again.reason, claimed.attempts,
                 again.delay_s)
        return again.delay_s

    def _give_up(self, claimed: ClaimedRequest, reason: str) -> float | None:
        """The last attempt failed: tell the user and log it; never run again (None)."""
        log.error("request %s not answered after %d attempt(s): %s; telling the user", claimed.key,
                  claimed.attempts, reason)
        try:
            self.notify_failure(claimed, reason)
        except Exception as exc:  # noqa: BLE001  # Slack itself may be what fails
            log.error("request %s: could not tell the user either (%s)", claimed.key, type(exc).__name__)
        once_more(finish_request, self.engine, claimed.key, worker_id=self.worker_id, state=FAILED,
                  outcome=f"failed:{reason}", now=datetime.now(UTC))
        return None


class Keeper:
    """This worker's heartbeat, and the sweep that re-queues what crashes and lost queue entries left."""

    def __init__(self, worker: AnswerWorker, *, enqueue: Callable[[str], object]) -> None:
        self.worker, self._enqueue = worker, enqueue
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="queue-keeper", daemon=True)

    def start(self) -> None:
        self.beat()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        retire_worker(self.worker.engine, self.worker.worker_id)

    def beat(self) -> None:
        beat(self.worker.engine, worker_id=self.worker.worker_id, host=socket.gethostname(), pid=os.getpid(),
             now=datetime.now(UTC))

    def sweep(self) -> int:
        """Queue again what needs it; the number of requests re-queued."""
        cfg = self.worker.config
        found = recover(self.worker.engine, now=datetime.now(UTC), dead_after=cfg.dead_after,
                        requeue_after=cfg.requeue_after)
        for key in found.uncertain:
            log.warning("request %s: its worker died while sending the answer; not sent again "
                        "(it reached Slack or it did not; sending twice is worse)", key)
        for key in found.requeue:
            self._enqueue(key)
        if found.requeue:
            log.warning("re-queued %d request(s) left by a stopped worker or a lost queue entry", len(found.requeue))
        return len(found.requeue)

    def _loop(self) -> None:
        cfg = self.worker.config
        next_sweep = 0.0
        while not self._stop.wait(cfg.beat_s):
            try:
                self.beat()
                next_sweep -= cfg.beat_s
                if next_sweep <= 0:
                    self.sweep()
                    next_sweep = cfg.sweep_s
            except OperationalError as exc:  # the database went away for a moment: the next beat tries again
                log.warning("queue keeper step failed (database unavailable: %s); trying again in %.1f s",
                            str(exc.orig or exc).splitlines()[0][:200], cfg.beat_s)
            except Exception:  # anything else is a bug, shown with its traceback; the heartbeat still goes on
                log.exception("queue keeper step failed")
