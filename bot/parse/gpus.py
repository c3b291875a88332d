"""GPU mentions: find spans that look like accelerator names, let the catalog name them, read counts."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from bot.parse.anchors import anchors, has_any, has_digit
from bot.parse.ask import GpuMention
from bot.parse.gpu_classes import find_gpu_classes
from bot.parse.lookup import resolve_gpu
from bot.parse.nodes import Nodes, find_nodes
from bot.parse.notes import Note
from bot.parse.numbers import count_value
from bot.parse.vocabulary import Vocabulary, phrase_regex

if TYPE_CHECKING:
    from knowledge.snapshot import Snapshot

MAX_GPU_SPANS = 6  # more names than this in one message is a pasted table, not a question
MAX_COUNT = 1024
GPUS_PER_BOARD = 8  # HGX/DGX boards (H100, H200, A100, B200, MI300X platforms) hold 8 GPUs
# A memory figure right after or before a GPU name: "4090 48G", "A100 (80GB)", "4070 with 8GB", "the 40GB A100".
_MEMORY_AFTER = re.compile(r"\s?(?:\(|with\s|mit\s|con\s|avec\s|với\s|de\s)?(\d{1,3})\s?(?:gib|gb|go|g)(?![a-z0-9])")
_MEMORY_BEFORE = re.compile(r"(?<![\d.])(\d{1,3})\s?(?:gib|gb|go|g)\s?(?:的|の)?\s?$")
_PLUS = re.compile(r"^\s?(?:\+|&|加上?)\s?$")
_VENDOR = r"(?:(?:nvidia|geforce|tesla|amd|radeon|instinct|intel|habana|quadro)\s?)*"
# "80gb", "(40g)", "80 go" (French), "de 80gb" / "mit 80gb" (the connector is dropped before lookup).
_MEMORY = r"(?:[\s-]?(?:sxm\d?|pcie|nvl|(?:(?:de|with|mit|con|avec|với)\s)?\(?\d{2,3}\s?g(?:b|ib|o)?\)?))"
_MAC_WORD = r"apple|mac\s?(?:studio|mini|book(?:\s?(?:air|pro))?)|imac|맥북(?:\s?(?:에어|프로))?|맥\s?미니"
_NOT_A_TIER = r"(?!\s?(?:pro|max|ultra)(?![a-z]))"
_BASE_CHIP = re.compile(rf"(?:(?:{_MAC_WORD})\s?)?(m[1-5])(?:\s?(?:{_MAC_WORD}))?")
_CONNECTOR = re.compile(r"\s(?:de|with|mit|con|avec|với)(?=\s\(?\d)")
_NAMES = (
    r"rtx\s?pro\s?\d{4}(?:\s?blackwell)?",
    r"rtx\s?a?\d{4}(?:\s?(?:ada(?:\s?generation)?|ti\s?super|ti|super))?(?:\s?(?:laptop(?:\s?gpu)?|mobile|max-q))?",
    r"(?:laptop\s)?(?:gtx\s?)?[1-5]0[5-9]0(?:\s?(?:ti\s?super|ti|super|d))?(?:\s?(?:laptop(?:\s?gpu)?|mobile|max-q))?",
    r"(?:gtx\s?)?16[56]0(?:\s?(?:ti|super))?",
    r"a[2-6][05]00",
    rf"(?:(?:gh|gb)[23]00|b[123]00a?|h[128]00|h20|a[18]00|a10g?|a30|a40|a16|l40s?|l4|l20|t4|p100|p40|k80|m60|v100){_MEMORY}{{0,2}}",
    r"mi\d{3}x?|rx\s?\d{4}\s?(?:xtx|xt)?|7900\s?xtx?|w7900|gaudi\s?[123]?|tpu\s?v\d[a-z]?",
    # Apple silicon by chip ("M3 Max"; the memory written beside it picks the configuration), Jetson and
    # DGX Spark, AWS's own chips.
    r"(?:mac\s?(?:studio|mini|book\s?pro)\s?)?m[1-5]\s?(?:pro|max|ultra)",
    # the base chips (MacBook Air, Mac mini, iMac) only beside a Mac word or a memory figure: "M2" alone is as
    # often an M.2 drive ("apple m2", "macbook air m1", "m4 mac mini", "맥북 m2", "m2 16gb")
    rf"(?:{_MAC_WORD})\s?m[1-5]{_NOT_A_TIER}(?:\s?(?:{_MAC_WORD}))?|m[1-5]{_NOT_A_TIER}\s?(?:{_MAC_WORD})"
    r"|m[1-5](?=\s?\(?\d{1,3}\s?(?:gb|g|gib)(?![a-z0-9]))",
    r"dgx\s?spark|jetson\s?(?:agx\s?)?orin(?:\s?nx)?|trainium\s?2?|trn[12]|inferentia\s?2?",
)
_INSTANCE = r"[a-z]\d[a-z]{0,3}\.\d{0,2}x?large|a\d-(?:high|mega|ultra)gpu-\d+g|gpu_\d+x_[a-z0-9_]+|standard_nd[a-z0-9_]+"
# Words that stand for "GPUs" when a count has no GPU name after it ("8 GPUs", "4장", "8卡").
_LOOSE_UNITS = frozenset({"个", "個", "개", "台", "con", "cái", "chiếc"})
# A minus sign that is not a range's dash ("2-4"): the count after it is negative ("-5 GPUs").
_NOT_NEGATIVE = r"(?<!(?<![0-9a-z])[-−])"
# Every GPU name and instance type has a digit except these ("gaudi", "standard_nd...").
_NAMES_WITHOUT_DIGITS = ("gaudi", "standard_nd", "dgx spark", "dgxspark", "jetson", "trainium", "inferentia")


@dataclass(frozen=True, slots=True)
class GpuFound:
    """GPU mentions in order, a count stated without a GPU name, and how the counts combine."""

    mentions: tuple[GpuMention, ...]
    loose_count: int | None
    spans: tuple[tuple[int, int], ...]
    nodes: Nodes | None = None  # machines: counts were multiplied by them, or "a node of H100s"
    board: bool = False  # the count is 8 per machine, said nowhere: "a node of H100s"
    count_range: tuple[int, int] | None = None  # "2-4 GPUs"
    together: bool = False  # "3090 + 4090": the named GPUs are used together, their counts add up
    plural: bool = False  # "H100s", "24G cards": several, the count unsaid
    notes: tuple[Note, ...] = ()  # counts written but not usable: "-5 GPUs", "0 GPUs", "999999 H100"


def _glued(units: tuple[str, ...]) -> str:
    """Unit words that may follow a digit with no space ("8GPU", "4枚"); Latin ones end at a non-letter."""
    return "(?:" + "|".join(re.escape(u) + ("(?![a-z])" if u[-1].isascii() else "") for u in units) + ")"


@functools.lru_cache(maxsize=1)
def _patterns(vocab_id: int, counts: tuple[str, ...], units: tuple[str, ...]) -> dict[str, re.Pattern[str]]:
    number = rf"(?:\d{{1,4}}|{phrase_regex(list(counts))}|[一二两兩三四五六七八九十]{{1,3}})"
    unit = _glued(units)
    strict = _glued(tuple(u for u in units if u not in _LOOSE_UNITS))
    name = "|".join(_NAMES)
    return {
        "gpu": re.compile(
            rf"(?:(?<=\dx)|(?<![a-z0-9]))(?:{_INSTANCE}|{_VENDOR}(?:{name}))s?(?![a-z0-9](?<!x)|x[a-z])"
        ),
        "before": re.compile(rf"(?<![a-z0-9.]){_NOT_NEGATIVE}(?<!\d,)({number})\s?(?:x|\*|{unit})?\s?(?:of\s|de\s|の)?$"),
        "after": re.compile(
            rf"^\s?(?:\(?\d{{1,3}}\s?(?:gb|gib|go|g)\)?\s?)?(?:を|が|は|을|를|이|가|로|으로)?\s?"
            rf"(?:(?:x|\*)\s?(\d{{1,4}})(?![0-9])|({number})\s?(?:{unit}))"
        ),
        "loose": re.compile(
            rf"(?<![a-z0-9.]){_NOT_NEGATIVE}({number})\s?(?:x\s?)?(?:{strict})"
            rf"|(?:gpu|显卡|顯卡|그래픽카드|グラボ)\s?(?:를|가|は|を)?\s?({number})\s?(?:{unit})"
        ),
        # Count sanity: any digits before a GPU name or a GPU word, with their sign ("-5", "0", "999999").
        "any_before": re.compile(rf"(?<![a-z0-9.,])([-−]?)\s?(\d[\d,]*)\s?(?:x|\*|{unit})?\s?(?:of\s|de\s|の)?$"),
        "any_loose": re.compile(rf"(?<![a-z0-9.,])([-−]?)\s?(\d[\d,]*)\s?(?:x\s?)?(?:{strict})"),
        "any_after": re.compile(rf"\s?(?:(?:x|\*)\s?([-−]?)\s?(\d[\d,]*)(?![\d.])|([-−]?)(\d[\d,]*)\s?(?:{unit}))"),
        "range": re.compile(
            rf"(?<![\d.])(?<!\d,)(\d{{1,3}})\s?(?:-|–|~|〜|to|bis|a|à|đến|到|至)\s?(\d{{1,3}})\s?(?:x\s?)?(?={unit}|{_VENDOR}(?:{name}))"
        ),
    }


@functools.lru_cache(maxsize=1)
def _unit_anchors(units: tuple[str, ...]) -> tuple[str, ...]:
    return anchors(units)


def find_gpus(text: str, snapshot: Snapshot, vocabulary: Vocabulary) -> GpuFound:
    """GPU mentions resolved by the catalog, with counts read from words around each name."""
    patterns = _patterns(id(vocabulary), tuple(vocabulary.count_words), vocabulary.gpu_units)
    mentions: list[GpuMention] = []
    spans: list[tuple[int, int]] = []
    names: list[tuple[int, int]] = []  # where each GPU name is (its count not included)
    several = False  # "4090s", "H100s": several cards of that kind, the count unsaid
    maybe = has_digit(text) or has_any(text, _NAMES_WITHOUT_DIGITS)
    for m in patterns["gpu"].finditer(text) if maybe else ():
        if len(mentions) >= MAX_GPU_SPANS:
            break
        query = _CONNECTOR.sub("", m.group(0).strip()).replace(" go", "gb")
        if chip := _BASE_CHIP.fullmatch(query):
            query = f"apple {chip.group(1)}"  # the chip, whatever Mac it is in ("m4 mac mini" -> "apple m4")
        match = resolve_gpu(snapshot.gpu_index, query)
        plural = False
        if match.status != "found" and query.endswith("s"):  # "a100s", "4090s"; "l40s" and "1660s" are names
            singular = resolve_gpu(snapshot.gpu_index, query[:-1])
            plural = singular.status != "none"
            match = singular if singular.status == "found" or match.status == "none" else match
        elif match.status == "found" and query.endswith("s") and len(query) > 2 and query[-2].isdigit():
            # "h100s" found as the H100 by a near spelling: the plural of the same card ("l40s" is the L40S,
            # whose singular spelling "l40" is another card, so it stays a name)
            plural = resolve_gpu(snapshot.gpu_index, query[:-1]).gpu_id == match.gpu_id
        count, used = _count_near(text, m.start(), m.end(), patterns, vocabulary)
        count = count or match.count
        several = several or (plural and count is None)
        names.append(m.span())
        spans.append((used[0], used[1]))
        mention = GpuMention(match.status, match.gpu_id, None, tuple(match.candidates), count, query)
        mention = _memory_read(text, m.start(), m.end(), mention, snapshot)
        gpu_id = mention.gpu_id
        name = snapshot.gpus[gpu_id].name if gpu_id is not None and gpu_id in snapshot.gpus else None
        mentions.append(replace(mention, name=name))
    if not mentions:
        for c in find_gpu_classes(text)[:MAX_GPU_SPANS]:
            count, used = _count_near(text, c.start, c.end, patterns, vocabulary)
            spans.append(used)
            mentions.append(GpuMention("class", None, None, (), count, text[c.start : c.end], c.memory_gb, c.segment))
            several = several or (c.plural and count is None)
    together = _together(text, spans) if len({m.gpu_id or m.query for m in mentions}) > 1 else False
    count_range = _range(text, patterns) if has_digit(text) else None
    nodes = find_nodes(text, vocabulary.count_words)
    if nodes is not None:
        spans.append(nodes.span)
    loose = _loose_count(text, spans, patterns, vocabulary)
    merged = _merge(mentions)
    notes = count_notes(text, names, patterns, vocabulary) if has_digit(text) else ()
    found = GpuFound(merged, loose, tuple(spans), count_range=count_range, together=together, plural=several,
                     notes=notes)
    if nodes is None or not nodes.per_node:
        return found
    if not (loose or any(m.count for m in merged)):
        return _board(found, nodes, snapshot)
    return replace(found, mentions=_times(merged, nodes), loose_count=loose * nodes.count if loose else None,
                   nodes=nodes)


def _memory_read(text: str, start: int, end: int, mention: GpuMention, snapshot: Snapshot) -> GpuMention:
    """A memory figure written beside a name picks the variant ("the 40GB A100", "A100 with 80GB"); a figure
    that no variant of it has is a GPU the catalog lacks (a modded "4090 48G"), not the stock card."""
    if mention.status == "none":
        return mention
    figure = _MEMORY_AFTER.match(text, end, min(len(text), end + 16)) or _MEMORY_BEFORE.search(
        text, max(0, start - 12), start)
    if figure is None:
        return mention
    memory = float(figure.group(1))
    gpus = snapshot.gpus
    if mention.gpu_id is not None and mention.gpu_id in gpus and abs(gpus[mention.gpu_id].vram_gb - memory) < 1:
        return mention
    again = resolve_gpu(snapshot.gpu_index, f"{mention.query} {memory:g}gb")
    if again.gpu_id is not None and again.gpu_id in gpus and abs(gpus[again.gpu_id].vram_gb - memory) < 1:
        return replace(mention, status="found", gpu_id=again.gpu_id, candidates=())
    if mention.status == "found":
        return replace(mention, status="none", gpu_id=None, query=f"{mention.query} {memory:g}g")
    return mention


def _board(found: GpuFound, nodes: Nodes, snapshot: Snapshot) -> GpuFound:
    """"A node of H100s", "2 servers of A100": a datacenter GPU's board holds 8 (HGX/DGX), per machine."""
    named = {m.gpu_id for m in found.mentions if m.status == "found"}
    if len(found.mentions) != 1 or len(named) != 1:
        return found
    gpu = snapshot.gpus.get(next(iter(named)) or "")
    if gpu is None or gpu.segment != "datacenter":
        return found
    count = GPUS_PER_BOARD * nodes.count
    return replace(found, mentions=(replace(found.mentions[0], count=count),), nodes=nodes, board=True)


