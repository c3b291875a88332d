"""A Verdict as plain JSON-ready values (the `estimate --json` shape); no display text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules.types import GpuSpec, Offer
from rules.verdict import Finding, Option, Verdict


def finding_to_json(finding: Finding) -> dict[str, Any]:
    return {"code": finding.code, "outcome": finding.outcome, "numbers": dict(finding.numbers)}


def offer_to_json(offer: Offer | None) -> dict[str, Any] | None:
    if offer is None:
        return None
    return {"provider": offer.provider_id, "instance_type": offer.instance_type, "gpu_count": offer.gpu_count,
            "region": offer.region, "tier": offer.tier, "usd_per_hour": float(offer.usd_per_hour),
            "usd_per_gpu_hour": float(offer.usd_per_gpu_hour), "billing_increment_s": offer.billing_increment_s,
            "observed_at": offer.observed_at.isoformat()}


def _gpu(gpu_id: str, gpus: Mapping[str, GpuSpec]) -> dict[str, str]:
    gpu = gpus.get(gpu_id)
    return {"id": gpu_id, "name": gpu.name if gpu else gpu_id}


def option_to_json(option: Option, gpus: Mapping[str, GpuSpec]) -> dict[str, Any]:
    return {"gpu": _gpu(option.gpu_id, gpus), "count": option.count, "sharding": option.sharding,
            "switches": list(option.switches), "memory_per_gpu_gib": option.memory.per_gpu_gib,
            "hours": option.hours, "cost_usd": float(option.cost_usd) if option.cost_usd is not None else None,
            "offer": offer_to_json(option.offer), "findings": [finding_to_json(f) for f in option.findings]}


def verdict_to_json(verdict: Verdict, gpus: Mapping[str, GpuSpec]) -> dict[str, Any]:
    memory = verdict.memory
    return {
        "assumptions": dict(verdict.assumptions),
        "memory": {"per_gpu_gib": memory.per_gpu_gib, "low_gib": memory.low_gib, "high_gib": memory.high_gib,
                   "breakdown": dict(memory.breakdown), "cpu_offload_gib": memory.cpu_offload_gib,
                   "nvme_offload_gib": memory.nvme_offload_gib},
        "options": [option_to_json(o, gpus) for o in verdict.options],
        "rejected": [{"gpu": _gpu(r.gpu_id, gpus), "code": r.code, "numbers": dict(r.numbers)}
                     for r in verdict.rejected],
        "findings": [finding_to_json(f) for f in verdict.findings],
    }
