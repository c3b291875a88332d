"""A Verdict as plain JSON-ready values (the `estimate --json` shape); no display text."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from rules.types import GpuSpec, Offer
from rules.verdict import Command, Finding, Option, Pinned, PrecisionFit, Throughput, Verdict


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


def throughput_to_json(throughput: Throughput | None) -> dict[str, Any] | None:
    if throughput is None:
        return None
    return {"concurrency": throughput.concurrency, "output_tokens_per_s": throughput.output_tokens_per_s,
            "output_tokens_per_s_per_user": throughput.output_tokens_per_s_per_user,
            "prefill_tokens_per_s": throughput.prefill_tokens_per_s,
            "band": {"low_tokens_per_s": throughput.low_tokens_per_s, "high_tokens_per_s": throughput.high_tokens_per_s},
            "basis": throughput.basis, "max_concurrency": throughput.max_concurrency}


def option_to_json(option: Option, gpus: Mapping[str, GpuSpec]) -> dict[str, Any]:
    out = {"gpu": _gpu(option.gpu_id, gpus), "count": option.count, "sharding": option.sharding,
           "switches": list(option.switches), "memory_per_gpu_gib": option.memory.per_gpu_gib,
           "hours": option.hours, "cost_usd": float(option.cost_usd) if option.cost_usd is not None else None,
           "offer": offer_to_json(option.offer), "findings": [finding_to_json(f) for f in option.findings]}
    if option.throughput is not None:  # serving and running
        out.update(precision=option.precision, engine=option.engine, throughput=throughput_to_json(option.throughput),
                   usd_per_million_output_tokens=option.usd_per_million_output_tokens,
                   usd_per_month=option.usd_per_month, replicas=option.replicas)
    return out


def pinned_to_json(pinned: Pinned, gpus: Mapping[str, GpuSpec]) -> dict[str, Any]:
    return {"gpu": _gpu(pinned.gpu, gpus), "count": pinned.count, "fits": pinned.fits, "precision": pinned.precision,
            "needed_gib": pinned.needed_gib, "has_gib": pinned.has_gib, "offload_gib": pinned.offload_gib,
            "throughput": throughput_to_json(pinned.throughput)}


def command_to_json(command: Command | None) -> dict[str, Any] | None:
    """The launch line as data (engine, env, argv), as one shell-quoted line, and the hardware it is for (gpu id
    and GPUs in all: the named hardware when the model runs on it, else the first option)."""
    if command is None:
        return None
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in command.env)
    line = " ".join(shlex.quote(a) for a in command.argv)
    return {"engine": command.engine, "env": dict(command.env), "argv": list(command.argv),
            "line": f"{env} {line}" if env else line, "gpu": command.gpu, "gpus": command.gpus}


def precision_to_json(fit: PrecisionFit) -> dict[str, Any]:
    return {"precision": fit.precision, "fits": fit.fits, "needed_gib": fit.needed_gib, "has_gib": fit.has_gib,
            "code": fit.code}


def verdict_to_json(verdict: Verdict, gpus: Mapping[str, GpuSpec]) -> dict[str, Any]:
    """Training answers keep their shape; serving and running add `pinned`, `command` and `precisions`,
    and `pinned` appears for any answer about hardware the user named."""
    out = _common_json(verdict, gpus)
    serving = verdict.assumptions.get("method") in ("serving", "running")
    if serving or verdict.pinned is not None:
        out["pinned"] = pinned_to_json(verdict.pinned, gpus) if verdict.pinned is not None else None
    if serving:
        out["command"] = command_to_json(verdict.command)
        out["precisions"] = [precision_to_json(p) for p in verdict.precisions]
    return out


def _common_json(verdict: Verdict, gpus: Mapping[str, GpuSpec]) -> dict[str, Any]:
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
