"""The queue keeper's heartbeat outlives a database that goes away for a moment."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from bot.queue.worker import Keeper


class FlakyKeeper(Keeper):
    """The first beat finds the database gone; the second works and ends the loop."""

    beats = 0
    sweeps = 0

    def beat(self) -> None:
        self.beats += 1
        if self.beats == 1:
            raise OperationalError("UPDATE queue_worker", {}, Exception("server closed the connection unexpectedly"))
        self._stop.set()

    def sweep(self) -> int:
        self.sweeps += 1
        return 0


def test_a_database_outage_is_one_warning_line_and_the_beat_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    worker: Any = SimpleNamespace(config=SimpleNamespace(beat_s=0.001, sweep_s=60.0), engine=None, worker_id="w1")
    keeper = FlakyKeeper(worker, enqueue=lambda key: None)
    with caplog.at_level(logging.WARNING, logger="bot.queue.worker"):
        keeper._loop()
    assert keeper.beats == 2  # it tried again after the outage
    (record,) = [r for r in caplog.records if r.name == "bot.queue.worker"]
    assert record.levelno == logging.WARNING and record.exc_info is None
    assert "database unavailable" in record.getMessage() and "server closed the connection" in record.getMessage()
