"""Answer work off the request processes: a bounded queue into low-priority worker processes."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import partial
from multiprocessing import get_context
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from slack_bolt import App

log = logging.getLogger(__name__)

ANSWER_NICE = 10  # CFS weight ~1/10 of a web process: acks always win the CPU
MAX_PENDING = 500  # accepted, unanswered requests per web process (~5-10 s of work on 2 cores)
MAX_ATTEMPTS = 2  # a job whose worker died is tried once more, then answered with an error

_worker_app: App | None = None  # the Bolt app of this worker process (set by the initializer)


@dataclass(frozen=True, slots=True)
class Job:
    """One verified Slack request, exactly as received: raw body and the headers Bolt reads."""

    body: str
    headers: Mapping[str, str]
    attempt: int = 1


def start_worker(build: Callable[[], App], log_level: str = "WARNING") -> None:
    """Pool initializer: lower our CPU priority, then build the app (engine, snapshot, warm-up)."""
    global _worker_app
    os.nice(ANSWER_NICE)
    logging.basicConfig(
        level=log_level, format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s", force=True
    )
    _worker_app = build()


def run_job(body: str, headers: Mapping[str, str]) -> int:
    """In a worker: dispatch the request through the full Bolt app; its listeners answer Slack."""
    from slack_bolt.request import BoltRequest

    if _worker_app is None:
        raise RuntimeError("no Bolt app in this process: the pool's initializer (start_worker) did not run")
    response = _worker_app.dispatch(BoltRequest(body=body, headers=dict(headers)))
    return int(response.status)


def ping() -> int:
    """A no-op job: submitted at start so the workers boot while the server starts."""
    return os.getpid()


class AnswerQueue:
    """At most `max_pending` jobs in flight; a crashed worker's jobs are retried once, then `on_lost`."""

    def __init__(
        self,
        *,
        workers: int,
        initializer: Callable[..., None],
        initargs: tuple[object, ...],
        on_lost: Callable[[Job, str], None],
        max_pending: int = MAX_PENDING,
    ) -> None:
        self._workers, self._initializer, self._initargs = workers, initializer, initargs
        self._on_lost, self._max_pending = on_lost, max_pending
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0
        self._closed = False
        self._executor = self._new_executor()

    def _new_executor(self) -> ProcessPoolExecutor:
        # spawn: a fresh interpreter, never a fork of this multi-threaded web process.
        return ProcessPoolExecutor(
            self._workers, mp_context=get_context("spawn"),
            initializer=self._initializer, initargs=self._initargs,
        )

    @property
    def pending(self) -> int:
        return self._pending

    def warm(self) -> None:
        """Boot every worker now (in the background): the first answers must not pay for it."""
        for _ in range(self._workers):
            self._executor.submit(ping)

    def submit(self, job: Job) -> bool:
        """Queue `job`; False when the queue is full or closing (the caller says "busy")."""
        with self._lock:
            if self._closed or self._pending >= self._max_pending:
                return False
            self._pending += 1
            executor = self._executor
        self._send(executor, job)
        return True

    def _send(self, executor: ProcessPoolExecutor, job: Job) -> None:
        try:
            future = executor.submit(run_job, job.body, dict(job.headers))
        except (BrokenProcessPool, RuntimeError) as error:  # broke between lock and submit
            self._finished(executor, job, error)
            return
        future.add_done_callback(partial(self._done, executor, job))

    def _done(self, executor: ProcessPoolExecutor, job: Job, future: Future[int]) -> None:
        self._finished(executor, job, future.exception())

    def _finished(self, executor: ProcessPoolExecutor, job: Job, error: BaseException | None) -> None:
        if isinstance(error, BrokenProcessPool) and job.attempt < MAX_ATTEMPTS:
            log.warning("answer worker died; retrying a request (attempt %d)", job.attempt + 1)
            retry = Job(job.body, job.headers, job.attempt + 1)
            # Not on this (dying) executor's manager thread: a fresh thread submits to the new pool.
            threading.Thread(target=self._send, args=(self._replace(executor), retry), daemon=True).start()
            return
        if error is not None:
            log.error("request lost after %d attempt(s): %r", job.attempt, error)
            try:
                self._on_lost(job, type(error).__name__)
            except Exception:
                log.exception("could not answer a lost request")
        with self._lock:
            self._pending -= 1
            self._idle.notify_all()

    def _replace(self, broken: ProcessPoolExecutor) -> ProcessPoolExecutor:
        """A new pool instead of `broken` (once, however many of its jobs report the break)."""
        with self._lock:
            if self._executor is broken:
                self._executor = self._new_executor()
                broken.shutdown(wait=False, cancel_futures=False)
            return self._executor

    def close(self, timeout_s: float = 10.0) -> bool:
        """Take no more jobs; wait (bounded) for accepted ones to be answered. True if all were."""
        with self._lock:
            self._closed = True
            drained = self._idle.wait_for(lambda: self._pending == 0, timeout=timeout_s)
            executor = self._executor
        executor.shutdown(wait=drained, cancel_futures=not drained)
        if not drained:
            log.error("shutting down with %d request(s) unanswered", self._pending)
        return drained