def _times(mentions: tuple[GpuMention, ...], nodes: Nodes) -> tuple[GpuMention, ...]:
    """Per-machine counts times the number of machines ("2 nodes of 8 H100" is 16 H100); a count that is
    already machines x GPUs per machine ("16张H100，两台，每台8张") is the total."""
    total = nodes.count * nodes.per_machine if nodes.per_machine else None
    return tuple(replace(m, count=m.count * nodes.count) if m.count and m.count != total else m for m in mentions)


def _together(text: str, spans: list[tuple[int, int]]) -> bool:
    """Named GPUs joined by "+" ("3090 + 4090", "4x 3090 + 2x 4090") are one machine's cards."""
    ordered = sorted(spans)
    return all(_PLUS.match(text[a[1] : b[0]]) for a, b in zip(ordered, ordered[1:]))


def _range(text: str, patterns: dict[str, re.Pattern[str]]) -> tuple[int, int] | None:
    """"2-4 GPUs", "2~4张", "2 to 4 A6000s": a span of counts."""
    for m in patterns["range"].finditer(text):
        low, high = int(m.group(1)), int(m.group(2))
        if 1 <= low < high <= MAX_COUNT:
            return low, high
    return None


def _count_near(
    text: str, start: int, end: int, patterns: dict[str, re.Pattern[str]], vocabulary: Vocabulary
) -> tuple[int | None, tuple[int, int]]:
    """A count written just before ("两张", "2x", "dual") or just after ("3대", "を8枚", "x8")."""
    window = text[max(0, start - 16) : start]
    m = patterns["before"].search(window)
    if m:
        value = count_value(m.group(1), vocabulary.count_words)
        if value and 1 <= value <= MAX_COUNT:
            return value, (start - len(window) + m.start(), end)
    after = patterns["after"].search(text[end : end + 16])
    if after:
        value = count_value(after.group(1) or after.group(2), vocabulary.count_words)
        if value and 1 <= value <= MAX_COUNT:
            return value, (start, end + after.end())
    return None, (start, end)


