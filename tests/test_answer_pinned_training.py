"""Training on the user's own card: say when only a lighter method fits it, and when a 'yes' needs offload.

Expected fits are arithmetic, not the card's output: Mistral 7B (7.25B parameters) in BF16 is 7.25e9 x 2 B =
13.5 GiB of frozen weights alone, more than a 12 GB RTX 3060 holds, so LoRA cannot fit; in NF4 (4.127 bits,
QLoRA paper §3) they are 3.5 GiB, leaving room for adapters and activations. Llama 3.1 70B in BF16 is 131.4 GiB:
two 24 GB cards (45.6 GiB usable) can hold it only with most of it offloaded.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.answer.pipeline import answer

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def _finding(reply: Any, code: str) -> Any:
    return next((f for f in reply.verdict.findings if f.code == code), None)


def test_lora_that_does_not_fit_names_qlora_that_does(snapshot: Any) -> None:
    reply = answer("Mistral 7B mit LoRA auf einer RTX 3060 12GB feinabstimmen", snapshot=snapshot, now=NOW)
    pinned = _finding(reply, "fit.pinned")
    assert pinned.outcome == "fail" and pinned.numbers["needed_gib"] > 12.0
    lighter = _finding(reply, "pinned.method_fits")
    assert lighter is not None and lighter.numbers["method"] == "qlora" and lighter.numbers["gpus"] == 1
    assert 3.5 < lighter.numbers["needed_gib"] <= 12.0 * 0.95
    text = reply.terminal().splitlines()
    assert any(line.startswith("💡 Mit QLoRA passt es auf 1× GeForce RTX 3060 12GB") for line in text[:6])


def test_a_plan_that_fits_needs_no_lighter_method(snapshot: Any) -> None:
    reply = answer("QLoRA llama 3 8b on my 4090", snapshot=snapshot, now=NOW)
    assert _finding(reply, "fit.pinned").outcome == "pass"
    assert _finding(reply, "pinned.method_fits") is None


def test_a_yes_that_needs_offload_says_so_first(snapshot: Any) -> None:
    reply = answer("LoRA llama 3.1 70b on 2x 3090", snapshot=snapshot, now=NOW)
    pinned = _finding(reply, "fit.pinned")
    assert pinned.outcome == "pass" and pinned.numbers["offload_gib"] * 2 > 131.4 - 2 * 22.8
    first = reply.terminal().splitlines()[3]
    assert first.startswith("⚠️ Only with ") and "offload" in first and not first.startswith("Yes")
