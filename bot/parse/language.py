"""Which language a message is written in: script first, then vocabulary (stopwords)."""

from __future__ import annotations

import functools
import re

from bot.parse.lookup import Same
from bot.parse.vocabulary import Vocabulary

_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_KANA = re.compile(r"[\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[a-z\u00c0-\u024f\u1e00-\u1eff']+")
# Letters only Vietnamese uses among our Latin languages (horn vowels, d-bar, dot-below tones, and the
# grave and tilde tones on vowels French and Spanish never carry them on: ò ì ã õ ĩ ũ).
_VIETNAMESE = re.compile(r"[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹòìãõĩũ]")
MIN_SCRIPT_CHARS = 2  # one stray CJK character in English text does not switch the language
LATIN_LANGUAGES: tuple[str, ...] = ("en", "es", "de", "fr")
# Letters and marks that only one of our Latin languages uses; each counts as two words.
_LETTER_CUES = {"es": re.compile(r"[ñ¿¡]"), "de": re.compile(r"[äöüß]"), "fr": re.compile(r"[çèêëœùîû]|\b(?:l|d|qu|n|s|c|j)'[a-zéè]")}


def detect_language(text: str, vocabulary: Vocabulary) -> str:
    """The user's language. CJK script wins over English tech words mixed into the message."""
    if text.isascii():  # no CJK script, no Vietnamese letters
        return latin_language(text, vocabulary)
    hangul = len(_HANGUL.findall(text))
    kana = len(_KANA.findall(text))
    han = _HAN.findall(text)
    if hangul >= MIN_SCRIPT_CHARS and hangul >= kana:
        return "ko"
    if kana >= MIN_SCRIPT_CHARS or (kana and han):
        return "ja"
    if len(han) >= MIN_SCRIPT_CHARS:
        return chinese_script(han, vocabulary)
    if hangul:
        return "ko"
    if han:
        return chinese_script(han, vocabulary)
    return latin_language(text, vocabulary)


def chinese_script(han: list[str], vocabulary: Vocabulary) -> str:
    """zh-Hant when traditional-only characters outnumber simplified-only ones; ja for 枚/円 alone."""
    simplified = sum(1 for ch in han if ch in vocabulary.simplified_chars)
    if not simplified and any(ch in vocabulary.japanese_kanji for ch in han):
        return "ja"
    traditional = sum(1 for ch in han if ch in vocabulary.traditional_chars)
    return "zh-Hant" if traditional > simplified else "zh-Hans"


@functools.lru_cache(maxsize=1)
def _word_languages(key: Same) -> dict[str, tuple[str, ...]]:
    """Stopword -> the Latin-script languages (and vi) whose list has it, in LATIN_LANGUAGES order."""
    vocabulary: Vocabulary = key.obj  # type: ignore[assignment]
    out: dict[str, tuple[str, ...]] = {}
    for lang in (*LATIN_LANGUAGES, "vi"):
        for word in vocabulary.stopwords[lang]:
            out[word] = (*out.get(word, ()), lang)
    return out


def latin_language(text: str, vocabulary: Vocabulary) -> str:
    """Score stopwords per language; Vietnamese letters are decisive; ties go to English."""
    if len(_VIETNAMESE.findall(text)) >= MIN_SCRIPT_CHARS:
        return "vi"
    words = _LATIN_WORD.findall(text)
    if not words:
        return "en"
    scores = {lang: 0 for lang in (*LATIN_LANGUAGES, "vi")}
    languages_of = _word_languages(Same(vocabulary))
    for word in words:
        known = languages_of.get(word, ())
        for lang in known:
            scores[lang] += 1
        if not known:  # a known word counts once, for its languages ("trên" is not French for its ê)
            for lang, cue in _LETTER_CUES.items():
                scores[lang] += 2 * len(cue.findall(word))
    vi_score = scores.pop("vi")
    best = max(LATIN_LANGUAGES, key=lambda lang: (scores[lang], lang == "en"))
    if vi_score > scores[best]:
        return "vi"
    return best if scores[best] > scores["en"] else "en"
