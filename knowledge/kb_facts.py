"""Fill knowledge answers with current catalog numbers and add fact sentences for GPUs a question names."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from babel.numbers import format_decimal

from knowledge.kb_data import Entry, FactRef, KnowledgeBase
from knowledge.kb_text import normalise_text
from rules.types import GpuSpec, ModelSpec, Offer, Provider

if TYPE_CHECKING:
    from knowledge.snapshot import Snapshot

log = logging.getLogger(__name__)

MAX_NAMED_GPUS = 3  # fact sentences for at most this many named GPUs
MAX_SPAN_TOKENS = 3  # longest token run tried as a GPU name
UNKNOWN = "?"
_BABEL_LOCALE = {"zh-Hans": "zh_Hans_CN"}
_TOKEN = re.compile(r"[a-z0-9][a-z0-9.\-]*")
_PLURAL = re.compile(r"^([a-z]*\d{3,4})s$")  # "3090s", "a100s" -> the card
_SIZE_ONLY = re.compile(r"\d+(gb|g|go|gib)")  # "48gb": a memory size, not a GPU name


@dataclass(frozen=True, slots=True)
class GpuMention:
    """A GPU the question names: one catalog id, or several equally likely ones (a bare "A100")."""

    text: str
    gpu_ids: tuple[str, ...]


def format_number(value: float | int | Decimal, language: str) -> str:
    """Locale-formatted number with at most two decimals ("1,555", "1.555", "112,5")."""
    locale = _BABEL_LOCALE.get(language, language.replace("-", "_"))
    return str(format_decimal(value, format="#,##0.##", locale=locale))


def format_value(value: object, language: str) -> str:
    if value is None:
        return UNKNOWN
    if isinstance(value, bool):
        return "✓" if value else "✗"
    if isinstance(value, int | float | Decimal):
        return format_number(value, language)
    return str(value)


def _catalog_row(snapshot: Snapshot, fact: FactRef) -> GpuSpec | ModelSpec | Provider | None:
    tables: Mapping[str, Mapping[str, GpuSpec | ModelSpec | Provider]] = {"gpu": snapshot.gpus, "model": snapshot.models, "provider": snapshot.providers}
    return tables[fact.kind].get(fact.ref_id)


def fact_value(fact: FactRef, snapshot: Snapshot) -> object:
    """The current value behind a fact, or None when the catalog no longer has it."""
    if fact.kind == "value":
        return fact.value
    row = _catalog_row(snapshot, fact)
    if row is None:
        log.warning("kb fact %s: %s %r not in the catalog", fact.name, fact.kind, fact.ref_id)
        return None
    return getattr(row, fact.field, None)


def fact_label(fact: FactRef, kb: KnowledgeBase, snapshot: Snapshot, language: str) -> str:
    field_label = kb.field_labels.get(fact.field, {}).get(language, fact.field)
    if fact.kind == "value":
        return field_label
    row = _catalog_row(snapshot, fact)
    name = getattr(row, "name", fact.ref_id)
    return f"{name} · {field_label}"


def fill_facts(entry: Entry, kb: KnowledgeBase, snapshot: Snapshot, language: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The entry's answer with every placeholder replaced, and the (label, value) pairs used."""
    values = {f.name: format_value(fact_value(f, snapshot), language) for f in entry.facts}
    text = entry.texts[language].answer.format_map(values)
    pairs = tuple((fact_label(f, kb, snapshot, language), values[f.name]) for f in entry.facts)
    return text, pairs


def find_gpu_mentions(text: str, snapshot: Snapshot) -> tuple[GpuMention, ...]:
    """GPUs named in the text: longest token runs first, resolved by the catalog's GPU index."""
    tokens = [_PLURAL.sub(r"\1", t.group()) for t in _TOKEN.finditer(normalise_text(text))]  # once per token
    mentions: list[GpuMention] = []
    i = 0
    while i < len(tokens):
        for size in range(min(MAX_SPAN_TOKENS, len(tokens) - i), 0, -1):
            span = " ".join(tokens[i : i + size])
            ids = _resolve_span(span, snapshot)
            if ids:
                if all(ids != m.gpu_ids for m in mentions):
                    mentions.append(GpuMention(text=span, gpu_ids=ids))
                i += size
                break
        else:
            i += 1
    return tuple(mentions)


