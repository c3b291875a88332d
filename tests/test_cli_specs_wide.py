"""`specs --json` gives every catalog field: FP16 for GPUs without BF16, flags, link, software, dated prices."""

import io
import json
from dataclasses import fields

import pytest

from bot.cli import main
from rules.types import GpuSpec


@pytest.fixture
def cli(loaded_engine, monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", loaded_engine.url.render_as_string(hide_password=False))

    def run(*argv, stdin=None):
        if stdin is not None:
            monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        code = main(list(argv))
        out, _ = capsys.readouterr()
        return code, out

    return run


def specs(cli, name):
    code, out = cli("specs", name, "--json")
    assert code == 0
    return json.loads(out)


def test_every_gpuspec_field_is_in_the_json(cli):
    spec = specs(cli, "H100 SXM")
    assert {f.name for f in fields(GpuSpec)} <= set(spec)
    assert spec["software_stack"] == "CUDA" and spec["bf16_support"] is True and spec["fp8_support"] is True
    assert spec["scaleup_link"] == "NVLink 4" and spec["usable_vram_gb"] == spec["vram_gb"]


@pytest.mark.parametrize(("name", "fp16"), [("V100 16GB", 125), ("T4", 65)])
def test_gpus_without_bf16_give_their_fp16_tensor_figure(cli, name, fp16):
    # NVIDIA datasheets: V100 125 TFLOPS tensor, T4 65 TFLOPS FP16 (mixed precision); neither has BF16
    spec = specs(cli, name)
    assert spec["bf16_support"] is False and spec["bf16_dense_tflops"] is None
    assert spec["fp16_dense_tflops"] == pytest.approx(fp16)


def test_purchase_price_has_its_date_and_source(cli):
    spec = specs(cli, "RTX 2080 Ti")
    assert spec["purchase_usd"] == 999 and spec["purchase_date"] == "2018-09-20"
    assert spec["purchase_source"].startswith("https://")


def test_a_mac_says_how_much_of_its_memory_the_gpu_may_use(cli):
    spec = specs(cli, "Mac Studio M2 Ultra 192GB")
    assert spec["unified_memory"] is True and spec["software_stack"] == "MLX/Metal"
    assert spec["usable_vram_gb"] == pytest.approx(192 * 0.75)


def test_laptop_and_modified_flags(cli):
    assert specs(cli, "RTX 4090 Laptop GPU")["laptop"] is True
    assert specs(cli, "4090 48GB")["modified"] is True
    assert specs(cli, "4090")["laptop"] is False and specs(cli, "4090")["modified"] is False
