"""The durable answer queue end to end: recorded, queued, answered once; crashes recovered; failures told."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fake_slack import BOT_USER_ID, FakeSlack, eventually, slash_command_body
from queue_harness import queue_mode, queue_settings
from sqlalchemy import select

from bot.queue.intake import DurableQueue
from bot.queue.jobs import SOCKET_MODE, Job, identify
from bot.queue.runtime import secret_box
from bot.queue.worker import AnswerWorker, WorkerConfig
from bot.slack.ratelimit import SqlLimiter
from knowledge.slack_requests import DONE, NewRequest, beat, claim_request, mark_delivering, record_request, request_state
from knowledge.slack_tables import SlackRequest


@pytest.fixture
def slack() -> Any:
    fake = FakeSlack().start()
    yield fake
    fake.stop()


def mention(text: str, ts: str, channel: str = "C0GENERAL") -> dict[str, Any]:
    return {"type": "app_mention", "user": "U0ALICE", "text": f"<@{BOT_USER_ID}> {text}", "ts": ts,
            "channel": channel, "event_ts": ts}


def test_slack_ids_key_the_dedupe_record() -> None:
    event = json.dumps({"team_id": "T1", "event_id": "Ev9", "type": "event_callback", "event": {}})
    command = slash_command_body("h100", response_url="http://x/r", trigger_id="1.2.3")
    click = "payload=" + json.dumps({"type": "block_actions", "team": {"id": "T2"}, "trigger_id": "4.5.6"})
    assert identify(Job(event, {"content-type": "application/json"})).key == "T1:ev:Ev9"
    assert identify(Job(command, {})).key == "T0TEAM:cmd:1.2.3"
    assert identify(Job(click, {})).key == "T2:act:4.5.6"
    socket = json.dumps({"team_id": "T1", "event_id": "Ev9", "type": "event_callback"})
    assert identify(Job(socket, {}, SOCKET_MODE)).key == "T1:ev:Ev9"


def test_a_request_stored_twice_is_queued_once_and_its_body_is_encrypted(engine: Any, tmp_path: Path) -> None:
    settings = queue_settings(engine, "http://127.0.0.1:9/api/", tmp_path)
    queued: list[str] = []
    queue = DurableQueue(engine=engine, box=secret_box(settings), enqueue_many=queued.extend)
    body = json.dumps({"team_id": "T1", "event_id": "EvTwice", "type": "event_callback",
                       "event": {"type": "app_mention", "text": "secret words"}})
    assert queue.submit(Job(body, {"content-type": "application/json"}))
    assert queue.submit(Job(body, {"content-type": "application/json", "x-slack-retry-num": "1"}))
    assert queued == ["T1:ev:EvTwice"]
    with engine.connect() as conn:
        stored = conn.execute(select(SlackRequest.body)).scalar_one()
    assert stored.startswith("fernet:") and "secret words" not in stored


def test_a_command_and_a_retried_event_are_each_answered_once(engine: Any, slack: FakeSlack, tmp_path: Path) -> None:
    with queue_mode(engine, slack, tmp_path) as h:
        assert h.command("price 4090", name="one")[0] == 200
        for retry in (None, 1, 2):
            assert h.event(mention("specs a100", "1700000000.000100"), event_id="EvOnce", retry=retry)[0] == 200
        slack.wait_for(lambda calls: any(c.path == "/response/one" for c in calls)
                       and any(c.method == "chat.postMessage" for c in calls), timeout_s=20)
        calls = slack.quiet(1.0)
    assert len([c for c in calls if c.path == "/response/one"]) == 1
    assert len([c for c in calls if c.method == "chat.postMessage"]) == 1
    assert request_state(engine, "T0TEAM:ev:EvOnce") == (DONE, "answered", 1)


def test_a_request_whose_worker_died_before_sending_is_answered_once_by_another(
    engine: Any, slack: FakeSlack, tmp_path: Path
) -> None:
    """A claim by a worker that stopped beating goes back on the queue; the answer is sent once."""
    settings = queue_settings(engine, slack.api_url, tmp_path)
    box = secret_box(settings)
    body = slash_command_body("price h100", response_url=slack.response_url("orphan"), trigger_id="7.7.7")
    now = datetime.now(UTC) - timedelta(seconds=30)
    record_request(engine, NewRequest("T0TEAM:cmd:7.7.7", "T0TEAM", "command", "http", body, {}), box=box, now=now)
    beat(engine, worker_id="dead-worker", host="gone", pid=1, now=now)
    assert claim_request(engine, "T0TEAM:cmd:7.7.7", worker_id="dead-worker", box=box, now=now) is not None
    with queue_mode(engine, slack, tmp_path):  # its keeper sweeps: the dead worker's claim is queued again
        slack.wait_for(lambda calls: any(c.path == "/response/orphan" for c in calls), timeout_s=20)
        calls = slack.quiet(1.5)
    assert len([c for c in calls if c.path == "/response/orphan"]) == 1
    assert request_state(engine, "T0TEAM:cmd:7.7.7") == (DONE, "answered", 2)


def test_a_request_whose_worker_died_while_sending_is_never_sent_again(
    engine: Any, slack: FakeSlack, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = queue_settings(engine, slack.api_url, tmp_path)
    box = secret_box(settings)
    body = slash_command_body("price h100", response_url=slack.response_url("maybe"), trigger_id="8.8.8")
    now = datetime.now(UTC) - timedelta(seconds=30)
    record_request(engine, NewRequest("T0TEAM:cmd:8.8.8", "T0TEAM", "command", "http", body, {}), box=box, now=now)
    beat(engine, worker_id="dead-worker", host="gone", pid=1, now=now)
    claim_request(engine, "T0TEAM:cmd:8.8.8", worker_id="dead-worker", box=box, now=now)
    assert mark_delivering(engine, "T0TEAM:cmd:8.8.8", worker_id="dead-worker", now=now)
    with caplog.at_level(logging.WARNING), queue_mode(engine, slack, tmp_path):
        eventually(lambda: request_state(engine, "T0TEAM:cmd:8.8.8") == (DONE, "uncertain", 1), timeout_s=20)
        calls = slack.quiet(1.0)
    assert not [c for c in calls if c.path == "/response/maybe"]
    assert any("T0TEAM:cmd:8.8.8" in r.getMessage() and "not sent again" in r.getMessage() for r in caplog.records)


@pytest.mark.expect_traceback  # the broken dispatch's last failure is logged with its traceback, on purpose
def test_a_request_that_keeps_failing_ends_with_a_message_to_the_user_and_a_log_line(
    engine: Any, slack: FakeSlack, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Failures outside the listeners' own error boundary (the app itself breaks) are retried with
    backoff, then the user is told at the response URL and the error is logged with the request's key."""
    settings = queue_settings(engine, slack.api_url, tmp_path)
    box = secret_box(settings)
    body = slash_command_body("price h100", response_url=slack.response_url("doomed"), trigger_id="9.9.9")
    record_request(engine, NewRequest("T0TEAM:cmd:9.9.9", "T0TEAM", "command", "http", body, {}), box=box,
                   now=datetime.now(UTC))
    from bot.queue.runtime import failure_notifier
    from bot.slack.app import build_app
    from fake_slack import FakeCore

    app = build_app(settings, engine=engine, core=FakeCore(), inline=True)

    def broken(request: Any) -> None:
        raise RuntimeError("the database schema is gone")

    worker = AnswerWorker(engine=engine, box=box, limiter=SqlLimiter(engine), dispatch=broken,
                          notify_failure=failure_notifier(settings, app), config=WorkerConfig(max_attempts=2))  # type: ignore[arg-type]
    with caplog.at_level(logging.INFO):
        assert worker.run("T0TEAM:cmd:9.9.9") == 1.0  # first attempt: again in 1 s (backoff)
        assert worker.run("T0TEAM:cmd:9.9.9") is None  # not due yet: nothing happens
        with engine.begin() as conn:  # time passes
            conn.execute(SlackRequest.__table__.update().values(not_before=None))  # type: ignore[attr-defined]
        assert worker.run("T0TEAM:cmd:9.9.9") is None  # second and last attempt: the user is told
    told = slack.wait_for(lambda calls: any(c.path == "/response/doomed" for c in calls), timeout_s=10)
    notice = next(c for c in told if c.path == "/response/doomed").params
    assert notice["response_type"] == "ephemeral" and "9.9.9" in notice["text"]
    assert request_state(engine, "T0TEAM:cmd:9.9.9") == ("failed", "failed:RuntimeError", 2)
    assert any(r.levelno == logging.ERROR and "T0TEAM:cmd:9.9.9" in r.getMessage() and "not answered" in r.getMessage()
               for r in caplog.records)


