"""Text handling for knowledge-base matching: normalisation, term patterns and conceptual cues."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

# Latin letters incl. accents and Vietnamese (Latin-1, Extended-A/B, Extended Additional) and digits:
# a Latin term must not be glued to one of these on either side ("mig" is not in "might").
_SPACES = re.compile(r"\s+")


def is_latin_word_char(ch: str) -> bool:
    """Digits and Latin letters, accented and Vietnamese ones included (not CJK, not Hangul)."""
    return (ch.isascii() and ch.isalnum()) or "\u00c0" <= ch <= "\u024f" or "\u1e00" <= ch <= "\u1eff"


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
    """One surface form of a concept or keyword (normalised), with its word-boundary needs."""

    surface: str
    word_start: bool  # must not follow a Latin letter/digit
    word_end: bool  # must not be followed by one (False for "prefix*" terms and CJK endings)

    def found_in(self, normalised: str) -> bool:
        """True when this surface form occurs in already-normalised text with the required boundaries."""
        at = normalised.find(self.surface)
        while at >= 0:
            end = at + len(self.surface)
            left_ok = not self.word_start or at == 0 or not is_latin_word_char(normalised[at - 1])
            right_ok = not self.word_end or end == len(normalised) or not is_latin_word_char(normalised[end])
            if left_ok and right_ok:
                return True
            at = normalised.find(self.surface, at + 1)
        return False


def compile_term(surface: str) -> TermPattern:
    """A term starting/ending with a Latin letter or digit needs a word boundary there; `*` allows any ending."""
    prefix = surface.endswith("*")
    core = normalise_text(surface.rstrip("*"))
    if not core:
        raise ValueError(f"empty term {surface!r}")
    return TermPattern(
        surface=core,
        word_start=is_latin_word_char(core[0]),
        word_end=not prefix and is_latin_word_char(core[-1]),
    )


def hits(normalised: str, patterns: Iterable[TermPattern]) -> tuple[str, ...]:
    """Surface forms found in the normalised text, longest first, without forms contained in a longer hit."""
    return longest_first(p.surface for p in patterns if p.found_in(normalised))


def longest_first(surfaces: Iterable[str]) -> tuple[str, ...]:
    """Distinct surface forms already known to occur, longest first, without forms contained in a longer one."""
    found = sorted(set(surfaces), key=lambda s: (-len(s), s))
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