def _plausible_gpu_span(span: str) -> bool:
    """Skip spans that are only small numbers or sizes ("40", "48gb"): fuzzy lookups would invent GPUs."""
    compact = span.replace(" ", "")
    if compact.isdigit():
        return len(compact) >= 4  # "4090", "3090"; not "40" or "80"
    if _SIZE_ONLY.fullmatch(compact):
        return False
    return any(ch.isdigit() for ch in span) or len(span) >= 4


def _resolve_span(span: str, snapshot: Snapshot) -> tuple[str, ...]:
    if not _plausible_gpu_span(span):
        return ()
    try:
        match = snapshot.gpu_index.resolve(span)
    except Exception:  # noqa: BLE001 - resolution is a hint here; a resolver bug must not kill the answer
        log.exception("kb: gpu_index.resolve failed for %r", span)
        return ()
    if getattr(match, "method", "") == "fuzzy":
        return ()  # typo-tolerance is for GPU fields, not for scanning free text
    if match.status == "found" and match.gpu_id:
        return (match.gpu_id,)
    if match.status == "ambiguous":
        return tuple(match.candidates)
    return ()


def gpu_flags(gpu: GpuSpec) -> frozenset[str]:
    """The `gpu_when` properties a GPU has (see kb_data.GPU_WHEN)."""
    flags = {"has_link" if gpu.has_nvlink_class_link else "no_link"}
    flags |= {"has_bridge"} if "bridge" in gpu.scaleup_link.lower() else set()
    flags |= {"no_bf16"} if not gpu.bf16_support else set()
    flags |= {"has_fp8"} if gpu.fp8_support else {"no_fp8"}
    flags |= {"has_mig"} if gpu.mig_instances > 0 else set()
    return frozenset(flags)


def _aspect_variant(aspect: str, gpu: GpuSpec) -> str:
    tests: Mapping[str, bool] = {
        "link": gpu.has_nvlink_class_link,
        "bf16": gpu.bf16_support,
        "fp8": gpu.fp8_support,
        "mig": gpu.mig_instances > 0,
        "multinode": gpu.multinode_fabric,
    }
    if aspect == "link" and "bridge" in gpu.scaleup_link.lower():
        return "bridge"  # e.g. "PCIe 4.0 + NVLink bridge (2-way)": a pair link, bandwidth field is PCIe
    if aspect not in tests:
        return "any"
    return "yes" if tests[aspect] else "no"


def _gpu_values(gpu: GpuSpec, name: str, language: str) -> dict[str, str]:
    raw: dict[str, object] = {
        "gpu": name, "arch": gpu.architecture, "vendor": gpu.vendor, "link": gpu.scaleup_link,
        "link_gbs": gpu.scaleup_bw_gbs, "vram_gb": gpu.vram_gb, "memory_type": gpu.memory_type,
        "bw_gbs": gpu.memory_bandwidth_gbs, "bf16_tflops": gpu.bf16_dense_tflops,
        "fp16_tflops": gpu.fp16_dense_tflops, "fp8_tflops": gpu.fp8_dense_tflops,
        "fp32_tflops": gpu.fp32_tflops, "tdp_w": gpu.tdp_w, "mig": gpu.mig_instances,
        "stack": gpu.software_stack,
    }
    return {k: format_value(v, language) for k, v in raw.items()}


def _common_name(gpus: list[GpuSpec]) -> str:
    """What equally likely candidates share by name: "A100 SXM 80GB" + "A100 PCIe 40GB" -> "A100"."""
    prefix = os.path.commonprefix([g.name for g in gpus])
    return prefix.rsplit(" ", 1)[0].strip() if " " in prefix else prefix.strip() or gpus[0].name


def gpu_sentences(entry: Entry, kb: KnowledgeBase, mentions: tuple[GpuMention, ...], snapshot: Snapshot, language: str) -> tuple[str, ...]:
    """One sentence per (named GPU, aspect the entry asks for); ambiguous names only when all candidates agree.

    A GPU whose catalog facts the answer already states gets no sentence, except for `buy_rent`: the answer's
    example numbers (purchase price, TDP) are not the break-even that sentence works out from today's prices."""
    sentences: list[str] = []
    stated = {f.ref_id for f in entry.facts if f.kind == "gpu"}  # the answer already covers these
    for mention in mentions[:MAX_NAMED_GPUS]:
        named = [snapshot.gpus[g] for g in mention.gpu_ids if g in snapshot.gpus]
        for aspect in entry.gpu_aspects:
            gpus = named if aspect == "buy_rent" else [g for g in named if g.id not in stated]
            if not gpus:
                continue
            name = gpus[0].name if len(gpus) == 1 else _common_name(gpus)
            filled = {kb.aspects[aspect][variant][language].format_map(values)
                      for variant, values in (_aspect_values(aspect, g, name, snapshot, language) for g in gpus)}
            if len(filled) == 1:
                sentences.append(filled.pop())
    return tuple(sentences)