def test_a_batch_over_one_statement_stores_every_new_request_once(engine: Any, tmp_path: Path) -> None:
    """record_requests writes through the driver in statements of ROWS_PER_STATEMENT rows: a batch of
    more rows than that, with repeats inside it and keys already stored, returns exactly the new keys,
    and every stored row reads back through SQLAlchemy as written (times, headers, encrypted body)."""
    from knowledge.slack_requests import QUEUED, ROWS_PER_STATEMENT, record_requests

    box = secret_box(queue_settings(engine, "http://127.0.0.1:9/api/", tmp_path))
    now = datetime(2026, 11, 26, 3, 4, 5, 678901, tzinfo=UTC)

    def request(n: int) -> NewRequest:
        return NewRequest(key=f"T1:cmd:{n}", team_id="T1", kind="command", mode="http", body=f"text=q{n}",
                          headers={"content-type": "application/x-www-form-urlencoded"})

    assert record_requests(engine, [request(n) for n in range(5)], box=box, now=now) == {f"T1:cmd:{n}" for n in range(5)}
    batch = [request(n) for n in range(ROWS_PER_STATEMENT * 2 + 7)] + [request(3), request(200)]
    new = record_requests(engine, batch, box=box, now=now)
    assert new == {f"T1:cmd:{n}" for n in range(5, ROWS_PER_STATEMENT * 2 + 7)} | {"T1:cmd:200"}
    with engine.connect() as conn:
        rows = conn.execute(select(SlackRequest)).all()
    assert len(rows) == ROWS_PER_STATEMENT * 2 + 7 + 1
    row = next(r for r in rows if r.key == "T1:cmd:200")
    assert (row.state, row.attempts, row.kind, row.mode) == (QUEUED, 0, "command", "http")
    assert row.created_at.replace(tzinfo=UTC) == now and row.updated_at.replace(tzinfo=UTC) == now
    assert json.loads(row.headers_json) == {"content-type": "application/x-www-form-urlencoded"}
    assert box.decrypt(row.body) == "text=q200"


