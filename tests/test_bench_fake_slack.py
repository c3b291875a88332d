"""The bench's fake Slack stays quiet about connections a fault run kills, and loud about anything else."""

from __future__ import annotations

import sys

import pytest

from bot.bench.fake_slack import FakeSlack


def _handle(server: object, error: BaseException) -> None:
    try:
        raise error
    except BaseException:
        server.handle_error(None, ("127.0.0.1", 1))  # type: ignore[attr-defined]


def test_a_reset_connection_prints_nothing_and_other_errors_print(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeSlack() as slack:
        _handle(slack.server, ConnectionResetError(104, "Connection reset by peer"))
        assert capsys.readouterr().err == ""
        _handle(slack.server, ValueError("a real bug"))
        assert "ValueError: a real bug" in capsys.readouterr().err
    assert sys.exc_info() == (None, None, None)