def _aspect_values(aspect: str, gpu: GpuSpec, name: str, snapshot: Snapshot, language: str) -> tuple[str, dict[str, str]]:
    """An aspect's variant and the values its sentence is filled with: catalog facts, or for `buy_rent` prices."""
    if aspect == "buy_rent":
        return buy_rent_values(gpu, name, snapshot, language)
    return _aspect_variant(aspect, gpu), _gpu_values(gpu, name, language)


# What kind of market the cheapest rental comes from (issue 16: every price says so), per reply language.
_MARKET_WORDS: Mapping[str, Mapping[str, str]] = {
    "on-demand": {"en": "on-demand", "zh-Hans": "按需", "ko": "온디맨드", "ja": "オンデマンド", "es": "bajo demanda",
                  "de": "On-Demand", "fr": "à la demande", "vi": "theo nhu cầu"},
    "marketplace": {"en": "marketplace median", "zh-Hans": "市场平台中位价", "ko": "마켓플레이스 중앙값",
                    "ja": "マーケットプレイス中央値", "es": "mediana de marketplace", "de": "Marktplatz-Median",
                    "fr": "médiane de place de marché", "vi": "giá trung vị chợ GPU"},
}


def cheapest_rental(snapshot: Snapshot, gpu_id: str) -> Offer | None:
    """The lowest $/GPU-hour offer of the GPU that is always available (tier on-demand: no spot, no auction); on a
    tie the first in the snapshot's order, the one the price and specs cards show (bot.render.market.summarise)."""
    offers = [o for o in snapshot.offers_by_gpu.get(gpu_id, ()) if o.tier == "on-demand"]
    return min(offers, key=lambda o: o.usd_per_gpu_hour, default=None)


def buy_rent_values(gpu: GpuSpec, name: str, snapshot: Snapshot, language: str) -> tuple[str, dict[str, str]]:
    """The `buy_rent` aspect's variant and values: owning one card against renting the same card on demand.

    Break-even by rules.market.cost.break_even (purchase net of resale after the ownership period, power at the
    rule tables' $/kWh with the host and cooling overhead): `pays` when it is worked out, `never` when renting
    costs less than the power alone, `no_rental` / `no_price` / `unknown` when a price is missing.
    """
    from knowledge.rule_tables import load_rule_tables
    from rules.market.cost import break_even

    tables = load_rule_tables()
    offer = cheapest_rental(snapshot, gpu.id)
    raw: dict[str, object] = {
        "gpu": name, "tdp_w": gpu.tdp_w, "years": tables.ownership_years, "kwh_usd": tables.power_usd_per_kwh,
        "purchase_usd": gpu.purchase_usd,
        # The catalog's purchase prices are launch list prices (knowledge/data/SOURCES.md): their date, else the launch year.
        "purchase_date": gpu.purchase_date.isoformat() if gpu.purchase_date else str(gpu.release_year or UNKNOWN),
    }
    if offer is not None:
        provider = snapshot.providers.get(offer.provider_id)
        kind = "marketplace" if offer.market == "marketplace" else "on-demand"
        raw.update({"rent_usd": offer.usd_per_gpu_hour, "rent_provider": provider.name if provider else offer.provider_id,
                    "rent_date": offer.observed_at.date().isoformat(),
                    "rent_market": _MARKET_WORDS[kind].get(language, _MARKET_WORDS[kind]["en"])})
    if gpu.purchase_usd is None:
        variant = "no_price" if offer is not None else "unknown"
    elif offer is None:
        variant = "no_rental"
    else:
        numbers = break_even(gpu, offer, tables)
        if numbers is None:
            variant = "never"
        else:
            variant = "pays"
            raw.update({"break_even_hours": round(numbers["break_even_hours"]),
                        "utilisation_pct": numbers["utilisation_3y_pct"]})
    return variant, {k: format_value(v, language) for k, v in raw.items()}
