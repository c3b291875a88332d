"""Issue 15's mechanisms on requests written for this table (not taken from the request corpus).

Each line of tests/cases/parse_requests.jsonl is a request in the words people use (counts after the
name, machines times GPUs, memory-only GPUs, RL and pretraining by context, follow-ups, serving numbers)
and the fields a careful reader takes from it. Fields as in parse_cases.jsonl, plus `gpu_classes`: the
[memory_gb, segment] of each GPU described by memory or class only, and `gpu_count_range`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.parse import Ask, parse
from test_parse import catalog_snapshot  # noqa: F401  (fixture)
from test_parse_cases import check_field, load_cases

CASES = Path(__file__).parent / "cases" / "parse_requests.jsonl"


def _classes(ask: Ask) -> list[list[Any]]:
    return [[g.memory_gb, g.segment] for g in ask.gpus if g.status == "class"]


def _right(ask: Ask, field: str, want: Any) -> bool:
    if field == "gpu_classes":
        return _classes(ask) == want
    if field == "gpu_count_range":
        return (list(ask.gpu_count_range) if ask.gpu_count_range else None) == want
    if field == "gpus":  # the named GPUs; memory-only ones are checked by gpu_classes
        named = Ask(ask.intent, ask.language, ask.text, gpus=tuple(g for g in ask.gpus if g.status != "class"))
        return check_field(named, field, want)
    if field in ("follow_up",):
        return getattr(ask, field) is want
    return check_field(ask, field, want)


def test_issue15_requests(catalog_snapshot: Any) -> None:  # noqa: F811
    cases = load_cases(CASES)
    assert len(cases) >= 50
    misses = []
    for case in cases:
        ask = parse(case["text"], snapshot=catalog_snapshot)
        wrong = {f: w for f, w in {"language": case["lang"], **case["expect"]}.items() if not _right(ask, f, w)}
        if wrong:
            misses.append(f"{case['id']}: {case['text'][:60]!r} want {wrong}")
    assert not misses, "\n".join(misses)


def test_unknown_model_asks_for_its_size_with_the_closest_presets(catalog_snapshot: Any) -> None:  # noqa: F811
    ask = parse("what GPU to fine-tune Vistral?", snapshot=catalog_snapshot)
    assert ask.model is not None and ask.model.model_id is None and ask.params_b is None
    assert ("model_unknown", "vistral") in ask.clarifications
    assert ask.model.candidates[0] == "mistral-7b"  # the nearest spelling the catalog holds, offered, not taken
    assert ("model_size_missing", "vistral") in ask.clarifications  # for readers without the new kind


def test_a_size_in_the_text_wins_over_a_guess(catalog_snapshot: Any) -> None:  # noqa: F811
    ask = parse("serve our in-house 12B model to 40 people", snapshot=catalog_snapshot)
    assert ask.params_b == 12 and not ask.clarifications
    ask = parse("Swallow 70BをQLoRAで追加学習したい", snapshot=catalog_snapshot)
    assert ask.params_b == 70 and ask.model is not None and ask.model.model_id is None
    assert "not in the catalog" in ask.assumed["model"]


def test_workload_kinds_map_onto_the_engine_methods(catalog_snapshot: Any) -> None:  # noqa: F811
    from bot.parse import ask_to_workload

    def method(text: str) -> str | None:
        return ask_to_workload(parse(text, snapshot=catalog_snapshot), catalog_snapshot).method

    assert method("GRPO on Qwen2.5 7B with 4 H100") == "full"  # TRL trains every weight without PEFT
    assert method("DPO with LoRA on Llama 3 8B") == "lora"
    # a diffusion model keeps its method, with family "diffusion" beside it (the engine's diffusion family)
    assert method("Flux LoRA training on a 4090") == "lora"
    assert ask_to_workload(parse("Flux LoRA training on a 4090", snapshot=catalog_snapshot),
                           catalog_snapshot).family == "diffusion"
    # serving and running reach the engine as themselves (issue 14), no longer as its old "inference"
    assert method("serve Llama 3 8B to 50 users") == "serving"
    assert method("can a 4090 run Qwen2.5 14B?") == "running"
