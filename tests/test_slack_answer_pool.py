"""The HTTP ack path and the answer queue: signed requests queued, forged refused, crashes retried then reported."""

from __future__ import annotations

import io
import json
import os
import threading
import time
from pathlib import Path

import pytest
from fake_slack import SIGNING_SECRET, FakeSlack, signed_headers, slash_command_body

from bot.slack.answer_pool import AnswerQueue, Job, start_worker
from bot.slack.front import Front, answer_lost


class RecordingApp:
    """Stands in for the worker's Bolt app: writes each body it dispatches to a file; 'crash' kills the process."""

    def __init__(self, out: str) -> None:
        self.out = out

    def dispatch(self, request) -> object:
        text = request.raw_body
        if "crash" in text:
            os._exit(3)  # a worker dying mid-request (segfault, OOM kill)
        if "slow" in text:
            time.sleep(1.0)
        with open(self.out, "a", encoding="utf-8") as f:
            f.write(text + "\n")
        return type("R", (), {"status": 200})()


def make_queue(tmp_path: Path, lost: list, max_pending: int = 50) -> AnswerQueue:
    from functools import partial

    out = str(tmp_path / "answered.txt")
    return AnswerQueue(
        workers=1, initializer=start_worker, initargs=(partial(RecordingApp, out),),
        on_lost=lambda job, reason: lost.append((job, reason)), max_pending=max_pending,
    )


def answered(tmp_path: Path) -> list[str]:
    path = tmp_path / "answered.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_a_crashing_request_is_retried_once_then_reported_and_others_are_answered(tmp_path: Path) -> None:
    lost: list = []
    queue = make_queue(tmp_path, lost)
    try:
        assert queue.submit(Job("first", {}))
        assert queue.submit(Job("crash me", {}))
        time.sleep(0.2)
        assert queue.submit(Job("after", {}))
        assert queue.close(timeout_s=60)
    finally:
        queue.close(timeout_s=1)
    reported = {job.body: (job.attempt, reason) for job, reason in lost}
    assert reported["crash me"] == (2, "BrokenProcessPool")
    # Every accepted request is answered or reported, exactly once (one sharing a pool with the
    # crashing request on its retry is reported too: collateral, but never silent).
    done = answered(tmp_path)
    assert "first" in done
    assert sorted(done + list(reported)) == ["after", "crash me", "first"]
    assert queue.pending == 0


def test_the_queue_is_bounded(tmp_path: Path) -> None:
    lost: list = []
    queue = make_queue(tmp_path, lost, max_pending=2)
    try:
        assert queue.submit(Job("slow 1", {})) and queue.submit(Job("slow 2", {}))
        assert not queue.submit(Job("one too many", {}))
        assert queue.close(timeout_s=60)
    finally:
        queue.close(timeout_s=1)
    assert sorted(answered(tmp_path)) == ["slow 1", "slow 2"] and not lost
    assert not queue.submit(Job("after close", {}))


class StubQueue:
    def __init__(self, accept: bool = True) -> None:
        self.accept, self.jobs, self.pending = accept, [], 0

    def submit(self, job: Job) -> bool:
        if self.accept:
            self.jobs.append(job)
        return self.accept


def call(front: Front, body: str, headers: dict[str, str]) -> tuple[str, bytes]:
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/slack/events", "CONTENT_LENGTH": str(len(body.encode())),
               "CONTENT_TYPE": headers.get("Content-Type", ""), "wsgi.input": io.BytesIO(body.encode())}
    for name, value in headers.items():
        if name != "Content-Type":
            environ["HTTP_" + name.upper().replace("-", "_")] = value
    status: list[str] = []
    out = b"".join(front(environ, lambda s, h: status.append(s)))
    return status[0], out


def test_signed_command_is_queued_as_received_and_acknowledged_empty() -> None:
    queue = StubQueue()
    front = Front(signing_secret=SIGNING_SECRET, queue=queue)  # type: ignore[arg-type]
    body = slash_command_body("price 4090", response_url="http://x/response/a")
    assert call(front, body, signed_headers(body)) == ("200 OK", b"")
    assert [job.body for job in queue.jobs] == [body]
    assert queue.jobs[0].headers["content-type"] == "application/x-www-form-urlencoded"


@pytest.mark.parametrize("headers", [
    lambda body: signed_headers(body, secret="wrong"),
    lambda body: signed_headers(body, timestamp=int(time.time()) - 600),  # stale: Slack's window is 5 minutes
    lambda body: {"Content-Type": "application/x-www-form-urlencoded"},
])
def test_forged_stale_or_unsigned_requests_get_401_and_nothing_is_queued(headers) -> None:
    queue = StubQueue()
    front = Front(signing_secret=SIGNING_SECRET, queue=queue)  # type: ignore[arg-type]
    body = slash_command_body("price 4090", response_url="http://x/response/a")
    assert call(front, body, headers(body))[0] == "401 Unauthorized"
    assert queue.jobs == []


def test_url_verification_is_answered_here_and_not_queued() -> None:
    queue = StubQueue()
    front = Front(signing_secret=SIGNING_SECRET, queue=queue)  # type: ignore[arg-type]
    body = json.dumps({"type": "url_verification", "challenge": "c-123", "token": "t"})
    status, out = call(front, body, {**signed_headers(body), "Content-Type": "application/json"})
    assert status == "200 OK" and json.loads(out) == {"challenge": "c-123"} and queue.jobs == []


def test_full_queue_says_busy_to_a_command_and_503_to_an_event() -> None:
    front = Front(signing_secret=SIGNING_SECRET, queue=StubQueue(accept=False))  # type: ignore[arg-type]
    body = slash_command_body("price 4090", response_url="http://x/response/a")
    status, out = call(front, body, signed_headers(body))
    reply = json.loads(out)
    assert status == "200 OK" and reply["response_type"] == "ephemeral" and "try again" in reply["text"]
    event = json.dumps({"type": "event_callback", "event_id": "Ev1",
                        "event": {"type": "app_mention", "channel": "C1", "ts": "1.0", "user": "U1", "text": "hi"}})
    assert call(front, event, {**signed_headers(event), "Content-Type": "application/json"})[0].startswith("503")


def test_a_lost_command_is_answered_with_an_error_at_its_response_url() -> None:
    slack = FakeSlack().start()
    try:
        body = slash_command_body("price 4090", response_url=slack.response_url("lost"))
        answer_lost(Job(body, {"content-type": "application/x-www-form-urlencoded"}), "BrokenProcessPool")
        calls = slack.wait_for(lambda calls: any(c.path == "/response/lost" for c in calls), timeout_s=5)
    finally:
        slack.stop()
    posted = next(c for c in calls if c.path == "/response/lost").params
    assert posted["response_type"] == "ephemeral" and "something went wrong" in posted["text"]


def test_closing_waits_for_accepted_requests(tmp_path: Path) -> None:
    queue = make_queue(tmp_path, [])
    assert queue.submit(Job("slow", {}))
    closer = threading.Thread(target=queue.close, kwargs={"timeout_s": 60})
    closer.start()
    closer.join(90)
    assert answered(tmp_path) == ["slow"]
