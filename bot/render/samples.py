"""Sample catalog for card previews and golden tests: the GPUs of the guides' comparison tables.

Figures are copied from the tables that end ../shared/guides/000_*.txt (Chinese: GB200 Superchip,
B300, MI350X) and 002_*.txt (Korean: A100 SXM 80GB, L40S, A100 SXM 40GB), including their cheapest
on-demand price and provider count, so a rendered comparison can be checked against the guide.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from rules.types import GpuSpec, Offer, Provider

OBSERVED_AT = datetime(2025, 6, 2, 8, 0, tzinfo=UTC)
GUIDE_002 = "../shared/guides/002_5b313d5a94169c9f.txt (comparison table)"
GUIDE_000 = "../shared/guides/000_1c25a96f2b2c80ec.txt (comparison table)"


def _gpu(gpu_id: str, name: str, vendor: str, arch: str, vram: float, mem: str, bw: float, fp16: float,
         fp32: float, tdp: int, year: int, source: str, **extra: object) -> GpuSpec:
    values: dict[str, object] = dict(
        id=gpu_id, name=name, vendor=vendor, architecture=arch, vram_gb=vram, memory_type=mem,
        memory_bandwidth_gbs=bw, bf16_dense_tflops=fp16, fp16_dense_tflops=fp16, fp8_dense_tflops=None,
        fp32_tflops=fp32, tdp_w=tdp, release_year=year, segment="datacenter", form_factor="SXM",
        scaleup_link="NVLink 3", scaleup_bw_gbs=600.0, multinode_fabric=True, mig_instances=7,
        bf16_support=True, fp8_support=False, software_stack="CUDA", purchase_usd=None, source=source,
    )
    values.update(extra)
    return GpuSpec(**values)  # type: ignore[arg-type]


def sample_gpus() -> dict[str, GpuSpec]:
    gpus = [
        _gpu("a100-sxm-80gb", "A100 SXM (80GB)", "NVIDIA", "Ampere", 80, "HBM2e", 2039, 312, 19.5, 400, 2020,
             GUIDE_002),
        _gpu("l40s-48gb", "L40S", "NVIDIA", "Ada Lovelace", 48, "GDDR6", 864, 366, 91.6, 350, 2023, GUIDE_002,
             form_factor="PCIe", scaleup_link="PCIe 4.0", scaleup_bw_gbs=64.0, multinode_fabric=False,
             mig_instances=0, fp8_dense_tflops=733.0, fp8_support=True),
        _gpu("a100-sxm-40gb", "A100 SXM (40GB)", "NVIDIA", "Ampere", 40, "HBM2e", 1555, 312, 19.5, 400, 2020,
             GUIDE_002),
        _gpu("gb200", "GB200 Superchip", "NVIDIA", "Blackwell", 384, "HBM3e", 16000, 4500, 150, 2700, 2024,
             GUIDE_000, scaleup_link="NVLink 5", scaleup_bw_gbs=1800.0, fp8_dense_tflops=9000.0,
             fp8_support=True, form_factor="superchip"),
        _gpu("b300", "B300", "NVIDIA", "Blackwell Ultra", 288, "HBM3e", 8000, 2250, 75, 1400, 2025, GUIDE_000,
             scaleup_link="NVLink 5", scaleup_bw_gbs=1800.0, fp8_dense_tflops=4500.0, fp8_support=True),
        _gpu("mi350x", "MI350X", "AMD", "CDNA 4", 288, "HBM3e", 8000, 1800, 72, 1000, 2025, GUIDE_000,
             scaleup_link="Infinity Fabric", scaleup_bw_gbs=1075.0, software_stack="ROCm", mig_instances=0,
             form_factor="OAM", fp8_dense_tflops=3600.0, fp8_support=True),
        _gpu("rtx-4090", "GeForce RTX 4090", "NVIDIA", "Ada Lovelace", 24, "GDDR6X", 1008, 165.2, 82.6, 450,
             2022, "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4090/",
             segment="consumer", form_factor="board", scaleup_link="PCIe 4.0", scaleup_bw_gbs=64.0,
             multinode_fabric=False, mig_instances=0, purchase_usd=Decimal(1599)),
        _gpu("v100-sxm2-16gb", "V100 SXM2 16GB", "NVIDIA", "Volta", 16, "HBM2", 900, 125, 15.7, 300, 2017,
             "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf",
             bf16_dense_tflops=None, bf16_support=False, scaleup_link="NVLink 2", scaleup_bw_gbs=300.0,
             mig_instances=0),
    ]
    return {g.id: g for g in gpus}


def sample_providers() -> dict[str, Provider]:
    names = ["Lambda", "RunPod", "AWS", "GCP", "Vast.ai", "Nebius", "Hyperbolic", "Cudo"]
    increments = [60, 1, 1, 1, 1, 1, 60, 60]
    return {
        n.lower().replace(".", ""): Provider(n.lower().replace(".", ""), n, "cloud", inc, "NVLink", "sample")
        for n, inc in zip(names, increments)
    }


def _offer(gpu: str, provider: str, usd: str, tier: str = "on-demand", count: int = 1) -> Offer:
    per_gpu = Decimal(usd)
    return Offer(gpu, provider, f"{gpu}-x{count}", count, "us-east", tier,  # type: ignore[arg-type]
                 per_gpu * count, per_gpu, 60, "NVLink", OBSERVED_AT, "sample")


def sample_offers() -> dict[str, tuple[Offer, ...]]:
    """Offers matching the guides' cheapest on-demand and provider counts (A100 80GB: $1.10, 6 ...)."""
    p = ["lambda", "runpod", "aws", "gcp", "vastai", "nebius", "hyperbolic", "cudo"]
    offers = [
        *[_offer("a100-sxm-80gb", pid, usd) for pid, usd in zip(p, ["1.10", "1.39", "4.10", "3.67", "1.20", "1.55"])],
        _offer("a100-sxm-80gb", "aws", "1.64", tier="spot", count=8),
        *[_offer("l40s-48gb", pid, usd) for pid, usd in zip(p, ["0.55", "0.86", "1.86", "1.40", "0.62", "1.05", "0.95"])],
        _offer("a100-sxm-40gb", "lambda", "0.80"), _offer("a100-sxm-40gb", "gcp", "3.67", count=8),
        _offer("b300", "nebius", "4.95", tier="reserved", count=8),
        _offer("mi350x", "hyperbolic", "2.10", tier="spot", count=8),
        _offer("rtx-4090", "runpod", "0.59"), _offer("rtx-4090", "vastai", "0.35"),
        _offer("rtx-4090", "vastai", "0.28", tier="spot"),
    ]
    by_gpu: dict[str, list[Offer]] = {}
    for offer in offers:
        by_gpu.setdefault(offer.gpu_id, []).append(offer)
    return {k: tuple(sorted(v, key=lambda o: o.usd_per_gpu_hour)) for k, v in by_gpu.items()}


@dataclass(frozen=True, slots=True)
class SampleCatalog:
    """Just the snapshot attributes the catalog cards read (see `views.CatalogView`)."""

    gpus: Mapping[str, GpuSpec]
    providers: Mapping[str, Provider]
    offers_by_gpu: Mapping[str, tuple[Offer, ...]]
    taken_at: datetime = OBSERVED_AT


def sample_catalog() -> SampleCatalog:
    return SampleCatalog(sample_gpus(), sample_providers(), sample_offers())
