"""One more try for a database step whose connection died (PostgreSQL restarted, backend terminated)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from slack_sdk.oauth.installation_store import Bot, Installation
from sqlalchemy.exc import DBAPIError, OperationalError

from knowledge.slack_store import DbInstallationStore

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")


def is_disconnect(error: BaseException) -> bool:
    """The connection (not the statement) failed: its transaction was rolled back, so the step can run again."""
    return isinstance(error, OperationalError) or (isinstance(error, DBAPIError) and error.connection_invalidated)


def once_more(step: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run `step`; on a dead connection run it once more (the pool pre-pings a fresh one), else raise."""
    try:
        return step(*args, **kwargs)
    except DBAPIError as error:
        if not is_disconnect(error):
            raise
        log.warning("database connection lost in %s (%s); trying once more",
                    getattr(step, "__name__", step), str(error.orig).splitlines()[0] if error.orig else error)
        return step(*args, **kwargs)


class ReconnectingInstallationStore(DbInstallationStore):
    """Installations in our database, each call tried once more on a dead connection.

    Bolt reads the bot token here before every request of a workspace (OAuth mode): a connection
    cut by a PostgreSQL restart must not turn into an unanswered request.
    """

    def save(self, installation: Installation) -> None:
        once_more(super().save, installation)

    def save_bot(self, bot: Bot) -> None:
        once_more(super().save_bot, bot)

    def find_bot(
        self, *, enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None = False
    ) -> Bot | None:
        return once_more(super().find_bot, enterprise_id=enterprise_id, team_id=team_id,
                         is_enterprise_install=is_enterprise_install)

    def find_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        return once_more(super().find_installation, enterprise_id=enterprise_id, team_id=team_id, user_id=user_id,
                         is_enterprise_install=is_enterprise_install)
