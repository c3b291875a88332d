"""Pytest plugin: every log line the suite's code writes is kept and scanned at the end for secrets.

No token (xoxb-, xoxp-, xoxe-, xapp-), signing secret, secret key, response URL (a credential: whoever
has it can post as the app) or raw request body may ever be in a log line. Records are taken at INFO
from every logger (production's level) and at DEBUG from ours; a find fails the run with the lines.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

import pytest

# The secrets the suite's fakes use, plus every shape a real one has.
SIGNING_SECRETS = ("8f742231b10e8888abcd99yyyzzz85a5", "bench-signing-secret-not-a-real-one")
PATTERNS = {
    "slack token": re.compile(r"\bxox[abpre]-[A-Za-z0-9-]{3,}|\bxapp-[0-9]-[A-Za-z0-9-]+"),
    "signing secret": re.compile("|".join(map(re.escape, SIGNING_SECRETS))),
    "fernet key or token": re.compile(r"\bgAAAAA[A-Za-z0-9_-]{40,}|fernet:"),
    "response URL": re.compile(r"hooks\.slack\.com/(?:commands|actions|services)/|/response/[A-Za-z0-9_.-]+"),
    "request body": re.compile(r"response_url=|trigger_id=|\"event_callback\"|\"response_url\"\s*:|payload=%7B"),
}


def leaks(lines: Iterable[str]) -> list[tuple[str, str]]:
    """(what, line) for each line that holds a secret."""
    return [(what, line) for line in lines for what, pattern in PATTERNS.items() if pattern.search(line)]


class Scanner(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.INFO and not record.name.startswith(("bot", "knowledge", "rules")):
            return
        try:
            self.lines.append(self.format(record))
        except Exception:  # noqa: BLE001  # a record that cannot be formatted is the test's own problem
            self.lines.append(f"{record.levelname} {record.name}: {record.msg!r}")


SCANNER = Scanner()


def pytest_configure(config: pytest.Config) -> None:
    root = logging.getLogger()
    root.addHandler(SCANNER)
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    for ours in ("bot", "knowledge"):
        logging.getLogger(ours).setLevel(logging.DEBUG)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    found = leaks(SCANNER.lines)
    if not found:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_sep("=", f"log scan: {len(found)} log line(s) hold secrets")
        for what, line in found[:50]:
            reporter.write_line(f"{what}: {line[:300]}")
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
