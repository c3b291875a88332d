"""The seam between Slack and the answering core: what listeners need from `bot.answer`, and its adapter."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from sqlalchemy import Engine

if TYPE_CHECKING:
    from bot.answer.actions import JsonValue
    from knowledge.snapshot import Snapshot

log = logging.getLogger(__name__)

SNAPSHOT_CHECK_S = 60.0  # how often a process looks for newly imported prices


class Reply(Protocol):
    """A rendered answer (bot.answer.reply.Reply): text fallback, Block Kit blocks, language, card kind."""

    @property
    def text(self) -> str: ...

    @property
    def blocks(self) -> Sequence[Mapping[str, object]]: ...

    @property
    def language(self) -> str: ...

    @property
    def kind(self) -> str: ...


class Core(Protocol):
    """What the listeners call: answer a text (optionally refining a previous request), apply a button."""

    def answer(
        self, text: str, *, lang: str | None, previous: Mapping[str, JsonValue] | None, now: datetime
    ) -> Reply: ...

    def apply_action(self, action_id: str, value: str, *, lang: str, now: datetime) -> Reply: ...

    def state_of(self, reply: Reply, text: str) -> Mapping[str, object] | None:
        """A JSON-able record of the request behind `reply`, kept per thread; None = nothing to refine."""
        ...


class SnapshotHolder:
    """The catalog snapshot of this process: loaded once, swapped when a newer price import lands."""

    def __init__(
        self,
        *,
        load: Callable[[], Snapshot],
        version: Callable[[], object],
        check_every_s: float = SNAPSHOT_CHECK_S,
    ) -> None:
        self._load, self._version, self._check_every_s = load, version, check_every_s
        self._seen_version = version()
        self._snapshot = load()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def current(self) -> Snapshot:
        return self._snapshot

    def refresh_if_changed(self) -> bool:
        """Reload when the price version moved; the old snapshot serves until the new one is ready."""
        version = self._version()
        if version == self._seen_version:
            return False
        self._snapshot, self._seen_version = self._load(), version
        log.info("snapshot reloaded for price version %s", version)
        return True

    def start_watching(self) -> None:
        """Check for new prices in a daemon thread, off the request path."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="snapshot-watch", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        while not self._stop.wait(self._check_every_s):
            try:
                self.refresh_if_changed()
            except Exception:  # a database hiccup must not kill the watcher; the old snapshot serves
                log.exception("snapshot refresh failed")


def snapshot_holder(engine: Engine, *, stale_after_days: int = 14) -> SnapshotHolder:
    """The process's snapshot from the database, watched for new price imports."""
    from knowledge.slack_store import prices_version
    from knowledge.snapshot import load_snapshot

    return SnapshotHolder(load=lambda: load_snapshot(engine, stale_after_days=stale_after_days),
                          version=lambda: prices_version(engine))


class PipelineCore:
    """`Core` on the real pipeline in `bot.answer.pipeline` (imported on first use)."""

    def __init__(self, snapshots: SnapshotHolder) -> None:
        self.snapshots = snapshots

    def answer(
        self, text: str, *, lang: str | None, previous: Mapping[str, JsonValue] | None, now: datetime
    ) -> Reply:
        from bot.answer import pipeline

        return pipeline.answer(
            text, snapshot=self.snapshots.current(), lang=lang, now=now, state=previous
        )

    def apply_action(self, action_id: str, value: str, *, lang: str, now: datetime) -> Reply:
        from bot.answer import pipeline

        return pipeline.apply_action(
            action_id, value, snapshot=self.snapshots.current(), lang=lang, now=now
        )

    def warm_up(self, now: datetime) -> None:
        """Answer one question at start: the first answer pays for imports and template compiling (~1.5 s)."""
        self.answer("fine-tune 7b with lora", lang="en", previous=None, now=now)

    def state_of(self, reply: Reply, text: str) -> Mapping[str, object] | None:
        """The reply's ButtonState (bot.answer.reply.Reply.state), when the reply has one."""
        state = getattr(reply, "state", None)
        return state if isinstance(state, Mapping) else None
