"""The what-if buttons of a serving card offer only what the card in question can do."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def _labels(text: str, snapshot: Any) -> set[str]:
    from bot.answer.pipeline import answer

    reply = answer(text, snapshot=snapshot, now=NOW, lang="en")
    return {str(e.get("action_id")) for block in reply.blocks if block.get("type") == "actions"
            for e in block.get("elements", ())}


def test_no_fp8_what_if_on_a_card_without_fp8(snapshot: Any) -> None:
    """The RTX 3090 (Ampere) has no FP8 tensor cores (NVIDIA Ampere GA102 whitepaper): no 'What if FP8'."""
    assert "whatif.quant.fp8" not in _labels("can I run Qwen2.5-72B in 4bit on two 3090s", snapshot)


def test_fp8_what_if_on_a_card_with_fp8(snapshot: Any) -> None:
    """The H100 has FP8 (Hopper): serving Llama 3 8B there in BF16 offers the FP8 what-if."""
    assert "whatif.quant.fp8" in _labels("serve llama 3 8b on one H100 in bf16", snapshot)


def _buttons(text: str, snapshot: Any) -> dict[str, Any]:
    from bot.answer.pipeline import answer

    reply = answer(text, snapshot=snapshot, now=NOW, lang="en")
    return {str(e.get("action_id")): e for block in reply.blocks if block.get("type") == "actions"
            for e in block.get("elements", ())}


def test_a_run_read_from_no_training_word_offers_the_fine_tune_instead(snapshot: Any) -> None:
    """'Gemma 2B on a T4' names no workload: running is assumed (parse), and one button sizes a LoRA fine-tune of
    the same model on the same card; pressing it answers a LoRA card for one T4 with no serving fields left."""
    from bot.answer.pipeline import apply_action

    button = _buttons("Gemma 2B on a T4", snapshot)["whatif.method.lora"]
    assert button["text"]["text"] == "Fine-tune it instead (LoRA)"
    reply = apply_action("whatif.method.lora", button["value"], snapshot=snapshot, lang="en", now=NOW)
    assert reply.kind == "recommendation"
    assert reply.verdict is not None and reply.verdict.assumptions["method"] == "lora"
    workload = reply.verdict.workload
    assert workload.gpu == "t4" and workload.quantization is None and workload.context_tokens is None


def test_no_fine_tune_button_when_running_was_asked(snapshot: Any) -> None:
    """'run' was said: nothing was assumed, so the card does not second-guess it."""
    assert "whatif.method.lora" not in _buttons("can I run Gemma 2B on a T4?", snapshot)


def test_plans_that_sustain_the_rate_asked_for_rank_first(snapshot: Any) -> None:
    """200 requests/s is 40,600 output tokens/s in all (tests/test_parse.py): the cheapest-per-token card that
    sustains it comes first, never a cheaper one that falls short of it (a V100 at 779 tokens/s was the pick)."""
    from bot.answer.pipeline import answer

    reply = answer("Best GPU to serve Mistral 7B at 200 requests per second?", snapshot=snapshot, now=NOW, lang="en")
    assert reply.verdict is not None
    top = reply.verdict.options[0]
    assert top.throughput is not None and top.throughput.output_tokens_per_s >= 40_600
    assert not any(f.code == "serving.target_missed" for f in reply.verdict.findings)


def test_a_total_rate_is_met_by_copies_of_the_smallest_setup(snapshot: Any) -> None:
    """40,600 tokens/s in all at full load: each GPU's smallest setup copied until the copies' sum meets it
    (copies = ceil(target / one copy's rate)), priced per copy, launched with vLLM's --data-parallel-size for
    the copies one 8-GPU server holds; never beyond 64 GPUs."""
    import math

    from bot.answer.pipeline import answer

    reply = answer("Best GPU to serve Mistral 7B at 200 requests per second?", snapshot=snapshot, now=NOW, lang="en")
    verdict = reply.verdict
    assert verdict is not None
    top = verdict.options[0]
    note = next(f for f in verdict.findings if f.code == "serving.replicas")
    n = note.numbers
    assert n["replicas"] == top.replicas > 1 and top.count == top.replicas * n["gpus"] <= 64
    assert n["replicas"] == math.ceil(40_600 / n["each_tokens_per_s"])
    assert n["per_server"] == min(top.replicas, 8 // n["gpus"]) and n["servers"] == math.ceil(top.replicas / n["per_server"])
    argv = verdict.command.argv if verdict.command is not None else ()
    assert argv[argv.index("--data-parallel-size") + 1] == str(n["per_server"])
    for option in verdict.options:
        assert option.count <= 64 and option.throughput is not None
        assert option.throughput.output_tokens_per_s >= 40_600


def test_compare_top_two_answers_for_the_two_plans_the_card_shows(snapshot: Any) -> None:
    """The button carries each GPU's count (state `n`): the comparison sizes the same plans, not each card's own
    fewest (a what-if that lost the counts compared other hardware than the card listed)."""
    import json

    from bot.answer.pipeline import answer, apply_action

    reply = answer("serve Llama 3.1 70B to 4 users", snapshot=snapshot, now=NOW, lang="en")
    assert reply.verdict is not None
    first, second = reply.verdict.options[:2]
    value = json.loads(_buttons("serve Llama 3.1 70B to 4 users", snapshot)["compare.top2"]["value"])
    assert value["g"] == [first.gpu_id, second.gpu_id]
    assert value["n"] == {first.gpu_id: first.count, second.gpu_id: second.count}
    compared = apply_action("compare.top2", json.dumps(value), snapshot=snapshot, lang="en", now=NOW)
    text = json.dumps(compared.blocks, ensure_ascii=False)
    for option in (first, second):
        assert f"*{snapshot.gpus[option.gpu_id].name}*: fits on {option.count}× GPU" in text


def test_a_button_with_bad_counts_is_out_of_date_not_an_error(snapshot: Any) -> None:
    import json

    from bot.answer.pipeline import apply_action

    state = {"v": 1, "i": "compare", "g": ["h100-sxm-80gb", "a100-sxm4-80gb"], "w": {"params_b": 8.0}}
    for bad in ({"h100-sxm-80gb": 0}, {"h100-sxm-80gb": 1000}, {"h100-sxm-80gb": "2"}, ["h100-sxm-80gb"]):
        reply = apply_action("compare.top2", json.dumps({**state, "n": bad}), snapshot=snapshot, lang="en", now=NOW)
        assert reply.kind == "error" and "out of date" in json.dumps(reply.blocks).lower()


def test_the_launch_line_names_the_option_it_is_for_when_the_named_cards_fall_short(snapshot: Any) -> None:
    """2x RTX 4090 do not hold Llama 3.1 70B for 4 users even in AWQ 4-bit (25.1 GiB a card against 22.2): the
    launch line is the first option's, and its title says which."""
    import json

    from bot.answer.pipeline import answer

    reply = answer("serve Llama 3.1 70B on 2x RTX 4090 for 4 users", snapshot=snapshot, now=NOW, lang="en")
    assert reply.verdict is not None and reply.verdict.pinned is not None and not reply.verdict.pinned.fits
    top, command = reply.verdict.options[0], reply.verdict.command
    assert command is not None and (command.gpu, command.gpus) == (top.gpu_id, top.count)
    name = snapshot.gpus[top.gpu_id].name
    assert f"*Launch it on the first option ({top.count}× {name})*" in json.dumps(reply.blocks, ensure_ascii=False)
    fits = answer("can I run Llama 3 8B on my RTX 4090?", snapshot=snapshot, now=NOW, lang="en")
    assert "*Launch it*" in json.dumps(fits.blocks, ensure_ascii=False)