def count_notes(
    text: str, names: list[tuple[int, int]], patterns: dict[str, re.Pattern[str]], vocabulary: Vocabulary
) -> tuple[Note, ...]:
    """Counts written before a GPU name or a GPU word that no plan can use: negative, zero, beyond MAX_COUNT.

    They used to vanish ("999999 H100" became one card) or lose their sign ("-5 GPUs" became 5).
    """
    found: list[re.Match[str]] = []
    for start, end in names:
        window = max(0, start - 24)
        m = patterns["any_before"].search(text, window, start)
        if m:
            found.append(m)
        after = patterns["any_after"].match(text, end, min(len(text), end + 24))
        if after:
            found.append(after)
    if has_any(text, _unit_anchors(vocabulary.gpu_units)):  # the loose pattern ends with a unit word
        found.extend(patterns["any_loose"].finditer(text))
    notes: dict[tuple[int, int], Note] = {}
    for m in found:
        group = 2 if m.group(2) else 4  # "any_after" has a second pair of groups ("H100 999999장")
        sign, digits, where = m.group(group - 1), m.group(group).replace(",", ""), m.span(group)
        value = int(digits) if digits.isdigit() and len(digits) <= 12 else MAX_COUNT + 1
        if sign or value < 1:
            notes.setdefault(where, Note("count_not_positive", given=_count_text(text, m, names)))
        elif value > MAX_COUNT:
            notes.setdefault(where, Note("count_too_large", given=_count_text(text, m, names), max=MAX_COUNT))
    return tuple(notes[span] for span in sorted(notes))


