"""Memory mechanisms of issue 17 item 3, each against its framework's code, docs or a published measured run.

Shapes from tests/cases/memory_case_models.json (each model's config.json); expected values are hand
arithmetic written here or the published figure, never the engine's own output.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from test_rules_support import CASES, catalog_gpus, model, offers_for, providers, tables

from rules.engine import evaluate
from rules.memory.calibration import shape_from_config
from rules.memory.parts import GIB
from rules.memory.training import activation_bytes, estimate_parts, logit_bytes, selective_layer_elements
from rules.types import Workload
from rules.workload.families import with_family_vocab
from rules.workload.frameworks import logits_on, release_date
from rules.workload.setup import resolve_setup
from rules.workload.shapes import typical_shape

MODELS = json.loads((CASES / "memory_case_models.json").read_text())


def shape(hf_id: str):
    return shape_from_config(hf_id, MODELS[hf_id])


@pytest.mark.parametrize(("version", "expected"), [
    ("0.2.1", "full"),  # v0.2 (2024-07-16): nn.CrossEntropyLoss on fp32 logits
    ("2024-08-27", "full"),
    ("2024-08-28", "chunked"),  # PR #1390 "chunked cross entropy" made CEWithChunkedOutputLoss the default
    ("0.3.0", "chunked"),  # v0.3 (2024-09-17)
    (None, "chunked"),
])
def test_torchtune_loss_follows_its_release(version, expected):
    assert logits_on("torchtune", release_date("torchtune", version)) == expected


def test_a_stated_loss_overrides_the_framework_default():
    setup = resolve_setup(Workload(method="lora", framework="hf", loss="cce"), method="lora", gpus=1)
    assert setup.logits == "cce"


def test_selective_op_checkpointing_keeps_about_a_third_of_a_llama_block():
    """torchtitan's op-level SAC saves every other matmul output, the attention output and the block input:
    (3h + 2kv + 2f) / 2 + 2h = (12288 + 2048 + 28672) / 2 + 8192 = 29,696 of 6h + 2kv + 4f = 83,968 elements
    per token for Llama 3.1 8B (h 4096, kv 1024, f 14336): 35.4 %."""
    s = shape("meta-llama/Llama-3.1-8B")
    setup = resolve_setup(Workload(method="pretrain", framework="torchtitan"), method="pretrain", gpus=8)
    assert setup.checkpointing == "selective"
    assert selective_layer_elements(s, setup) == 29696


def test_context_parallel_divides_the_tokens_each_gpu_holds():
    """torchtitan Table 2: FSDP 8 at 32,768 tokens and FSDP 4 x CP 2 at 65,536 tokens use the same memory
    (83.9 vs 84.2 GiB): each GPU holds 32,768 tokens of activations and logits either way."""
    s = shape("meta-llama/Llama-3.1-8B")
    base = resolve_setup(Workload(method="pretrain", framework="torchtitan", seq_len=32768, batch_size=1,
                                  grad_checkpointing="full"), method="pretrain", gpus=8)
    split = replace(base, seq_len=65536, context_parallel=2)
    assert activation_bytes(s, split) == pytest.approx(activation_bytes(s, base))
    assert logit_bytes(s, split) == pytest.approx(logit_bytes(s, base))
    one = estimate_parts(s, base)
    two = estimate_parts(s, split)
    assert two.reserved_peak == pytest.approx(one.reserved_peak)


@pytest.mark.parametrize(("case_id", "measured_gib", "tolerance"), [
    ("titan-l31-8b-fsdp128-compile", 62.0, 0.10),  # torchtitan Table 3, 128 H100, max reserved
    ("titan-l31-8b-cp2-s65536", 84.2, 0.10),  # torchtitan Table 2
    ("tt-l31-8b-full-4090", 18.9, 0.10),  # torchtune README: paged 8-bit state unseen by the counters
    ("tt-l32-3b-optinbwd", 23.1, 0.10),  # torchtune README flags table
    ("trainy-l31-8b-h200-32", 47.96, 0.10),  # torchtitan H200 benchmark: compiled loss
])
def test_published_runs_the_mechanisms_were_built_for(case_id, measured_gib, tolerance):
    from rules.memory.calibration import evaluate_case

    cases = {c["id"]: c for c in json.loads((CASES / "memory_cases_more.json").read_text())}
    settings = json.loads((CASES / "memory_cases_settings.json").read_text())["cases"]
    case = cases[case_id]
    assert case["measured_peak_gb_per_gpu"] == measured_gib  # the table holds the published figure
    result = evaluate_case(case, settings[case_id], shape(case["model"]))
    assert result.predicted_gib == pytest.approx(measured_gib, rel=tolerance)
    assert result.low_gib <= measured_gib <= result.high_gib


def test_a_bare_size_takes_its_family_vocabulary():
    """Qwen-1 / Qwen2.5 have 151,936 vocabulary entries (config.json), Llama 3 128,256: a '14B Qwen' asked
    without a preset must size its logits with Qwen's vocabulary, i.e. 151936/128256 = 1.185x Llama's."""
    llama = typical_shape(14.0)
    qwen = with_family_vocab(llama, "qwen")
    assert qwen.vocab_size == 151936 and qwen.params_b == llama.params_b
    setup = resolve_setup(Workload(method="lora", seq_len=4096, batch_size=1), method="lora", gpus=1)
    assert logit_bytes(qwen, setup) / logit_bytes(llama, setup) == pytest.approx(151936 / llama.vocab_size)
    assert with_family_vocab(llama, "unknown-family") == llama


def test_the_engine_reports_memory_on_the_basis_asked():
    """torchtune reports torch's counters (allocated); nvidia-smi the whole device. On a 24 GB card with a
    paged 8-bit optimizer, the counters miss the paged state and the CUDA context: allocated < device."""
    gpus = catalog_gpus()
    workload = Workload(model=model("meta-llama/Llama-3.1-8B"), method="full", gpu="rtx-4090", gpus=1,
                        framework="torchtune", seq_len=2048, batch_size=2)
    device = evaluate(workload, gpus=gpus, offers_by_gpu=offers_for(gpus), providers=providers(), tables=tables())
    allocated = evaluate(replace(workload, memory_basis="allocated"), gpus=gpus, offers_by_gpu=offers_for(gpus),
                         providers=providers(), tables=tables())
    assert allocated.assumptions["memory_basis"] == "allocated"
    assert allocated.memory.per_gpu_gib < device.memory.per_gpu_gib - 0.6  # at least the CUDA context
    assert allocated.memory.per_gpu_gib == pytest.approx(18.9, rel=0.10)  # torchtune README, 1x 4090
    assert abs(sum(allocated.memory.breakdown.values()) - allocated.memory.per_gpu_gib) < 0.01


def test_paged_state_is_on_the_card_only_as_far_as_it_fits():
    """The planner hands the card's memory to the estimate: a 4090 cannot hold 8B's 15 GiB of 8-bit state
    next to 15 GiB of bf16 weights, an 80 GB card holds it all."""
    s = shape("meta-llama/Llama-3.1-8B")
    setup = resolve_setup(Workload(method="full", framework="torchtune", seq_len=2048, batch_size=2),
                          method="full", gpus=1)
    assert setup.optimizer == "paged_adamw8bit"
    state_gib = 8.03e9 * (2 + 8 / 2048) / GIB
    assert estimate_parts(s, setup, device_gib=80).paged == pytest.approx(state_gib, rel=1e-3)
    small = estimate_parts(s, setup, device_gib=22.8)
    assert small.cpu_offload > state_gib / 2 and small.device_peak == pytest.approx(22.8)
