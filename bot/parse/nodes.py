"""Machines in a cluster: "2 nodes of 8 H100", "4台8卡", "노드 2개", "ノードを2台", "2 nœuds de 8", "a node of H100s"."""

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
    "nodos", "nodo", "máquinas", "servidores", "servidor", "nœuds", "nœud", "noeuds", "noeud", "serveurs", "serveur",
    "knoten", "rechner", "maschinen", "máy chủ", "máy", "node gpu",
)
_CJK_NOUNS = ("机器", "機器", "节点", "節點", "服务器", "伺服器", "主机", "主機", "ノード", "サーバー", "サーバ", "マシン")
# Korean/Japanese say the noun first: "노드 2개", "ノードを2台" (a counter word is required there).
_NOUN_FIRST = ("노드", "서버", "머신", "ノード", "サーバー", "サーバ", "マシン", "nnodes", "num_nodes", "num_machines")
# A GPU count written with these words is already the cluster total ("16 H100 across 2 nodes").
_TOTAL_WORDS = (
    "total", "across", "in all", "altogether", "总共", "一共", "總共", "共计", "合計", "合计", "全部で",
    "총", "insgesamt", "en total", "au total", "tổng", "分两台", "分成", "分布在", "分在", "split across",
    "spread over", "spread across", "repartidas", "verteilt", "réparties",
)
# "one node", "a single server", "1ノード", "单机", "노드 하나": a single machine (a GPU board's worth).
_ONE = (
    r"(?<![a-z0-9])(?:a single|single|one|a|an|1|un|une|ein|einem|einen|einer|một|một cái)\s(?:single\s)?"
    r"(?:8[-\s]?gpu\s|hgx\s|dgx\s)?(?:node|server|box|nodo|servidor|nœud|noeud|serveur|knoten|server|máy chủ)(?![a-z])"
    r"|(?:1|一)\s?(?:つの)?(?:ノード|台(?:の)?(?:サーバー?|マシン|机器|服务器|節點|节点)|个节点|個節點|노드)"
    r"|单机|單機|单节点|單節點|単一ノード|ノード1台|노드\s?(?:하나|1개|한 대)|서버\s?(?:한 대|1대)|한\s?노드"
)
_ONE_ANCHORS = ("node", "server", "box", "nodo", "servidor", "nœud", "noeud", "serveur", "knoten", "máy chủ", "ノード",
                "台", "节点", "節點", "노드", "서버", "单机", "單機")
# "4台8卡", "2台8xA100", "两台 每台8卡": a machine count written straight before the per-machine GPU count.
_MACHINES_THEN_GPUS = re.compile(
    r"(?<![\d.])(\d{1,3}|[一二两兩三四五六七八九十]{1,2})\s?(?:台|대)\s?(?:机器|機器|服务器|伺服器|主机|主機|节点|節點|서버)?"
    r"\s?[,，、]?\s?(?:每台|各|각)?\s?(?=(\d{1,2}|[一二两兩三四五六七八九十]{1,2})\s?(?:卡|张|張|块|塊|x|\*|장|gpu))"
)


@dataclass(frozen=True, slots=True)
class Nodes:
    """How many machines the GPUs are spread over, and whether the GPU count given is per machine."""

    count: int
    per_node: bool
    span: tuple[int, int]
    per_machine: int | None = None  # "4台8卡": the GPUs each machine holds, when written next to the machines


@functools.lru_cache(maxsize=1)
def _patterns(counts: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    number = rf"(\d{{1,3}}|{phrase_regex(list(counts))}|[一二两兩三四五六七八九十]{{1,3}})"
    nouns = phrase_regex(list(_LATIN_NOUNS + _CJK_NOUNS))
    before = re.compile(rf"(?<![\d.])(?<!\d,)(?<![a-z]){number}\s?(?:x\s?)?(?:台|个|個|개|대)?\s?(?:{nouns})")
    after = re.compile(
        rf"(?:{phrase_regex(list(_NOUN_FIRST))})\s?(?:를|을|가|이|는|은|が|を|は|x|:|=)?\s?(\d{{1,3}}|[一二两兩三四五六七八九十]|두|세|네)"
        rf"\s?(?:개|대|台|つ)?(?![\d])"
    )
    return before, after, re.compile(_ONE)


@functools.lru_cache(maxsize=1)
def _anchor_words() -> tuple[str, ...]:
    return anchors(_LATIN_NOUNS + _CJK_NOUNS + _NOUN_FIRST + ("台", "대"))


def find_nodes(text: str, count_words: Mapping[str, int]) -> Nodes | None:
    """The number of machines (1 only when a single machine is said: "a node of H100s"), else None."""
    if not has_any(text, _anchor_words()):
        return None
    before, after, one = _patterns(tuple(count_words))
    per_node = not has_any(text, _TOTAL_WORDS)
    for m in _MACHINES_THEN_GPUS.finditer(text):
        value = count_value(m.group(1), count_words)
        if value and 2 <= value <= MAX_NODES:
            return Nodes(value, True, m.span(), count_value(m.group(2), count_words))
    for pattern in (before, after):
        for m in pattern.finditer(text):
            value = count_value(m.group(1), {**count_words, "두": 2, "세": 3, "네": 4})
            if value and 2 <= value <= MAX_NODES:
                return Nodes(value, per_node, m.span())
    single = one.search(text) if has_any(text, _ONE_ANCHORS) else None
    return Nodes(1, True, single.span()) if single else None
