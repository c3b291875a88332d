"""The reviewed catalog files: valid rows, unique ids, sane dense figures, coverage of DESIGN §2 and SkyPilot."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from knowledge.load import read_catalog
from knowledge.resolve import GpuIndex, resolve_cloud_accelerator
from knowledge.snapshot import gpu_spec

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "knowledge" / "data"
SKYPILOT = DATA / "prices" / "skypilot-v7"

# Every GPU DESIGN §2 names (B300, GB200, ... Gaudi 2/3), as catalog ids.
DESIGN_GPUS = [
    "gb200", "b300", "b200", "h200", "h100-sxm-80gb", "h100-pcie-80gb", "a100-sxm-40gb", "a100-sxm-80gb",
    "a100-pcie-40gb", "a100-pcie-80gb", "l40s", "l4", "a10", "a10g", "rtx-5090", "rtx-4090", "rtx-4080-super",
    "rtx-4070-super", "rtx-4060-ti-16gb", "rtx-3090", "rtx-a6000", "rtx-6000-ada", "v100-16gb", "v100-32gb", "t4",
    "mi355x", "mi350x", "mi325x", "mi300x", "mi250x", "rx-7900-xtx", "gaudi2", "gaudi3",
]  # fmt: skip
# SkyPilot accelerator names that are not GPUs: TPUs, AWS Inferentia/Trainium, FPGAs, Qualcomm AI 100.
NOT_GPUS = re.compile(r"^(tpu-.*|Inferentia2?|Trainium2?|Virtex UltraScale.*|Qualcomm AI100)$")
# Names SkyPilot uses for more than one catalog GPU, unmappable when a row gives no memory or instance hint.
AMBIGUOUS_WITHOUT_MEMORY = {"A100", "V100"}


@pytest.fixture(scope="module")
def catalog() -> dict[str, list]:
    return read_catalog(DATA)


@pytest.fixture(scope="module")
def index(catalog: dict[str, list]) -> GpuIndex:
    gpus = {row.id: gpu_spec(row) for row in catalog["gpus"]}
    return GpuIndex.build(gpus, catalog["gpu_aliases"])


def test_counts(catalog: dict[str, list]) -> None:
    assert len(catalog["gpus"]) >= 50
    assert len(catalog["models"]) >= 45
    assert len(catalog["providers"]) >= 15


def test_gpus_header_is_the_base_model() -> None:
    from knowledge.tables import GpuBase

    with (DATA / "gpus.csv").open(encoding="utf-8") as fh:
        assert next(csv.reader(fh)) == list(GpuBase.model_fields)


def test_design_gpus_present(catalog: dict[str, list]) -> None:
    ids = {g.id for g in catalog["gpus"]}
    assert [g for g in DESIGN_GPUS if g not in ids] == []


@pytest.mark.parametrize("field", ["id", "name"])
def test_gpu_ids_and_names_unique(catalog: dict[str, list], field: str) -> None:
    values = [getattr(g, field).casefold() for g in catalog["gpus"]]
    assert len(values) == len(set(values))


def test_dense_figures_are_sane(catalog: dict[str, list]) -> None:
    """Dense tensor >= FP32 vector; FP8 = null exactly where unsupported; BF16 likewise; PCIe cards say PCIe."""
    problems = []
    for g in catalog["gpus"]:
        if g.bf16_support != (g.bf16_dense_tflops is not None) or g.fp8_support != (g.fp8_dense_tflops is not None):
            problems.append(f"{g.id}: support flag disagrees with the figure")
        if g.bf16_dense_tflops is not None and g.bf16_dense_tflops < g.fp32_tflops:
            problems.append(f"{g.id}: bf16 dense {g.bf16_dense_tflops} < fp32 {g.fp32_tflops}")
        if g.fp8_dense_tflops is not None and g.fp8_dense_tflops < (g.bf16_dense_tflops or g.fp16_dense_tflops):
            problems.append(f"{g.id}: fp8 below bf16")
        if g.form_factor == "PCIe" and not g.scaleup_link.startswith("PCIe"):
            problems.append(f"{g.id}: PCIe card must name PCIe as its scale-up link")
        if g.mig_instances and g.vendor != "NVIDIA":
            problems.append(f"{g.id}: MIG is NVIDIA-only")
    assert problems == []


@pytest.mark.parametrize(
    ("gpu_id", "bf16", "fp8"),
    [
        # NVIDIA datasheets list sparse figures; dense = half (H100: 1,979 sparse BF16 -> 989).
        ("h100-sxm-80gb", 989, 1979),
        ("a100-sxm-80gb", 312, None),
        # Ada whitepaper: RTX 4090 FP16 tensor with FP32 accumulate 165.2 dense (330.3 with FP16 accumulate).
        ("rtx-4090", 165.2, 330.3),
        ("mi300x", 1307.4, 2614.9),  # AMD MI300X datasheet, dense
        ("v100-16gb", None, None),  # no BF16 on Volta
        ("t4", None, None),
    ],
)
def test_datasheet_figures(catalog: dict[str, list], gpu_id: str, bf16: float | None, fp8: float | None) -> None:
    g = next(g for g in catalog["gpus"] if g.id == gpu_id)
    assert (g.bf16_dense_tflops, g.fp8_dense_tflops) == (bf16, fp8)


def test_mig_counts(catalog: dict[str, list]) -> None:
    mig = {g.id: g.mig_instances for g in catalog["gpus"]}
    assert (mig["a100-sxm-80gb"], mig["h100-sxm-80gb"], mig["a30"], mig["rtx-4090"]) == (7, 7, 4, 0)


def test_every_row_cites_a_source(catalog: dict[str, list]) -> None:
    for kind in ("gpus", "models", "providers"):
        assert [r.id for r in catalog[kind] if not r.source.startswith("https://")] == []


def test_every_alias_points_somewhere(catalog: dict[str, list]) -> None:
    gpu_ids = {g.id for g in catalog["gpus"]}
    model_ids = {m.id for m in catalog["models"]}
    assert [a.alias for a in catalog["gpu_aliases"] if a.gpu_id not in gpu_ids] == []
    assert [a.alias for a in catalog["model_aliases"] if a.model_id not in model_ids] == []
    assert all((a.kind == "instance") == (a.count > 0) for a in catalog["gpu_aliases"])


def test_models_are_consistent(catalog: dict[str, list]) -> None:
    problems = []
    for m in catalog["models"]:
        if m.heads % m.kv_heads:
            problems.append(f"{m.id}: heads {m.heads} not a multiple of kv_heads {m.kv_heads}")
        if (m.moe_experts == 0) != (m.active_params_b == m.params_b):
            problems.append(f"{m.id}: active params must equal total exactly for dense models")
        if m.moe_active_experts > m.moe_experts:
            problems.append(f"{m.id}: more active experts than experts")
        if m.kind == "llm" and m.vocab_size == 0:
            problems.append(f"{m.id}: an LLM needs a vocabulary")
    assert problems == []


def test_moe_and_families_asked_about(catalog: dict[str, list]) -> None:
    models = {m.id: m for m in catalog["models"]}
    v3 = models["deepseek-v3"]  # deepseek-ai/DeepSeek-V3 config.json: 256 routed experts, 8 per token
    assert (v3.params_b, v3.active_params_b, v3.moe_experts, v3.moe_active_experts) == (671, 37, 256, 8)
    assert {"llama-3.1-8b", "qwen2.5-14b", "mixtral-8x7b", "gemma-2-9b", "phi-4", "sdxl", "flux.1-dev"} <= set(models)


def skypilot_rows() -> list[tuple[str, dict[str, str]]]:
    rows = []
    for path in sorted(SKYPILOT.glob("*.csv")):
        if path.name == "accelerators.csv":
            continue
        with path.open(encoding="utf-8", newline="") as fh:
            rows += [(path.stem, r) for r in csv.DictReader(fh) if (r.get("AcceleratorName") or "").strip()]
    return rows


def test_every_skypilot_gpu_maps(index: GpuIndex) -> None:
    size = re.compile(r"SizeInMiB['\"]?\s*:\s*(\d+)")
    unmapped: dict[str, int] = {}
    for _, row in skypilot_rows():
        name = row["AcceleratorName"].strip()
        m = size.search(row.get("GpuInfo") or "")
        match = resolve_cloud_accelerator(
            index,
            name,
            memory_gib=int(m.group(1)) / 1024 if m else None,
            instance_type=row.get("InstanceType") or None,
            gpu_count=int(float(row["AcceleratorCount"])),
        )
        if match.status != "found":
            unmapped[name] = unmapped.get(name, 0) + 1
    gpu_misses = {n: c for n, c in unmapped.items() if not NOT_GPUS.match(n)}
    assert set(gpu_misses) <= AMBIGUOUS_WITHOUT_MEMORY
    assert sum(gpu_misses.values()) <= 10  # Shadeform rows with no memory given


# skypilot-org/skypilot-catalog catalogs/v7/common/accelerators.csv (commit 03d79776), TPUs left out.
SKYPILOT_COMMON = (
    "A10 A100 A100-80GB A100-80GB-SXM A10G A40 A4000 A6000 B200 GH200 K80 L4 L40 L40S M4000 M60 MI300X NVIDIA "
    "P100 P4 P4000 RTX3060 RTX3080 RTX3090 RTX4000-Ada RTX4060 RTX4080 RTX4090 RTX5060 RTX5090 RTX6000 "
    "RTX6000-Ada RTXA4000 RTXA4500 RTXA5000 RTXA6000 T4 T4g V100 V100-32GB H100 H100-MEGA H100-NVL H100-NVLINK "
    "H100-SXM H200 H200-SXM"
).split() + ["Gaudi HL-205", "Radeon MI25", "Radeon Pro V520"]
NOT_IN_CATALOG = {"NVIDIA", "M4000", "P4000"}  # a bare vendor name; two 2016 Quadro cards (Paperspace only)


def test_skypilot_names_in_the_common_list_resolve(index: GpuIndex) -> None:
    misses = {n for n in SKYPILOT_COMMON if index.resolve(n).status == "none"}
    assert misses == NOT_IN_CATALOG


@pytest.mark.parametrize(
    ("name", "memory_gib", "instance", "expected"),
    [
        ("A100", 40.0, None, "a100-sxm-40gb"),
        ("A100", 80.0, "epyc-genoa-a100-pcie_1x2v4gb", "a100-pcie-80gb"),
        ("H100", 94.0, "epyc-genoa-h100-nvl-pcie_1x2v4gb", "h100-nvl-94gb"),
        ("H100", None, "gpu_1x_h100_pcie", "h100-pcie-80gb"),
        ("RTX6000", 24.0, None, "quadro-rtx-6000"),
        ("V100", 32.0, None, "v100-32gb"),
        ("A100", None, "p4d.24xlarge", "a100-sxm-40gb"),
    ],
)
def test_cloud_accelerator_uses_memory_and_instance(
    index: GpuIndex, name: str, memory_gib: float | None, instance: str | None, expected: str
) -> None:
    assert resolve_cloud_accelerator(index, name, memory_gib=memory_gib, instance_type=instance).gpu_id == expected
