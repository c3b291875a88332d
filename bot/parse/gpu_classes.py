"""GPUs described by their memory or class only: "a 24 GB card", "48G显存", "a Mac with 64 GB", "consumer GPUs".

Such a description names no one GPU: it becomes a mention of status "class" carrying `memory_gb` and
`segment` (consumer, workstation, datacenter, apple), never a guessed catalog GPU. A memory figure is
read as a GPU only in the company of a GPU noun ("card", "卡", "카드", "カード", "Karte"...), the word VRAM
or its translations, or an Apple machine; "256GB RAM", "640G内存" or a bare "24GB" are not GPUs.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from bot.parse.anchors import has_any

MIN_MEMORY_GB, MAX_MEMORY_GB = 2, 1024
# Nouns for "a GPU". Latin ones get word edges; CJK ones do not need them.
_NOUN = (
    r"(?:(?<![a-z])(?:graphics cards?|video cards?|gpus?|cards?|accelerators?|grafikkarten?|karten?|"
    r"tarjetas?(?: gráficas?)?|gráficas?|cartes?(?: graphiques?)?|card(?: đồ họa)?)(?![a-z])"
    r"|显卡|顯卡|卡|그래픽\s?카드|카드|グラボ|ビデオカード|カード)"
)
# One word that may stand between a memory figure and its noun: "an 8GB laptop GPU", "two 24GB used cards".
_DESCRIPTOR = r"(?:laptop|notebook|mobile|used|second-hand|nvidia|amd|radeon|geforce|desktop|single|old|cheap|cloud)"
_VRAM = r"(?:(?<![a-z])vram(?![a-z])|显存|顯存|ビデオメモリ|비디오 메모리)"
_MEM = r"(?<![\d.])(?<!\d,)(\d{1,4}(?:\.\d)?)\s?-?(?:gib|gb|go|g)(?![a-z0-9])"
_APPLE = (
    r"(?:(?<![a-z])(?:mac\s?studio|mac\s?mini|mac\s?pro|macbook(?:\s?(?:pro|air))?|imac|mac|m[1-5]\s?(?:pro|max|ultra))"
    r"(?![a-z])|맥북(?:\s?프로|\s?에어)?|맥\s?스튜디오|맥\s?미니|맥(?=\s?(?:m[1-5]|\d)))"
)
_UNIFIED = (
    r"(?:unified memory|memoria unificada|mémoire unifiée|einheitlichem speicher|unified ram|统一内存|統一記憶體|"
    r"ユニファイドメモリ|統合メモリ|통합 메모리|bộ nhớ hợp nhất)"
)
# A segment word next to a GPU noun ("consumer GPUs", "消费级显卡", "コンシューマー向けGPU").
SEGMENT_WORDS: dict[str, str] = {
    "consumer": "consumer", "consumer-grade": "consumer", "gaming": "consumer", "消费级": "consumer",
    "消費級": "consumer", "民用": "consumer", "游戏": "consumer", "遊戲": "consumer", "소비자용": "consumer",
    "게이밍": "consumer", "コンシューマー向け": "consumer", "コンシューマー": "consumer", "ゲーミング": "consumer",
    "de consumo": "consumer", "grand public": "consumer", "tiêu dùng": "consumer", "consumer-karten": "consumer",
    "workstation": "workstation", "工作站": "workstation", "워크스테이션": "workstation",
    "ワークステーション": "workstation", "datacenter": "datacenter", "data center": "datacenter",
    "data-center": "datacenter", "数据中心": "datacenter", "數據中心": "datacenter", "데이터센터": "datacenter",
    "データセンター": "datacenter", "centro de datos": "datacenter", "rechenzentrum": "datacenter",
    "centre de données": "datacenter", "trung tâm dữ liệu": "datacenter", "server-grade": "datacenter",
}
# Words before an amount of VRAM that make it a requirement or a usage, not the hardware ("needs 48GB of VRAM").
_NOT_HARDWARE = re.compile(
    r"(?:need|needs|needed|require[sd]?|requirement|uses|using|takes|eats|at least|over|more than|需要|要|占了?|"
    r"最低|至少|필요|이상|必要|以上|necesit|braucht|benötig|besoin|cần|mindestens|au moins|al menos)\s?\S{0,6}\s?$"
)
_ANCHORS = ("g", "mac", "맥", "m1", "m2", "m3", "m4", "m5", *SEGMENT_WORDS)
# What every memory figure (`_MEM`) holds: a digit, then "g" after at most a space and a hyphen. Without
# one, none of the patterns with a figure can match and their scans are skipped.
_MEMORY_HINT = re.compile(r"\d\s?-?g")
_MEMORY_KEYS = ("memory_noun", "noun_memory", "vram", "fits_in", "enough")


@dataclass(frozen=True, slots=True)
class GpuClass:
    """One GPU described by memory and/or segment, with the span it came from."""

    memory_gb: float | None
    segment: str | None
    start: int
    end: int
    plural: bool  # "24G cards", "GPUs de 80GB": several of them, the count unsaid


@functools.lru_cache(maxsize=1)
def _patterns() -> dict[str, re.Pattern[str]]:
    segment = "|".join(re.escape(w) for w in sorted(SEGMENT_WORDS, key=len, reverse=True))
    return {
        # "24gb card", "24g的卡", "48gbのgpu", "80-gb-karte", "24g显存的卡", "80gb gpu"
        "memory_noun": re.compile(
            rf"{_MEM}\s?(?:{_VRAM})?\s?(?:的|の|-|\s)?\s?(?:(?:{segment})\s?)?(?:{_DESCRIPTOR}\s)?({_NOUN})"
        ),
        # "is 24GB enough", "24G够吗", "24GBで足りる", "reichen 24 GB": an amount of memory said to suffice
        "enough": re.compile(
            rf"{_MEM}\s?(?:of\s(?:vram|memory)\s)?(?:be\s)?(?:enough|sufficient|够|足够|夠|で足り|で十分|면 충분|로 충분|이면 충분|"
            rf"suffisent|suffisant|suficiente|suficientes|reichen|reicht|là đủ|có đủ|đủ)"
            rf"|(?<![a-z])(?:reichen|reicht|suffisent|bastan|basta)\s{_MEM}"
        ),
        # "the biggest model that fits in 48GB"
        "fits_in": re.compile(rf"(?<![a-z])fits?\s(?:in|into|within|on)\s{_MEM}(?!\s?(?:of\s)?(?:system\s)?(?:ram|memory|disk))"),
        # "cards of 141g", "tarjeta de 24 gb", "card 48gb", "gpu with 24gb"
        "noun_memory": re.compile(
            rf"({_NOUN})\s?(?:of|with|de|mit|con|avec|với|:)?\s?(?:je|each|cada|chacune|chacun|mỗi)?\s?(?:\()?{_MEM}"
        ),
        # "48g显存", "24gb vram", "24gb of vram", "显存48g", "vram 24gb"
        "vram": re.compile(rf"{_MEM}\s?(?:of\s|の|的)?{_VRAM}|{_VRAM}\s?(?:of|:|为|是|が|は|은|는)?\s?{_MEM}"),
        "apple": re.compile(_APPLE),
        "apple_memory": re.compile(rf"^[^.?!。？！\n]{{0,24}}?(?:with|mit|con|avec|với|de)?\s?{_MEM}"),
        "unified": re.compile(rf"{_MEM}\s?(?:of\s|de\s|の)?{_UNIFIED}"),
        "segment": re.compile(rf"(?<![a-z])({segment})(?![a-z])\s?(?:的|の|용|向け|-)?\s?({_NOUN})"),
    }


def find_gpu_classes(text: str) -> list[GpuClass]:
    """GPU descriptions without a name, in order; the text is normalised and holds no named GPU."""
    if not has_any(text, _ANCHORS):
        return []
    patterns = _patterns()
    found: list[GpuClass] = []
    figures = _MEMORY_HINT.search(text) is not None
    apple = _apple(text, patterns, figures)
    if apple is not None:
        return [apple]
    for key in _MEMORY_KEYS if figures else ():
        for m in patterns[key].finditer(text):
            if _taken(found, m.start(), m.end()):
                continue
            if key == "vram" and _NOT_HARDWARE.search(text[max(0, m.start() - 16) : m.start()]):
                continue  # "needs 48GB of VRAM" is a requirement; "need 2 GPUs of 80GB" still names the GPUs
            memory = _memory(m)
            if memory is None:
                continue
            noun = next((g for g in m.groups()[::-1] if g and not g[0].isdigit()), "") or ""
            found.append(GpuClass(memory, _segment_near(text, m.start(), m.end()), m.start(), m.end(), _plural(noun)))
    for m in patterns["segment"].finditer(text):
        if not _taken(found, m.start(), m.end()):
            found.append(GpuClass(None, SEGMENT_WORDS[m.group(1)], m.start(), m.end(), _plural(m.group(2))))
    return sorted(found, key=lambda c: c.start)


def _apple(text: str, patterns: dict[str, re.Pattern[str]], figures: bool) -> GpuClass | None:
    """A Mac (or an M-series chip), with the memory written just after it or as "N GB unified memory"."""
    machine = patterns["apple"].search(text)
    unified = patterns["unified"].search(text) if figures else None
    if machine is None and unified is None:
        return None
    memory, end = None, (machine.end() if machine else 0)
    if machine is not None and figures:
        after = patterns["apple_memory"].search(text[machine.end(): machine.end() + 40])
        if after is not None:
            memory, end = _memory(after), machine.end() + after.end()
    if memory is None and unified is not None:
        memory, end = _memory(unified), max(end, unified.end())
    start = machine.start() if machine else unified.start() if unified else 0
    return GpuClass(memory, "apple", start, max(end, start + 1), False)


def _memory(m: re.Match[str]) -> float | None:
    digits = next((g for g in m.groups() if g and g[0].isdigit()), None)
    if digits is None:
        return None
    value = float(digits)
    if not MIN_MEMORY_GB <= value <= MAX_MEMORY_GB:
        return None
    return int(value) if value.is_integer() else value


def _segment_near(text: str, start: int, end: int) -> str | None:
    window = text[max(0, start - 14): end + 2]
    words = [w for w in SEGMENT_WORDS if w in window]
    return SEGMENT_WORDS[max(words, key=len)] if words else None


def _plural(noun: str) -> bool:
    noun = noun.strip()
    return noun.endswith(("cards", "gpus", "karten", "tarjetas", "cartes", "accelerators", "gráficas"))


def _taken(found: list[GpuClass], start: int, end: int) -> bool:
    return any(c.start < end and start < c.end for c in found)