def _count_text(text: str, m: re.Match[str], names: list[tuple[int, int]]) -> str:
    """The count with what it counts: "-5 GPUs", "999999 H100", "H100 x999999" (with the name beside it)."""
    start = next((s for s, e in names if m.start() - 1 <= e <= m.start()), m.start())
    end = next((e for s, e in names if m.end() <= s <= m.end() + 2), m.end())
    return text[start:end].strip()


def _loose_count(
    text: str, spans: list[tuple[int, int]], patterns: dict[str, re.Pattern[str]], vocabulary: Vocabulary
) -> int | None:
    if not has_any(text, _unit_anchors(vocabulary.gpu_units)):  # both branches end with a unit word
        return None
    for m in patterns["loose"].finditer(text):
        if any(s <= m.start() < e or s < m.end() <= e for s, e in spans):
            continue
        value = count_value(m.group(1) or m.group(2), vocabulary.count_words)
        if value and 1 <= value <= MAX_COUNT:
            return value
    return None


def _merge(mentions: list[GpuMention]) -> tuple[GpuMention, ...]:
    """One mention per GPU: a name repeated in the text keeps its first stated count."""
    out: list[GpuMention] = []
    for mention in mentions:
        key = mention.gpu_id or mention.query
        same = [i for i, o in enumerate(out) if (o.gpu_id or o.query) == key]
        if not same:
            out.append(mention)
        elif out[same[0]].count is None and mention.count is not None:
            out[same[0]] = replace(out[same[0]], count=mention.count)
    return tuple(out)
