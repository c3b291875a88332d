"""Time model calibration: parsing the cases' published throughputs, implied MFU, hours error."""

from __future__ import annotations

import pytest

from rules.workload.setup import resolve_setup
from rules.speed.calibration import observed_mfu, tokens_per_gpu_s
from rules.speed.training import saturation
from rules.types import Workload


@pytest.mark.parametrize(("text", "kwargs", "expected"), [
    ("TGS 2,392 tokens/GPU/s", {}, 2392.0),  # LLaMA-Factory wiki: already per GPU
    ("653 tokens/s", {"gpus": 8}, 653 / 8),  # torchtune README: whole job over 8 GPUs
    ("2.1s/it (per iteration = 8 micro-batches)", {"micro_batches_per_it": 8, "seq_len": 256}, 8 * 256 / 2.1),
    ("train_time 2147.3 s for 5000 steps", {}, None),  # no token count: not a rate
    (None, {}, None),
])
def test_throughput_text_to_tokens_per_gpu_s(text, kwargs, expected):
    args = {"seq_len": 2048, "batch_size": 1, "gpus": 1, **kwargs}
    got = tokens_per_gpu_s(text, **args)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_observed_mfu_is_flops_over_peak():
    """8B LoRA without recomputation: 4·N FLOPs/token; 1000 tok/s on a 312 TFLOPS A100 = 0.103."""
    setup = resolve_setup(Workload(method="lora", grad_checkpointing="none", seq_len=2048, batch_size=1),
                          method="lora", gpus=1)
    assert observed_mfu(1000.0, 8.0, setup, 312.0) == pytest.approx(1000 * 4 * 8e9 / 312e12)


def test_small_micro_batches_saturate_less():
    assert saturation(256) == pytest.approx(0.25) and saturation(4096) == 1.0
