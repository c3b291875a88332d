"""Machines in a cluster: "2 nodes of 8 H100", "两台机器每台8卡", "노드 2개", "ノードを2台", "2 nœuds de 8"."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from bot.parse.anchors import anchors, has_any
from bot.parse.numbers import count_value
from bot.parse.vocabulary import phrase_regex

MAX_NODES = 256
# Nouns for one machine holding GPUs. CJK nouns carry no word edge; Latin ones end at a non-letter.
_LATIN_NOUNS = (
    "nodes", "node", "machines", "machine", "servers", "server", "hosts", "boxes", "instances",
    "nodos", "nodo", "máquinas", "servidores", "nœuds", "nœud", "noeuds", "noeud", "knoten",
    "rechner", "maschinen", "máy chủ", "máy",
)
_CJK_NOUNS = ("机器", "機器", "节点", "節點", "服务器", "伺服器", "主机", "主機", "ノード", "サーバー", "サーバ", "マシン")
# Korean/Japanese say the noun first: "노드 2개", "ノードを2台" (a counter word is required there).
_NOUN_FIRST = ("노드", "서버", "머신", "ノード", "サーバー", "サーバ", "マシン", "nnodes", "num_nodes", "num_machines")
# A GPU count written with these words is already the cluster total ("16 H100 across 2 nodes").
_TOTAL_WORDS = (
    "total", "across", "in all", "altogether", "总共", "一共", "總共", "共计", "合計", "合计", "全部で",
    "총", "insgesamt", "zusammen", "en total", "au total", "tổng",
)


@dataclass(frozen=True, slots=True)
class Nodes:
    """How many machines the GPUs are spread over, and whether the GPU count given is per machine."""

    count: int
    per_node: bool
    span: tuple[int, int]


@functools.lru_cache(maxsize=1)
def _patterns(counts: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    number = rf"(\d{{1,3}}|{phrase_regex(list(counts))}|[一二两兩三四五六七八九十]{{1,3}})"
    nouns = phrase_regex(list(_LATIN_NOUNS + _CJK_NOUNS))
    before = re.compile(rf"(?<![\d.,])(?<![a-z]){number}\s?(?:x\s?)?(?:台|个|個|개|대)?\s?(?:{nouns})")
    after = re.compile(
        rf"(?:{phrase_regex(list(_NOUN_FIRST))})\s?(?:를|을|가|이|는|은|が|を|は|x|:|=)?\s?(\d{{1,3}}|[一二两兩三四五六七八九十]|두|세|네)"
        rf"\s?(?:개|대|台|つ)?(?![\d])"
    )
    return before, after


@functools.lru_cache(maxsize=1)
def _anchor_words() -> tuple[str, ...]:
    return anchors(_LATIN_NOUNS + _CJK_NOUNS + _NOUN_FIRST)


def find_nodes(text: str, count_words: Mapping[str, int]) -> Nodes | None:
    """The number of machines when it is at least 2, else None (one machine is the default)."""
    if not has_any(text, _anchor_words()):
        return None
    before, after = _patterns(tuple(count_words))
    for pattern in (before, after):
        for m in pattern.finditer(text):
            value = count_value(m.group(1), {**count_words, "두": 2, "세": 3, "네": 4})
            if value and 2 <= value <= MAX_NODES:
                return Nodes(value, not has_any(text, _TOTAL_WORDS), m.span())
    return None
