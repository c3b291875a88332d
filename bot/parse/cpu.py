"""A request to run without a GPU ("cpu only", "没有显卡", "GPUなし"): the product sizes GPUs, so the answer is
for GPUs and the card says so (`ignored.cpu_only`) instead of passing over the words in silence."""

from __future__ import annotations

import re

from bot.parse.notes import Note

# Matched on the parser's normalised (casefolded) text; Latin phrases need word edges, CJK/Hangul do not.
_CPU_ONLY = re.compile(
    r"(?<![a-z])(?:cpu[- ]?only|only (?:on |with |using )?(?:an? |the |my )?cpus?|on (?:an? |the |my )?cpu(?: only)?|"
    r"without (?:an? )?gpu|no gpu|solo (?:con |en )?(?:la )?cpu|sin gpu|cpu seulement|uniquement (?:sur |avec )?"
    r"(?:le |un )?cpu|sans gpu|nur (?:auf |mit )?(?:der |einer )?cpu|ohne gpu|chỉ (?:dùng |chạy )?(?:bằng )?cpu|"
    r"không (?:có |dùng )?gpu)(?![a-z])"
    r"|纯cpu|只用cpu|只有cpu|仅用?cpu|没有显卡|无显卡|不用显卡|没有gpu|cpuだけ|cpuのみ|gpuなし|gpu無し|cpu만|gpu\s?없이|gpu가 없"
)


def _quoted(key: str, pattern: re.Pattern[str], text: str) -> Note | None:
    """The note `key` quoting the words `pattern` found in `text`; None when it finds none."""
    found = pattern.search(text)
    return Note(key, given=found.group(0).strip()) if found is not None else None


def cpu_only_note(text: str) -> Note | None:
    """The note for a CPU-only request, quoting the words used; None when the text asks for no such thing."""
    return _quoted("cpu_only", _CPU_ONLY, text)


# A phone ("on my iPhone", "在手机上跑", "スマホで"): not hardware the catalog holds; said, like a CPU-only request.
_PHONE = re.compile(
    r"(?<![a-z])(?:on (?:an? |the |my )?(?:iphone|android|phone|smartphone|pixel)|iphone|android phone|smartphone|"
    r"(?:en |sur |auf )?(?:(?:mi|mon|meinem|un|una|einem) )?(?:móvil|celular|téléphone|portable|smartphone|handy)|"
    r"điện thoại)(?![a-z])"
    r"|手机|手機|スマホ|スマートフォン|携帯|휴대폰|핸드폰|스마트폰"
)


def phone_note(text: str) -> Note | None:
    """The note for a request to run on a phone, quoting the words used; None otherwise."""
    return _quoted("phone", _PHONE, text)
