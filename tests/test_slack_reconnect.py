"""Dead database connections: a DB step is tried once more; the error reply still finds a language."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_slack import FakeCore
from sqlalchemy.exc import IntegrityError, OperationalError

from bot.slack.listeners.errors import error_language
from bot.slack.reconnect import once_more
from bot.slack.services import Services
from knowledge.db import make_engine
from knowledge.slack_store import save_user_pref


def flaky(errors: list[Exception]) -> Any:
    calls: list[int] = []

    def step(value: int) -> int:
        calls.append(value)
        if errors:
            raise errors.pop(0)
        return value * 2

    return step, calls


def test_a_lost_connection_is_tried_once_more() -> None:
    step, calls = flaky([OperationalError("SELECT 1", {}, Exception("terminating connection"))])
    assert once_more(step, 21) == 42 and calls == [21, 21]


def test_twice_lost_is_raised_not_looped() -> None:
    lost = OperationalError("SELECT 1", {}, Exception("server closed the connection"))
    step, calls = flaky([lost, lost])
    with pytest.raises(OperationalError):
        once_more(step, 1)
    assert len(calls) == 2


def test_other_database_errors_are_not_retried() -> None:
    step, calls = flaky([IntegrityError("INSERT", {}, Exception("duplicate key"))])
    with pytest.raises(IntegrityError):
        once_more(step, 1)
    assert calls == [1]


def _unreachable_url(engine: Any, tmp_path: Path) -> str:
    if engine.url.get_backend_name() == "sqlite":
        return f"sqlite:///{tmp_path / 'no-schema.db'}"  # no tables: every read fails
    return engine.url.set(database=f"{engine.url.database}_gone").render_as_string(hide_password=False)


def test_error_reply_language_falls_back_to_the_default_when_the_database_fails(engine: Any, tmp_path: Path) -> None:
    save_user_pref(engine, team_id="T0TEAM", user_id="U0JUN", language_override="ja")
    working = Services(engine=engine, core=FakeCore(), default_language="de")  # type: ignore[arg-type]
    assert error_language(working, team_id="T0TEAM", user_id="U0JUN") == "ja"
    broken = make_engine(_unreachable_url(engine, tmp_path))
    try:
        dead = Services(engine=broken, core=FakeCore(), default_language="de")  # type: ignore[arg-type]
        assert error_language(dead, team_id="T0TEAM", user_id="U0JUN") == "de"
    finally:
        broken.dispose()
