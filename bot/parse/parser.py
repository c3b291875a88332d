"""`parse(text, snapshot=...) -> Ask`: the single entry point; never raises."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bot.parse.ask import Ask

if TYPE_CHECKING:
    from knowledge.snapshot import Snapshot

log = logging.getLogger(__name__)


def parse(text: str, *, snapshot: Snapshot) -> Ask:
    """Parse one message. Extraction lands in the following commits; today: intent help only."""
    return Ask(intent="advise", language="en", text=text if isinstance(text, str) else "")
