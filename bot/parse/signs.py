"""Workload quantities written below one: "-5B tokens", "-50 users", "-3 epochs", "batch 0", "seq -4096".

The extractors read the digits and drop the sign ("-50 users" was 50 users, "-5B tokens" 5B tokens) or
drop the quantity in silence ("batch 0"). This pass finds each such quantity once, for the parser to
leave the field unset and say why in "I ignored: ...".
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.parse.notes import Note

_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_MINUS = r"[-−]\s?"
_SET = r"\s?(?:[:=：]|of|is)?\s?"
# Which Ask field each written quantity would fill, and how it is written (the sign or the zero captured).
QUANTITIES: Mapping[str, re.Pattern[str]] = {
    "dataset_tokens": re.compile(
        rf"(?<![\w.]){_MINUS}{_NUMBER}\s?(?:k|m|b|t|bn|万|亿|억|千)?\s?(?:tokens?|tok|词元|토큰|トークン)(?![a-z])"),
    "samples": re.compile(rf"(?<![\w.]){_MINUS}{_NUMBER}\s?(?:k|m)?\s?(?:samples|examples|rows|条|個|개)(?![a-z])"),
    "epochs": re.compile(
        rf"(?<![\w.])(?:{_MINUS}{_NUMBER}|0)\s?(?:epochs?|轮|輪|에폭|エポック|époques?|epochen|épocas?)(?![a-z])"
        rf"|(?<![a-z])(?:num_train_epochs|epochs?){_SET}(?:{_MINUS}{_NUMBER}|0(?![\d.]))"),
    "concurrency": re.compile(
        rf"(?<![\w.])(?:{_MINUS}{_NUMBER}|0)\s?(?:concurrent )?(?:users?|people|requests?|sequences?|clients?|用户|用戶|人|명|"
        rf"usuarios|nutzer|utilisateurs|người dùng)(?![a-z])"),
    "batch_size": re.compile(rf"(?<![a-z])(?:batch(?: size)?|bs|micro[_ ]batch(?:_size)?){_SET}(?:{_MINUS}{_NUMBER}|0(?![\d.]))"),
    "seq_len": re.compile(
        rf"(?<![a-z])(?:seq(?:uence)?(?:[_ ]len(?:gth)?)?|max_seq_length|cutoff_len|context(?: length)?|ctx)"
        rf"{_SET}(?:{_MINUS}{_NUMBER}|0(?![\d.]))"),
    "lora_rank": re.compile(rf"(?<![a-z])(?:lora[_ ]r|lora[_ ]rank|rank){_SET}(?:{_MINUS}{_NUMBER}|0(?![\d.]))"),
}
# A minus sign before a digit, or a zero standing alone: without one, there is nothing to find.
_MAYBE = re.compile(r"[-−]\s?\d|(?<![\d.,])0(?![\d.,])")


def find_unusable(text: str) -> dict[str, Note]:
    """Per Ask field, the note for a quantity written below one (the first one, when several)."""
    if not _MAYBE.search(text):
        return {}
    found: dict[str, Note] = {}
    for field, pattern in QUANTITIES.items():
        m = pattern.search(text)
        if m is not None:
            found[field] = Note("quantity_not_positive", given=m.group(0))
    return found
