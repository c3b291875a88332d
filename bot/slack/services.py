"""What every listener is given (bound with functools.partial at registration): stores, core, clock."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from slack_sdk.oauth.installation_store import InstallationStore
from sqlalchemy import Engine

from bot.slack.core import Core

if TYPE_CHECKING:
    from knowledge.snapshot import Snapshot


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Services:
    engine: Engine
    core: Core
    default_language: str = "en"
    clock: Callable[[], datetime] = utc_now
    installation_store: InstallationStore | None = None  # OAuth mode only
    current_snapshot: Callable[[], Snapshot | None] = lambda: None  # for the digest commands
    # True in an answer worker process (HTTP mode): the request was acknowledged by the web
    # process already, so listeners run inline instead of ack + lazy thread.
    run_inline: bool = False
