"""Training settings written as numbers: sequence length, batch, LoRA rank, resolution, dataset size."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from bot.parse.anchors import anchors, has_any, has_digit
from bot.parse.numbers import MULTIPLIER_RE, number_not_after, scaled
from bot.parse.text import normalise
from bot.parse.vocabulary import Vocabulary, phrase_regex

K_TOKENS = 1024  # "4k context" means 4096 tokens: context sizes are powers of two
MIN_SEQ, MAX_SEQ = 32, 16 * 1024 * 1024  # Llama 4 Scout reads 10M tokens
DATASET_MIN_TOKENS = 1e6  # below this a "N tokens" figure is a per-sample length, not a dataset

_SEQ_WORDS = (
    "max_seq_length", "max_seq_len", "seq_length", "seq_len", "sequence_len", "sequence_length",
    "cutoff_len", "model_max_length", "max_length", "max_len", "context_length", "context_len",
    "block_size", "max_source_length", "sequence length", "seq length", "seq len", "sequence",
    "seq", "context length", "context window", "context size", "context", "ctx", "ctx len",
    "序列长度", "序列長度", "上下文长度", "上下文長度", "上下文窗口", "上下文", "文本长度",
    "コンテキスト長", "コンテキスト", "系列長", "シーケンス長", "컨텍스트 길이", "컨텍스트",
    "시퀀스 길이", "시퀀스", "longitud de secuencia", "longitud de contexto", "contexto",
    "kontextlänge", "kontext", "sequenzlänge", "longueur de séquence", "longueur de contexte",
    "contexte", "độ dài ngữ cảnh", "ngữ cảnh", "độ dài chuỗi",
)
_BATCH_WORDS = (
    "per_device_train_batch_size", "train_micro_batch_size_per_gpu", "micro_batch_size",
    "train_batch_size", "batch_size", "batch size", "batchsize", "micro batch size",
    "micro-batch size", "micro-batch", "microbatch", "micro batch", "bsz", "bs", "batch",
    "批大小", "批量大小", "批次大小", "批量", "batch大小", "배치 사이즈", "배치 크기", "배치",
    "バッチサイズ", "バッチ", "tamaño de lote", "tamaño del lote", "lote", "batchgröße",
    "taille de lot", "taille du batch", "kích thước batch",
)
_JOIN = (
    r"\s?(?:size|length|len|of|is|=|:|为|為|是|는|은|를|을|は|を|が|de|von|~|≈|约|大约|about|around|to|at|auf|à|lên|"
    r"要|改成|改为|改為|设为|设成|调到|到)?\s?"
)


@dataclass(frozen=True, slots=True)
class Dataset:
    """Dataset size: tokens per epoch (given or samples x length), samples and epochs."""

    tokens: float | None = None
    samples: int | None = None
    epochs: float | None = None


_RANK_ANCHORS = ("rank", "lora", "秩", "랭크", "ランク", "=", ":")  # words, or "r=" / "r:"
_RESOLUTION_ANCHORS = ("x", "resolution", "分辨率", "解像度", "해상도")  # 512x512, 512px, or a word
_TOKEN_ANCHORS = ("tok", "词元", "토큰", "トークン")


@functools.lru_cache(maxsize=1)
def _anchors(vocab_id: int, units: tuple[str, ...], epochs: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Words one of which each pattern's match contains (see bot.parse.anchors)."""
    return {
        "seq": anchors(normalise(w) for w in _SEQ_WORDS),
        "batch": anchors(normalise(w) for w in _BATCH_WORDS),
        "samples": anchors(units),
        "epochs": anchors((*epochs, "epoch")),
    }


def _words(vocabulary: Vocabulary) -> dict[str, tuple[str, ...]]:
    return _anchors(id(vocabulary), vocabulary.sample_units, vocabulary.epoch_units)


