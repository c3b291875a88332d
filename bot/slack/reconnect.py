"""One more try for a database step whose connection died (PostgreSQL restarted, backend terminated)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from sqlalchemy.exc import DBAPIError, OperationalError

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
