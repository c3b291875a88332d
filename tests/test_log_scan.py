"""The log scan (tests/log_scan.py) itself: it sees the suite's log lines and finds each kind of secret."""

from __future__ import annotations

import logging

import log_scan


def test_the_scan_finds_each_kind_of_secret() -> None:
    lines = [
        "INFO bot.x: token xoxb-1-test refused", "INFO x: app token xapp-1-A0-123", "INFO y: refresh xoxe-1-refresh",
        "WARNING z: signature with 8f742231b10e8888abcd99yyyzzz85a5", "INFO k: fernet:gAAAAABrBzZPs",
        "ERROR q: posting to https://hooks.slack.com/commands/T0/1/abc failed",
        "ERROR q: posting to http://127.0.0.1:5/response/cmd1 failed",
        "INFO b: body token=x&team_id=T0&response_url=http%3A%2F%2Fx", 'INFO e: {"type": "event_callback", "event": {}}',
    ]
    assert len(log_scan.leaks(lines)) == len(lines)
    clean = ["INFO bot.queue.worker: request T0TEAM:cmd:1.2.3: answered (attempt 1)",
             "WARNING bot.slack.retries: 429 from a response URL: Retry-After 2 s", "INFO x: chat.postMessage 429"]
    assert log_scan.leaks(clean) == []


def test_the_scan_sees_the_suites_log_lines() -> None:
    logging.getLogger("bot.probe").debug("log scan probe")
    assert any(line.endswith("log scan probe") for line in log_scan.SCANNER.lines)
    assert logging.getLogger().isEnabledFor(logging.INFO)