@functools.lru_cache(maxsize=1)
def _patterns(vocab_id: int, units: tuple[str, ...], epochs: tuple[str, ...]) -> dict[str, re.Pattern[str]]:
    seq_words = phrase_regex([normalise(w) for w in _SEQ_WORDS])
    batch_words = phrase_regex([normalise(w) for w in _BATCH_WORDS])
    return {
        "seq_after": re.compile(rf"(?:{seq_words}){_JOIN}(\d+(?:\.\d+)?)\s?([km])?(?![0-9a-z])"),
        "seq_before": re.compile(
            rf"(\d(?<![0-9.]\d)\d*(?:\.\d+)?)\s?([km])?\s?(?:tokens?\s?|token的)?(?:的)?(?:{seq_words})(?![a-z])"
        ),
        "batch": re.compile(rf"(?:{batch_words}){_JOIN}(\d{{1,5}})(?![0-9.])"),
        "rank": re.compile(
            r"(?:lora_rank|lora_r|lora rank|lora r|lora-r|rank|秩|랭크|ランク)\s?[=:：]?\s?(\d{1,4})(?![0-9])"
            r"|(?<![a-z_])r\s?[=:]\s?(\d{1,4})(?![0-9])"
        ),
        "resolution": re.compile(
            r"(?<![0-9])(\d{3,4})\s?x\s?(\d{3,4})(?![0-9])|(?<![0-9])(\d{3,4})\s?px"
            r"|(?:resolution|分辨率|解像度|해상도)\s?[=:：]?\s?(\d{3,4})"
        ),
        "tokens": re.compile(
            rf"({number_not_after('0-9.')})\s?({MULTIPLIER_RE})?\s?(?:de\s|of\s|d')?"
            r"(?:tokens?|tok(?![a-z])|词元|個?个?token|토큰|トークン)"
        ),
        "samples": re.compile(
            rf"({number_not_after('0-9.')})\s?({MULTIPLIER_RE})?\s?(?:[a-z-]+\s){{0,2}}(?:{phrase_regex(list(units))})"
        ),
        "length": re.compile(r"^.{0,30}?(?:x|\*|of|each|avg|average|平均|每条|각)\s?(\d{2,6})(?![0-9])"),
        "epochs": re.compile(
            rf"(?<![0-9.])(\d+(?:\.\d+)?)\s?(?:{phrase_regex(list(epochs))})"
            r"|(?:num_train_epochs|num_epochs|epochs?)\s?[=:：]\s?(\d+(?:\.\d+)?)"
        ),
    }


def _all(vocabulary: Vocabulary) -> dict[str, re.Pattern[str]]:
    return _patterns(id(vocabulary), vocabulary.sample_units, vocabulary.epoch_units)


def _seq_value(number: str, k: str | None) -> int | None:
    """"8k" is 8,192 tokens and "1M" 1,048,576 (k = 1024, as context sizes are written)."""
    value = float(number) * {"k": K_TOKENS, "m": K_TOKENS * K_TOKENS}.get(k or "", 1)
    return int(value) if MIN_SEQ <= value <= MAX_SEQ else None


def find_seq_len(text: str, vocabulary: Vocabulary) -> tuple[int | None, bool]:
    """Sequence length and whether a "k" was read as 1024."""
    if not has_digit(text) or not has_any(text, _words(vocabulary)["seq"]):
        return None, False
    patterns = _all(vocabulary)
    for key in ("seq_after", "seq_before"):
        for m in patterns[key].finditer(text):
            value = _seq_value(m.group(1), m.group(2))
            if value:
                return value, bool(m.group(2))
    return None, False


def find_batch(text: str, vocabulary: Vocabulary) -> int | None:
    if not has_digit(text) or not has_any(text, _words(vocabulary)["batch"]):
        return None
    for m in _all(vocabulary)["batch"].finditer(text):
        value = int(m.group(1))
        if 1 <= value <= 65536:
            return value
    return None


def find_lora_rank(text: str, vocabulary: Vocabulary) -> int | None:
    if not has_digit(text) or not has_any(text, _RANK_ANCHORS):
        return None
    m = _all(vocabulary)["rank"].search(text)
    return int(m.group(1) or m.group(2)) if m else None


def find_resolution(text: str, vocabulary: Vocabulary) -> int | None:
    if not has_digit(text) or not has_any(text, _RESOLUTION_ANCHORS):
        return None
    for m in _all(vocabulary)["resolution"].finditer(text):
        if m.group(1) and m.group(1) != m.group(2):
            continue  # 1920x1080 is a screen, not a square training resolution
        return int(m.group(1) or m.group(3) or m.group(4))
    return None


def find_dataset(text: str, vocabulary: Vocabulary) -> Dataset:
    """Tokens per epoch, from "1B tokens" or "50k samples x 2048 (tokens)"; plus samples and epochs."""
    if not has_digit(text):
        return Dataset()
    patterns, words = _all(vocabulary), _words(vocabulary)
    tokens, length = None, None
    for m in patterns["tokens"].finditer(text) if has_any(text, _TOKEN_ANCHORS) else ():
        value = scaled(m.group(1), m.group(2))
        if value and value >= DATASET_MIN_TOKENS:
            tokens = value
            break
        if value and length is None:
            length = int(value)
    samples = None
    for m in patterns["samples"].finditer(text) if has_any(text, words["samples"]) else ():
        value = scaled(m.group(1), m.group(2))
        if value and value >= 10:
            samples = int(value)
            after = patterns["length"].search(text[m.end() : m.end() + 40])
            if after:
                length = int(after.group(1))
            break
    epochs = None
    em = patterns["epochs"].search(text) if has_any(text, words["epochs"]) else None
    if em:
        epochs = float(em.group(1) or em.group(2))
    if tokens is None and samples and length:
        tokens = float(samples * length)
    return Dataset(tokens=tokens, samples=samples, epochs=epochs if epochs and epochs <= 1000 else None)
