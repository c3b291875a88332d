"""The HTTP ack path: signed requests stored and queued as received, forged or stale ones refused, handshakes answered."""

from __future__ import annotations

import io
import json
import time

import pytest
from fake_slack import SIGNING_SECRET, signed_headers, slash_command_body

from bot.queue.jobs import Job
from bot.slack.front import Front


class StubQueue:
    def __init__(self, accept: bool = True) -> None:
        self.accept, self.jobs = accept, []

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
    # A well-formed mention (a malformed one is refused with 400 before the queue is asked).
    event = json.dumps({"type": "event_callback", "event_id": "Ev1", "team_id": "T1",
                        "event": {"type": "app_mention", "channel": "C1", "ts": "1700000000.000100",
                                  "user": "U1", "text": "<@UBOT> price 4090"}})
    assert call(front, event, {**signed_headers(event), "Content-Type": "application/json"})[0].startswith("503")


def test_the_server_imports_huey_on_sqlite_without_the_redis_and_postgres_clients(tmp_path) -> None:
    """`serve --http` on the embedded default: huey's SQLite storage works, redis/psycopg stay unloaded (their
    import is most of huey's), and a later `import redis` in that process still works."""
    import subprocess
    import sys

    script = f"""
import sys
from bot.queue.engine import import_huey_for
import_huey_for("sqlite:///{tmp_path}/q.db")
loaded = sorted(m for m in ("redis", "psycopg") if m in sys.modules)
from huey import Huey
from huey.storage import SqliteStorage
huey = Huey("t", storage_class=SqliteStorage, filename="{tmp_path}/q.db", results=False)
huey.storage.enqueue(b"job", 0)
assert huey.storage.dequeue() == b"job"
import redis  # the guard is lifted once huey is in
print(loaded, redis.__name__)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "redis"]


def test_a_redis_or_postgres_queue_imports_huey_as_it_is(tmp_path) -> None:
    import subprocess
    import sys

    script = """
import sys
from bot.queue.engine import import_huey_for
import_huey_for("redis://127.0.0.1:6379/0")
import_huey_for("postgresql://postgres@127.0.0.1/test")
print("huey.storage" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"  # nothing imported early, nothing hidden: huey imports redis when used