def test_a_failed_request_write_is_a_database_error_and_stores_nothing(engine: Any, tmp_path: Path) -> None:
    """A driver error in the second statement of a batch (a row the database refuses: kind is NOT NULL) rolls
    the first statement back too, and reaches the ack path as SQLAlchemy's DBAPIError (answered "busy")."""
    from sqlalchemy.exc import DBAPIError

    from knowledge.slack_requests import ROWS_PER_STATEMENT, record_requests

    box = secret_box(queue_settings(engine, "http://127.0.0.1:9/api/", tmp_path))
    batch = [NewRequest(key=f"T1:cmd:{n}", team_id="T1", kind="command", mode="http", body="x", headers={})
             for n in range(ROWS_PER_STATEMENT + 3)]
    batch.append(NewRequest(key="T1:cmd:bad", team_id="T1", kind=None, mode="http", body="y",  # type: ignore[arg-type]
                            headers={}))
    with pytest.raises(DBAPIError):
        record_requests(engine, batch, box=box, now=datetime.now(UTC))
    with engine.connect() as conn:
        assert conn.execute(select(SlackRequest.key)).all() == []
    assert record_requests(engine, batch[:2], box=box, now=datetime.now(UTC)) == {"T1:cmd:0", "T1:cmd:1"}


def test_web_processes_on_one_sqlite_file_take_turns_through_a_file_lock(tmp_path: Path) -> None:
    """sqlite_write_lock: a lock file beside the database; a second holder (another open of the file, as
    another process has) waits until the first releases it; a server database gets none."""
    import fcntl
    import os
    import threading

    from bot.queue.intake import HostLock, sqlite_write_lock

    assert sqlite_write_lock("postgresql+psycopg://u@h/db") is None
    assert sqlite_write_lock("sqlite:///:memory:") is None
    lock = sqlite_write_lock(f"sqlite:///{tmp_path / 'gpu.db'}")
    assert lock is not None and lock.path == tmp_path / "gpu.db.write-lock"
    assert (lock.path.stat().st_mode & 0o777) == 0o600
    other = HostLock(lock.path)
    order: list[str] = []
    with lock:
        waiter = threading.Thread(target=lambda: (other.__enter__(), order.append("other"), other.__exit__()))
        waiter.start()
        waiter.join(0.3)
        assert waiter.is_alive() and order == []  # blocked while the first holder writes
        fd = os.open(lock.path, os.O_RDWR)
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(fd)
        order.append("first")
    waiter.join(5)
    assert order == ["first", "other"]
    lock.close()
    other.close()
