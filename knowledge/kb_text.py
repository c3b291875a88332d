"""Text handling for knowledge-base matching: normalisation, term patterns and conceptual cues."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

# Latin letters incl. accents and Vietnamese (Latin-1, Extended-A/B, Extended Additional) and digits:
# a Latin term must not be glued to one of these on either side ("mig" is not in "might").
_LATIN_WORD = "0-9a-z\u00c0-\u024f\u1e00-\u1eff"
_WORD_LEFT = rf"(?<![{_LATIN_WORD}])"
_WORD_RIGHT = rf"(?![{_LATIN_WORD}])"
_SPACES = re.compile(r"\s+")
_ASCII_START = re.compile(rf"^[{_LATIN_WORD}]")

# Question cues that mark a conceptual ("why / what is / should I") question, per language.
CONCEPTUAL_CUES: tuple[str, ...] = (
    "why", "what is", "what's", "what are", "what does", "what happens", "how does", "how do",
    "should i", "do i need", "is it worth", "worth it", "is it safe", "safe to", "difference",
    "explain", "what then", "does it matter", "matter",
    "为什么", "为何", "是否", "是什么", "什么是", "要不要", "需要吗", "区别", "有什么用", "划算", "怎么办", "表现",
    "왜", "무엇", "뭔가요", "인가요", "필요한가요", "필요해", "차이", "괜찮", "안전한가요", "어떻게 되",
    "なぜ", "どうして", "とは", "必要ですか", "違い", "べき", "意味", "大丈夫",
    "por qué", "qué es", "debería", "vale la pena", "diferencia", "es seguro", "necesito",
    "warum", "wieso", "was ist", "was bringt", "sollte", "lohnt", "unterschied", "brauche ich",
    "pourquoi", "qu'est-ce", "dois-je", "faut-il", "différence", "vaut-il", "vaut le coup", "est-ce sûr",
    "tại sao", "vì sao", "là gì", "có nên", "có cần", "khác gì", "khác nhau", "có an toàn",
)


def normalise_text(text: str) -> str:
    """NFKC (full-width to ASCII), case-fold, unify dashes, collapse whitespace."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = folded.replace("\u2013", "-").replace("\u2014", "-").replace("\u2010", "-")
    folded = folded.replace("\u2019", "'")
    return _SPACES.sub(" ", folded).strip()


def compact_text(text: str) -> str:
    """Normalised text without spaces: for character-level comparison of CJK/Hangul phrasings."""
    return normalise_text(text).replace(" ", "")


@dataclass(frozen=True, slots=True)
class TermPattern:
    """One surface form of a concept or keyword, compiled once."""

    surface: str
    regex: re.Pattern[str] | None  # None = plain substring (CJK/Hangul/symbols)

    def found_in(self, normalised: str) -> bool:
        """True when this surface form occurs in already-normalised text."""
        if self.regex is None:
            return self.surface in normalised
        return self.regex.search(normalised) is not None


def compile_term(surface: str) -> TermPattern:
    """A Latin-script term needs word boundaries (a trailing `*` allows any ending); others match as substrings."""
    prefix = surface.endswith("*")
    core = normalise_text(surface.rstrip("*"))
    if not core:
        raise ValueError(f"empty term {surface!r}")
    if not _ASCII_START.match(core) and not core[-1:].isascii():
        return TermPattern(surface=core, regex=None)
    left = _WORD_LEFT if _ASCII_START.match(core) else ""
    right = "" if prefix or not re.match(rf"[{_LATIN_WORD}]", core[-1]) else _WORD_RIGHT
    return TermPattern(surface=core, regex=re.compile(left + re.escape(core) + right))


def hits(normalised: str, patterns: Iterable[TermPattern]) -> tuple[str, ...]:
    """Surface forms found in the normalised text, longest first, without forms contained in a longer hit."""
    found = sorted({p.surface for p in patterns if p.found_in(normalised)}, key=lambda s: (-len(s), s))
    kept: list[str] = []
    for surface in found:
        if not any(surface in longer for longer in kept):
            kept.append(surface)
    return tuple(kept)


def looks_conceptual(text: str) -> bool:
    """True when the text reads like a "why / what is / should I" question rather than a sizing request.

    Cheap cue scan the parser may call before routing; it does not decide which entry answers.
    """
    normalised = normalise_text(text)
    if not normalised:
        return False
    return any(pattern.found_in(normalised) for pattern in _cue_patterns())


@functools.cache
def _cue_patterns() -> tuple[TermPattern, ...]:
    return tuple(compile_term(cue) for cue in CONCEPTUAL_CUES)
