"""What a card says to someone who names the cards they have ("I have 2x 3090"): about those cards."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.answer.pipeline import answer

NOW = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
PAIR = "I have 2x 3090, can I fine-tune llama 3.1 70b with qlora?"


def _findings(reply: Any, code: str) -> list[Any]:
    assert reply.verdict is not None  # the card's findings and each shown option's
    every = list(reply.verdict.findings) + [f for o in reply.verdict.options for f in o.findings]
    return [f for f in every if f.code == code]


def test_buying_is_priced_for_the_cards_named_not_a_wider_plan(snapshot: Any) -> None:
    reply = answer(PAIR, snapshot=snapshot, now=NOW, lang="en")
    found = _findings(reply, "buy.vs_rent")
    assert found and {f.numbers["gpus"] for f in found} == {2}  # was 4x: the alternatives' plan for the card
    new = next(f for f in found if f.numbers["price_basis"] == "new")
    assert new.numbers["purchase_usd"] == 2 * new.numbers["unit_price_usd"]


def test_a_bridged_pair_is_not_told_it_has_no_nvlink(snapshot: Any) -> None:
    reply = answer(PAIR, snapshot=snapshot, now=NOW, lang="en")
    bridge = _findings(reply, "link.bridge")
    assert bridge and bridge[0].numbers["link_gbs"] == snapshot.gpus["rtx-3090"].scaleup_bw_gbs
    assert not _findings(reply, "link.pcie")
    text = str(reply.blocks)
    assert "without NVLink" not in text and "with the bridge fitted" in text


def test_one_card_is_about_the_card_named(snapshot: Any) -> None:
    # 70B QLoRA does not fit one 24 GB card; another GPU that holds it alone is no reason to say "one card"
    pair = answer(PAIR, snapshot=snapshot, now=NOW, lang="en")
    assert not _findings(pair, "provision.adapter_one_card")
    # 8B LoRA fits one 4090 (bf16 weights ~15 GiB of 24 GB): four are more than the job needs
    four = answer("LoRA fine-tune llama 3 8b on 4x 4090", snapshot=snapshot, now=NOW, lang="en")
    assert _findings(four, "provision.adapter_one_card")
