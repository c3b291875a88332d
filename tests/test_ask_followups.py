"""Threads and unknown names: a follow-up changes the thread's request; a model nobody knows is asked about."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.answer.pipeline import answer
from bot.render.limits import check_message

NOW = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)


def test_a_follow_up_changes_only_what_it_says(snapshot: Any) -> None:
    first = answer("serve Llama 3.1 8B to 20 users at 8k context", snapshot=snapshot, now=NOW)
    assert first.state is not None
    follow = answer("and with 4-bit?", snapshot=snapshot, now=NOW, state=first.state)
    assert follow.ask is not None and follow.ask.follow_up
    assert follow.kind == first.kind != "help"
    assert follow.state is not None
    workload = follow.state["w"]
    # the thread's model, users and context are kept; the follow-up adds the weight format it named
    assert workload["model"] == "llama-3.1-8b" and workload["quantization"] == "int4"
    assert workload["concurrency"] == 20 and workload["context_tokens"] == 8192


def test_a_follow_up_without_a_thread_is_not_a_recommendation_out_of_nothing(snapshot: Any) -> None:
    reply = answer("and with 4-bit?", snapshot=snapshot, now=NOW)
    assert reply.kind not in ("recommendation", "serving") and reply.verdict is None


def test_an_unknown_model_is_asked_about_with_the_closest_presets(snapshot: Any) -> None:
    reply = answer("serve Qwen3-Coder-Nextgen to 10 users", snapshot=snapshot, now=NOW)
    assert reply.kind == "clarification" and check_message(reply.message()) == []
    labels = [e["text"]["text"] for b in reply.blocks if b["type"] == "actions" for e in b["elements"]]
    action_ids = [e["action_id"] for b in reply.blocks if b["type"] == "actions" for e in b["elements"]]
    assert labels and all(a.startswith("model.pick.") for a in action_ids)
    assert all(label in {m.name for m in snapshot.models.values()} for label in labels)  # real presets
    assert all("Qwen" in label for label in labels)  # the closest known: the family named
    assert "parameters" in reply.text or "parameters" in str(reply.blocks)


def test_a_gpu_described_by_memory_is_answered_on_its_class_and_says_so(snapshot: Any) -> None:
    """'a Mac with 64 GB': every 64 GB Apple chip in the catalog holds the same memory, the slowest stands for
    them (its bandwidth is the lowest), and the card says which one it used."""
    reply = answer("ollama on a Mac with 64 GB, can I run Llama 3.3 70B?", snapshot=snapshot, now=NOW)
    assert reply.verdict is not None and reply.verdict.pinned is not None
    macs = [g for g in snapshot.gpus.values() if g.unified_memory and g.vram_gb == 64]
    slowest = min(macs, key=lambda g: (g.memory_bandwidth_gbs, g.id))
    assert reply.verdict.pinned.gpu == slowest.id and len(macs) >= 2
    assert slowest.name in reply.text or slowest.name in str(reply.blocks)


def test_a_card_described_by_memory_is_never_a_mac_whose_gpu_gets_a_share_of_it(snapshot: Any) -> None:
    """'a 16GB card': a 16 GB Mac lends its GPU about two thirds (gpu_usable_fraction), a 16 GB card nearly all
    of it, so a Mac standing for the class would make "the memory verdict is the same for all" false. gpt-oss-20b
    in MXFP4 (12.8 GiB of weights, the model card: "fits within 16GB of memory") fits the cards."""
    reply = answer("can gpt-oss-20b run on a 16GB card?", snapshot=snapshot, now=NOW)
    assert reply.verdict is not None and reply.verdict.pinned is not None
    stand_in = snapshot.gpus[reply.verdict.pinned.gpu]
    assert not stand_in.unified_memory and abs(stand_in.vram_gb - 16) < 0.6
    assert reply.verdict.pinned.fits


def test_a_chip_named_without_its_memory_is_answered_on_its_smallest_size_when_that_decides_nothing(
        snapshot: Any) -> None:
    """"M2 Max" comes with 32, 64 or 96 GB. Llama 3 8B in FP16 is 16.1 GB of weights (8.03 B parameters x 2
    bytes, Meta's model card), under the ~21 GB macOS lets the GPU wire on a 32 GB Mac (2/3, the recommended
    working set in tests/cases/serving_memory.jsonl): it fits every size in the same format, so the card answers
    for the 32 GB one and says so, and `parsed` is still what the parser read (the name alone)."""
    reply = answer("How many tokens/s for Llama 3 8B on an M2 Max?", snapshot=snapshot, now=NOW)
    assert reply.kind != "clarification" and reply.verdict is not None and reply.verdict.pinned is not None
    assert reply.verdict.pinned.gpu == "apple-m2-max-32gb" and reply.verdict.pinned.fits
    assert "32 GB, 64 GB, 96 GB" in reply.terminal()
    assert reply.ask is not None and [g.status for g in reply.ask.gpus] == ["ambiguous"]


@pytest.mark.parametrize("text", [
    # Llama 3 70B in Q4_K_M is a 39.6 GiB file (tests/cases/serving_throughput.jsonl, gguf-size-llama3-70b-q4_k_m):
    # no 32 GB M2 Max holds it, a 64 or 96 GB one does, so which one the user has decides the answer
    "can my M2 Max run Llama 3 70B?",
    # Qwen2.5 7B in FP16 (7.6 B parameters x 2 bytes = 15.2 GB) plus a cache does not fit a 16 GB V100 but fits a
    # 32 GB one: the smallest would be answered in 4-bit, the larger in FP16
    "serve Qwen2.5 7B on a V100 for 10 users",
])
def test_a_chip_named_without_its_memory_is_asked_about_when_its_size_decides(text: str, snapshot: Any) -> None:
    reply = answer(text, snapshot=snapshot, now=NOW)
    assert reply.kind == "clarification", (text, reply.kind)


def test_apple_chips_and_laptop_cards_are_read_by_name(snapshot: Any) -> None:
    from bot.parse import parse

    def ids(text: str) -> list[str | None]:
        return [g.gpu_id for g in parse(text, snapshot=snapshot).gpus]

    assert ids("M3 Max 64GB running qwen2.5 32b") == ["apple-m3-max-64gb"]
    assert ids("Mac Studio M2 Ultra 192GB for llama 3.1 405b?") == ["apple-m2-ultra-192gb"]
    assert ids("rtx 4090 laptop for a 7B LoRA") == ["rtx-4090-laptop"]
    assert ids("LoRA on a laptop 4070") == ["rtx-4070-laptop"]
    assert ids("LoRA on a 4070") == ["rtx-4070"]  # the desktop card stays the desktop card
    mention = parse("can my MacBook Pro M3 Max run Llama 3.3 70B", snapshot=snapshot).gpus[0]
    assert mention.status == "ambiguous" and all(c.startswith("apple-m3-max-") for c in mention.candidates)


@pytest.mark.parametrize(("text", "gpu"), [
    ("Apple M2 16GB run 7B?", "apple-m2-16gb"),
    ("맥북 M2 16GB로 7B 모델 돌릴 수 있나요?", "apple-m2-16gb"),  # 맥북 = MacBook
    ("M4 Mac mini 16GB: Llama 3.1 8B speed?", "apple-m4-16gb"),
    ("can my M1 MacBook Air 8GB run Llama 3 8B?", "apple-m1-8gb"),
    ("my m2 16gb, llama 3 8b?", "apple-m2-16gb"),
    ("iMac M3 8GB llama 3.2 3b", "apple-m3-8gb"),
    ("Mac mini M4 Pro 24GB llama", "apple-m4-pro-24gb"),  # the Pro is another chip
    ("run llama 3.2 3B on a GTX 1060 6GB", "gtx-1060-6gb"),
    ("can my 1080 Ti run Mistral 7B?", "gtx-1080-ti"),
    ("ollama跑qwen2.5:7b，显卡是1660S 6G，能跑吗", "gtx-1660-super"),
])
def test_the_base_apple_chips_and_older_geforce_cards_are_read_by_name(text: str, gpu: str, snapshot: Any) -> None:
    """The MacBook Air / Mac mini chips (M1-M4, no Pro/Max/Ultra) and the GTX 10/16 cards people still own: the
    chip is read with the Mac word on either side or a memory figure beside it, never from "M2" alone."""
    from bot.parse import parse

    assert [g.gpu_id for g in parse(text, snapshot=snapshot).gpus] == [gpu]


def test_a_base_chip_without_memory_is_one_of_its_own_sizes_and_m2_alone_is_no_chip(snapshot: Any) -> None:
    from bot.parse import parse

    mention = parse("can a MacBook Air M2 run llama 3.2 3B?", snapshot=snapshot).gpus[0]
    # M2: 8, 16 or 24 GB (MacRumors, 2022-06-06: "up to 24GB"); not the M2 Pro, Max or Ultra
    assert mention.status == "ambiguous" and set(mention.candidates) == {"apple-m2-8gb", "apple-m2-16gb",
                                                                         "apple-m2-24gb"}
    assert parse("M2 SSD for llama 8b", snapshot=snapshot).gpus == ()


def test_a_paged_serving_engine_says_no_and_how_many_users_fit(snapshot: Any) -> None:
    """vLLM for 20 users on one T4: not 'offload to RAM' (a paged server does not do that for many users) but
    no, with how many of the 20 sequences the card holds and how many cards would hold them all."""
    reply = answer("Can I serve Llama 3.1 8B on one T4 to 20 users with vLLM?", snapshot=snapshot, now=NOW)
    pinned = reply.verdict.pinned if reply.verdict else None
    assert pinned is not None and pinned.gpu == "t4" and pinned.count == 1
    assert not pinned.fits and pinned.offload_gib == 0 and pinned.throughput is None
    codes = {f.code: f for f in reply.verdict.findings}
    assert "pinned.offload" not in codes
    users = codes["pinned.users"].numbers
    assert 0 < float(users["max_concurrency"]) < 20 and users["concurrency"] == 20
    assert "pinned.more_gpus" in codes
