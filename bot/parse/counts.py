"""One GPU count for the request: as stated, per machine times machines, summed, a range's top, or one card."""

from __future__ import annotations

from dataclasses import dataclass

from bot.parse.anchors import has_any
from bot.parse.ask import GpuMention
from bot.parse.gpus import GPUS_PER_BOARD, GpuFound

QUESTION_WINDOW = 12  # characters either side of a GPU span in which "how many" makes the count the question


@dataclass(frozen=True, slots=True)
class Count:
    """The count, the range it was chosen from, and what was assumed to get it (None = nothing)."""

    count: int | None
    count_range: tuple[int, int] | None = None
    assumed: str | None = None


def decide_count(found: GpuFound, config_gpus: object, text: str, questions: tuple[str, ...]) -> Count:
    """First rule that applies wins.

    1. "2-4 GPUs": the upper bound, so the answer covers the whole range (said in `assumed`).
    2. Counts written next to the names: their sum when the GPUs are used together ("3090 + 4090"),
       the one count when all named GPUs agree, none when options differ ("2x 3090 vs 1x 4090").
    3. A count in a pasted config (`num_gpus: 8`), then a count without a name ("8 GPUs").
    4. One GPU named with no count, not in the plural and not asked about ("how many H100?"): one card.
    """
    if found.count_range is not None:
        low, high = found.count_range
        return Count(high, found.count_range, f"{low}-{high} GPUs: sized for the upper bound, {high}")
    mentions = found.mentions
    if found.together:
        total = sum(m.count or 1 for m in mentions)
        return Count(total, None, f"{' + '.join(str(m.count or 1) for m in mentions)} GPUs used together = {total}")
    count = _named_count(mentions)
    if count is not None:
        return Count(count, None, _machines(found, count))
    if isinstance(config_gpus, int) and not isinstance(config_gpus, bool):
        return Count(config_gpus)
    if found.loose_count is not None:
        return Count(found.loose_count, None, _machines(found, found.loose_count))
    if len({m.gpu_id or m.query for m in mentions}) == 1 and not found.plural and not _asked(text, found, questions):
        return Count(1, None, "one card (a GPU named without a count)")
    return Count(None)


def _named_count(mentions: tuple[GpuMention, ...]) -> int | None:
    """The named GPUs' count when they agree; none when one option has a count and another not."""
    counts = {m.count for m in mentions if m.count}
    if len({m.gpu_id or m.query for m in mentions}) > 1 and any(m.count is None for m in mentions):
        return None  # "A6000 or 3x 4090": the count belongs to one option only
    return counts.pop() if len(counts) == 1 else None


def _machines(found: GpuFound, count: int) -> str | None:
    nodes = found.nodes
    if nodes is None or (nodes.count == 1 and not found.board):
        return None
    if found.board:
        return f"{nodes.count} machine(s) of {GPUS_PER_BOARD} GPUs (a datacenter board holds {GPUS_PER_BOARD}) = {count}"
    return f"{nodes.count} machines x {count // nodes.count} GPUs = {count}"


def _asked(text: str, found: GpuFound, questions: tuple[str, ...]) -> bool:
    """Whether a "how many" word stands next to a GPU: then the count is what the user asks for."""
    if not has_any(text, questions):
        return False
    # Each phrase's places in the text; one that ends or starts within the window of a GPU span counts, however
    # long it is ("bao nhiêu card 3090": the 14-character phrase ends right before the GPU).
    places = [(at, at + len(q)) for q in questions if q in text for at in _occurrences(text, q)]
    return any(q_end >= start - QUESTION_WINDOW and q_start <= end + QUESTION_WINDOW
               for q_start, q_end in places for start, end in found.spans)


def _occurrences(text: str, phrase: str) -> list[int]:
    found, at = [], text.find(phrase)
    while at >= 0:
        found.append(at)
        at = text.find(phrase, at + 1)
    return found
