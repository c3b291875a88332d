"""Score today's parser on the request corpus (issue 15): accuracy per field, per language and per kind.

    python tests/score_requests.py            # the dev part (tune against this one)
    python tests/score_requests.py --final    # the held-out part: score it once, never tune to it
    python tests/score_requests.py --no-misses --json out.json

Each corpus line holds only the fields its text decides, written by a human reader (see
tests/cases/requests_SOURCE.md). A field the parser has no place for yet counts as wrong
whenever a label sets it. How parser output is read against each label:

- intent, model (`ask.model.model_id`), gpu_count, deadline_hours: equal (deadline within 1 %).
- params_b: within 15 % of the label ("7B" names a 7.25B preset).
- method: equal. The parser's "inference" is neither "serving" nor "running" and its "diffusion"
  (diffusion training, LoRA or full undecided) is not "lora"; so both count as wrong until the
  parser says which. A label `null` means the text asks for no workload (a price or specs question):
  right only when the parser set no method.
- family "diffusion": `ask.family` if the parser has it, else the parser's method "diffusion" or a
  model it resolved whose catalog kind is diffusion.
- gpus: compared as a multiset of mentions, order ignored. A catalog id must be a found mention
  with that id; {"ambiguous": q} an ambiguous mention of q; {"unknown": q} a GPU the catalog
  does not hold: a "none" mention of q, or a found id that spells q (if the catalog grows);
  {"class": {memory_gb, segment}} a mention (or `ask.gpu_classes`) carrying `memory_gb` and
  `segment` equal to the label's; for segment "apple" a found catalog GPU of vendor Apple with
  that memory also counts. Resolving "a 24GB card" to one specific 24 GB GPU is a guess, so wrong.
  `[]` means the text names no GPU.
- gpu_count {"range": [lo, hi]}: `ask.gpu_count_range` equal to (lo, hi).
- concurrency, requests_per_s, context_tokens, tokens_per_s, tokens_per_s_scope, priority,
  follow_up: the `Ask` attributes of those names (issue 14/15 fields); numbers within 2 %
  (context 5 %: "2k" may be read as 2000 or 2048).
- quantization: `ask.quantization`, else `ask.precision` (where 4-bit lands today). A label "int4"
  (a plain "4-bit"/"Q4", format unsaid) accepts int4 or nf4; a label "gguf" any gguf-* value.
- engine: `ask.engine`, else `ask.framework` (hf -> transformers).
- budget_usd, budget_usd_per_hour: USD, or [amount, currency] converted with the parser's own
  dated rates (bot/parse/lexicon/currency.json); within 0.5 %.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CASES = Path(__file__).parent / "cases"
DEV = CASES / "requests_dev.jsonl"
FINAL = CASES / "requests_final.jsonl"

LANGS = ("en", "zh-Hans", "zh-Hant", "ko", "ja", "es", "de", "fr", "vi")
FIELDS = (
    "intent",
    "params_b",
    "model",
    "method",
    "family",
    "gpus",
    "gpu_count",
    "concurrency",
    "requests_per_s",
    "context_tokens",
    "tokens_per_s",
    "tokens_per_s_scope",
    "quantization",
    "engine",
    "priority",
    "budget_usd",
    "budget_usd_per_hour",
    "deadline_hours",
    "follow_up",
)
PARAMS_TOLERANCE = 0.15
NUMBER_TOLERANCE = {"context_tokens": 0.05, "deadline_hours": 0.01}
DEFAULT_NUMBER_TOLERANCE = 0.02
MONEY_TOLERANCE = Decimal("0.005")
ENGINE_ALIASES = {
    "hf": "transformers",
    "llamacpp": "llama.cpp",
    "trtllm": "tensorrt-llm",
    "lm-studio": "lmstudio",
}


def is_final(case_id: str) -> bool:
    """The split rule, fixed before anything was scored: a quarter of ids by their sha256."""
    return int(hashlib.sha256(case_id.encode("utf-8")).hexdigest(), 16) % 4 == 0


def load_cases(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def load_snapshot() -> Any:
    """The catalog from the reviewed CSV files, as tests/test_parse.py builds it (no database)."""
    from knowledge.load import DATA_DIR, read_rows
    from knowledge.resolve import normalise_gpu_name
    from knowledge.snapshot import build_snapshot, gpu_spec, model_spec
    from knowledge.tables import GpuAliasBase, GpuBase, ModelAliasBase, ModelPresetBase

    gpus = [gpu_spec(r) for _, r in read_rows(DATA_DIR / "gpus.csv", GpuBase)]
    gpu_aliases = [
        r.model_copy(update={"alias": normalise_gpu_name(r.alias)})
        for _, r in read_rows(DATA_DIR / "gpu_aliases.csv", GpuAliasBase)
    ]
    models = [model_spec(r) for _, r in read_rows(DATA_DIR / "models.csv", ModelPresetBase)]
    model_aliases = [r for _, r in read_rows(DATA_DIR / "model_aliases.csv", ModelAliasBase)]
    return build_snapshot(
        gpus=gpus, models=models, gpu_aliases=gpu_aliases, model_aliases=model_aliases
    )


def _squash(text: str | None) -> str:
    return "".join(ch for ch in (text or "").lower() if ch.isalnum())


def _close(got: Any, want: float, tolerance: float) -> bool:
    return (
        isinstance(got, (int, float))
        and not isinstance(got, bool)
        and abs(got - want) <= tolerance * abs(want) + 1e-9
    )


def _usd(want: Any) -> Decimal:
    if isinstance(want, list):
        from bot.parse.vocabulary import load_vocabulary

        amount, code = want
        return Decimal(str(amount)) * load_vocabulary().usd_per_unit[code]
    return Decimal(str(want))


# --- reading one field of the parse -----------------------------------------------------------


def got_method(ask: Any) -> Any:
    return ask.method


def got_family(ask: Any, snapshot: Any) -> str | None:
    family = getattr(ask, "family", None)
    if family is not None:
        return str(family)
    model_id = ask.model.model_id if ask.model else None
    model = snapshot.models.get(model_id) if model_id else None
    if ask.method == "diffusion" or (model is not None and model.kind == "diffusion"):
        return "diffusion"
    return None


def got_quantization(ask: Any) -> str | None:
    return getattr(ask, "quantization", None) or ask.precision


def got_engine(ask: Any) -> str | None:
    engine = getattr(ask, "engine", None) or ask.framework
    return ENGINE_ALIASES.get(engine, engine) if engine else None


def got_value(ask: Any, name: str, snapshot: Any) -> Any:
    """The parser's value for a label field, in the label's terms (for the misses list)."""
    if name == "model":
        return ask.model.model_id if ask.model else None
    if name == "gpus":
        return [_describe_mention(g) for g in ask.gpus] + [
            {"class": c} for c in getattr(ask, "gpu_classes", ()) or ()
        ]
    if name == "gpu_count":
        rng = getattr(ask, "gpu_count_range", None)
        return {"range": list(rng)} if rng else ask.gpu_count
    if name == "family":
        return got_family(ask, snapshot)
    if name == "quantization":
        return got_quantization(ask)
    if name == "engine":
        return got_engine(ask)
    if name == "budget_usd":
        return None if ask.budget.usd_total is None else float(ask.budget.usd_total)
    if name == "budget_usd_per_hour":
        return None if ask.budget.usd_per_hour is None else float(ask.budget.usd_per_hour)
    return getattr(ask, name, None)


def _describe_mention(g: Any) -> Any:
    if g.status == "found":
        return g.gpu_id
    if getattr(g, "memory_gb", None) is not None or getattr(g, "segment", None) is not None:
        return {
            "class": {
                "memory_gb": getattr(g, "memory_gb", None),
                "segment": getattr(g, "segment", None),
            }
        }
    return {g.status: g.query}


# --- judging one field --------------------------------------------------------------------------


def _mention_matches(label: Any, mention: Any, snapshot: Any) -> bool:
    status, gpu_id = mention.status, mention.gpu_id
    if isinstance(label, str):
        return status == "found" and gpu_id == label
    if "ambiguous" in label:
        return status == "ambiguous" and _squash(label["ambiguous"]) in _squash(mention.query)
    if "unknown" in label:
        want = _squash(label["unknown"])
        if status == "none":
            return want in _squash(mention.query) or _squash(mention.query) in want
        return status == "found" and want in _squash(gpu_id)
    wanted = label["class"]
    memory, segment = wanted.get("memory_gb"), wanted.get("segment")
    if (
        getattr(mention, "memory_gb", None) is not None
        or getattr(mention, "segment", None) is not None
    ):
        return (
            getattr(mention, "memory_gb", None) == memory
            and getattr(mention, "segment", None) == segment
        )
    if segment == "apple" and status == "found" and gpu_id in snapshot.gpus:
        spec = snapshot.gpus[gpu_id]
        return spec.vendor.lower() == "apple" and (memory is None or abs(spec.vram_gb - memory) < 1)
    return False


def _class_matches(label: Any, gpu_class: Any) -> bool:
    if not isinstance(label, dict) or "class" not in label:
        return False
    read = (
        gpu_class
        if isinstance(gpu_class, dict)
        else {
            "memory_gb": getattr(gpu_class, "memory_gb", None),
            "segment": getattr(gpu_class, "segment", None),
        }
    )
    return read.get("memory_gb") == label["class"].get("memory_gb") and read.get(
        "segment"
    ) == label["class"].get("segment")


def gpus_right(want: list[Any], ask: Any, snapshot: Any) -> bool:
    mentions = list(ask.gpus)
    classes = list(getattr(ask, "gpu_classes", ()) or ())
    if len(mentions) + len(classes) != len(want):
        return False
    for label in want:  # greedy multiset match; labels within one request never overlap
        index = next(
            (i for i, m in enumerate(mentions) if _mention_matches(label, m, snapshot)), None
        )
        if index is not None:
            mentions.pop(index)
            continue
        index = next((i for i, c in enumerate(classes) if _class_matches(label, c)), None)
        if index is None:
            return False
        classes.pop(index)
    return True


def field_right(name: str, want: Any, ask: Any, snapshot: Any) -> bool:
    if name == "gpus":
        return gpus_right(want, ask, snapshot)
    if name == "gpu_count" and isinstance(want, dict):
        rng = getattr(ask, "gpu_count_range", None)
        return rng is not None and list(rng) == list(want["range"])
    got = got_value(ask, name, snapshot)
    if want is None:
        return got in (None, [], False)
    if name == "params_b":
        return _close(got, want, PARAMS_TOLERANCE)
    if name in ("budget_usd", "budget_usd_per_hour"):
        target = _usd(want)
        return got is not None and abs(Decimal(str(got)) - target) <= max(
            Decimal("0.01"), target * MONEY_TOLERANCE
        )
    if name == "quantization":
        return (
            got == want
            or (want == "int4" and got in ("int4", "nf4"))
            or (want == "gguf" and str(got).startswith("gguf"))
        )
    if isinstance(want, bool):
        return got is want
    if isinstance(want, (int, float)) and name != "gpu_count":
        return _close(got, want, NUMBER_TOLERANCE.get(name, DEFAULT_NUMBER_TOLERANCE))
    return bool(got == want)


# --- the run ----------------------------------------------------------------------------------


@dataclass
class Tally:
    """Right/total counts by field, language and kind, plus the misses."""

    field_ok: Counter[str] = field(default_factory=Counter)
    field_all: Counter[str] = field(default_factory=Counter)
    lang_fields: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    lang_cases: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    kind_fields: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    lang_field: dict[tuple[str, str], Counter[str]] = field(
        default_factory=lambda: defaultdict(Counter)
    )
    language_detected: Counter[str] = field(default_factory=Counter)
    misses: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self, case: dict[str, Any], wrong: list[str], got: dict[str, Any], detected: str
    ) -> None:
        lang = case["lang"]
        for name in case["expect"]:
            ok = name not in wrong
            self.field_all[name] += 1
            self.field_ok[name] += ok
            self.lang_fields[lang]["all"] += 1
            self.lang_fields[lang]["ok"] += ok
            self.lang_field[(lang, name)]["all"] += 1
            self.lang_field[(lang, name)]["ok"] += ok
            for kind in case.get("kinds", []):
                self.kind_fields[kind]["all"] += 1
                self.kind_fields[kind]["ok"] += ok
        self.lang_cases[lang]["all"] += 1
        self.lang_cases[lang]["ok"] += not wrong
        self.language_detected["all"] += 1
        self.language_detected["ok"] += detected == lang
        if wrong:
            self.misses.append(
                {
                    "id": case["id"],
                    "text": case["text"],
                    "want": {f: case["expect"][f] for f in wrong},
                    "got": got,
                }
            )


def score(cases: Iterable[dict[str, Any]], snapshot: Any) -> Tally:
    from bot.parse import parse

    tally = Tally()
    for case in cases:
        ask = parse(case["text"], snapshot=snapshot)
        wrong = [
            name
            for name, want in case["expect"].items()
            if not field_right(name, want, ask, snapshot)
        ]
        got = {name: got_value(ask, name, snapshot) for name in wrong}
        tally.add(case, wrong, got, ask.language)
    return tally


def _pct(ok: int, total: int) -> str:
    return f"{ok:4}/{total:<4} {100 * ok / total:5.1f}%" if total else "   -/-          "


def report(title: str, tally: Tally, *, misses: bool) -> None:
    total_ok, total_all = sum(tally.field_ok.values()), sum(tally.field_all.values())
    print(
        f"== {title}: {sum(c['all'] for c in tally.lang_cases.values())} requests, "
        f"{total_all} labelled fields, {100 * total_ok / total_all:.1f}% of fields right =="
    )
    print("\nby field:")
    for name in FIELDS:
        if tally.field_all[name]:
            print(f"  {name:20} {_pct(tally.field_ok[name], tally.field_all[name])}")
    print("\nby language (fields right | requests with every field right):")
    for lang in LANGS:
        if lang in tally.lang_cases:
            f, c = tally.lang_fields[lang], tally.lang_cases[lang]
            print(f"  {lang:8} {_pct(f['ok'], f['all'])} | {_pct(c['ok'], c['all'])}")
    core = ("intent", "params_b", "method", "gpus", "gpu_count")
    print("\ncore fields by language (% right):")
    print("  " + " " * 8 + "".join(f"{n:>11}" for n in core))
    for lang in LANGS:
        if lang in tally.lang_cases:
            cells = []
            for n in core:
                c = tally.lang_field[(lang, n)]
                cells.append(f"{100 * c['ok'] / c['all']:10.0f}%" if c["all"] else f"{'-':>11}")
            print(f"  {lang:8}" + "".join(cells))
    print("\nby kind (fields right):")
    for kind in sorted(tally.kind_fields):
        k = tally.kind_fields[kind]
        print(f"  {kind:14} {_pct(k['ok'], k['all'])}")
    d = tally.language_detected
    print(f"\nlanguage detected (not in the totals): {_pct(d['ok'], d['all'])}")
    if misses:
        print(f"\nmisses ({len(tally.misses)} requests):")
        for m in tally.misses:
            print(
                f"  {m['id']}: {m['text'][:80]!r}\n      want {json.dumps(m['want'], ensure_ascii=False)}"
                f"\n      got  {json.dumps(m['got'], ensure_ascii=False, default=str)}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--final", action="store_true", help="score the held-out part (once; never tune to it)"
    )
    parser.add_argument("--no-misses", action="store_true", help="print only the tables")
    parser.add_argument("--json", type=Path, help="also write the tallies as JSON to this file")
    args = parser.parse_args(argv)
    path = FINAL if args.final else DEV
    tally = score(load_cases(path), load_snapshot())
    report("final (held out)" if args.final else "dev", tally, misses=not args.no_misses)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "part": "final" if args.final else "dev",
                    "fields": {
                        n: [tally.field_ok[n], tally.field_all[n]]
                        for n in FIELDS
                        if tally.field_all[n]
                    },
                    "languages": {
                        lang: [c["ok"], c["all"]] for lang, c in tally.lang_fields.items()
                    },
                    "misses": tally.misses,
                },
                ensure_ascii=False,
                indent=1,
                default=str,
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
