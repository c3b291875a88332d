"""Guidance findings: per option (fit, links, FP8, budget, deadline) and per workload (spot, billing, data, ROCm).

The practices come from the guides (../shared/guides/002_5b313d5a94169c9f.txt: interconnect,
storage, billing granularity, spot + checkpoints, over-provisioning, offloading on an
under-memoried card; 003_caba77b3a62453c8.txt: the ROCm ecosystem caveat).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rules.market.cost import break_even
from rules.market.ownership import power_price
from rules.market.offers import SHARDED
from rules.speed.training import peak_tflops
from rules.tables import RuleTables
from rules.types import GpuSpec, Provider, Workload
from rules.verdict import Finding, Option
from rules.workload.setup import Setup


# Beyond this much wall-clock time (about three months) a pick without a deadline is flagged (`time.long`).
LONG_JOB_HOURS = 2160.0


def _fit(option: Option, gpu: GpuSpec) -> Finding:
    return Finding("fit.vram", "pass", {
        "needed_gib": round(option.memory.per_gpu_gib, 1), "high_gib": round(option.memory.high_gib, 1),
        "has_gib": gpu.vram_gb, "headroom_pct": round(100 * (1 - option.memory.per_gpu_gib / gpu.vram_gb), 1),
    })


def link_findings(option: Option, gpu: GpuSpec, *, serving: bool = False, pcie_low: float = 1.0) -> list[Finding]:
    """Sharded multi-GPU wants NVLink-class links; > 2 PCIe-only cards is flagged. `serving`: the cards share a
    model by tensor parallelism (an all-reduce per layer of every decode step), not a training step's gradients;
    `pcie_low` (rule tables `serving.tp_pcie_low`): what the low end of its tokens/s range keeps for cards
    without peer-to-peer transfers, said as how much slower (`slower_pct`)."""
    out: list[Finding] = []
    if option.count > 1 and option.sharding in SHARDED:
        if serving and not gpu.has_nvlink_class_link:
            out.append(Finding("link.pcie_tp", "warn", {"gpus": option.count, "link": gpu.scaleup_link,
                                                        "slower_pct": round(100 * (1 - pcie_low))}))
        elif gpu.has_nvlink_class_link:
            out.append(Finding("link.nvlink", "pass", {"link": gpu.scaleup_link, "link_gbs": gpu.scaleup_bw_gbs}))
        elif option.count > 2:
            out.append(Finding("link.pcie_many", "warn", {"gpus": option.count, "link": gpu.scaleup_link}))
        elif "bridge" in gpu.scaleup_link.lower():  # a pair of consumer cards (RTX 3090): NVLink only if fitted
            out.append(Finding("link.bridge", "warn", {"gpus": option.count, "link": gpu.scaleup_link,
                                                       "link_gbs": gpu.scaleup_bw_gbs}))
        else:
            out.append(Finding("link.pcie", "warn", {"gpus": option.count, "link": gpu.scaleup_link}))
    if option.nodes > 1:
        out.append(Finding("link.multinode", "info", {"nodes": option.nodes}))
    return out


def option_findings(option: Option, gpu: GpuSpec, setup: Setup, workload: Workload,
                    tables: RuleTables) -> tuple[Finding, ...]:
    out = [_fit(option, gpu), *link_findings(option, gpu)]
    if option.switches:
        out.append(Finding("plan.switches", "info", {"switches": ",".join(option.switches)}))
    if "offload" in option.switches or option.memory.cpu_offload_gib > 0:
        out.append(Finding("offload.slow", "warn", {"cpu_offload_gib": option.memory.cpu_offload_gib}))
    if option.memory.nvme_offload_gib > 0:
        out.append(Finding("offload.nvme", "warn", {"nvme_offload_gib": option.memory.nvme_offload_gib}))
    if workload.precision == "fp8":
        _, used = peak_tflops(gpu, setup, "fp8")
        out.append(Finding("precision.fp8", "pass" if used else "warn",
                           {"gpu_fp8": str(gpu.fp8_support).lower(), "framework": setup.framework}))
    if workload.budget_usd is not None and option.cost_usd is not None and option.cost_usd > workload.budget_usd:
        out.append(Finding("budget.over", "fail", {"cost_usd": float(option.cost_usd),
                                                   "budget_usd": float(workload.budget_usd)}))
    if workload.deadline_hours is not None and option.hours is not None and option.hours > workload.deadline_hours:
        out.append(Finding("deadline.miss", "fail", {"hours": option.hours, "deadline_hours": workload.deadline_hours}))
    if gpu.software_stack.lower() == "rocm":
        out.append(Finding("stack.rocm", "warn", {"gpu": gpu.id}))
    buy = _buy_vs_rent(option, gpu, workload, tables)
    if buy is not None:
        out.append(buy)
    return tuple(out)


def _buy_vs_rent(option: Option, gpu: GpuSpec, workload: Workload, tables: RuleTables) -> Finding | None:
    """Owning beats renting after break_even_hours of use (purchase / (rent - power per hour))."""
    if option.offer is None:
        return None
    kwh = power_price(workload, tables)
    numbers = break_even(gpu, option.offer, tables, usd_per_kwh=kwh)
    if numbers is None:
        return None
    result: dict[str, float | int | str] = {**numbers, "gpus": option.count, "power_usd_per_kwh": kwh}
    if option.hours is not None:
        result["job_share_of_break_even_pct"] = round(100 * option.hours / numbers["break_even_hours"], 2)
    return Finding("cost.buy_vs_rent", "info", result)


def guidance_findings(workload: Workload, setup: Setup, top: Sequence[Option], gpus: Mapping[str, GpuSpec],
                      providers: Mapping[str, Provider], tables: RuleTables,
                      named_one_card: bool | None = None) -> list[Finding]:
    """`named_one_card`: whether one card of the GPU the user named holds the job (None: no GPU named)."""
    out: list[Finding] = []
    best = top[0] if top else None
    if not top:
        out.append(Finding("fit.none", "fail", {"gpus_tried": len(gpus)}))
    if not setup.timed:
        # No hours: no measured decode rates / image throughputs in the calibration data, and the
        # Workload has no images x steps input; a guess would be presented as a fact.
        reason = "no_measured_decode_rates" if setup.method == "inference" else "no_images_steps_input"
        method = "diffusion" if setup.is_diffusion else setup.method
        out.append(Finding("time.not_estimated", "info", {"method": method, "reason": reason}))
    if best is not None and best.hours is not None and best.hours > LONG_JOB_HOURS and workload.deadline_hours is None:
        # "cheapest" on a pretraining-sized job can be years on one or two cards: say so, and how to change it
        out.append(Finding("time.long", "warn", {"hours": round(best.hours, 1), "wall_hours": round(best.hours, 1),
                                                 "gpus": best.count, "gpu": best.gpu_id}))
    if workload.spot and setup.is_training:
        out.append(Finding("spot.checkpoint", "warn", {
            "interval_min": tables.checkpoint_interval_min, "rework_pct": round(100 * tables.spot_rework_fraction),
            "where": "persistent_storage"}))
    if best is not None and best.offer is not None:
        increment = best.offer.billing_increment_s
        if best.hours is not None and best.hours < 2 and increment >= 3600:
            out.append(Finding("billing.hourly_short_run", "warn", {"hours": best.hours, "billing_increment_s": increment}))
        elif increment <= 60:
            out.append(Finding("billing.per_second", "info", {"billing_increment_s": increment}))
    if setup.is_training and (workload.tokens or workload.samples):
        out.append(Finding("data.nvme", "info", {"tokens": workload.tokens or 0}))
    # One card of the GPU the user named, when they named one ("2x 3090" for a job one L40S holds is not
    # "fits on one card" to someone who owns two 3090s; "4x 4090" for a job one 4090 holds is).
    one_card = named_one_card if named_one_card is not None else any(o.count == 1 for o in top)
    if setup.uses_adapters and workload.gpus and workload.gpus > 1 and one_card:
        out.append(Finding("provision.adapter_one_card", "warn", {"gpus_asked": workload.gpus}))
    if best is not None and best.count > 1 and best.sharding in SHARDED:
        out.append(Finding("link.nvlink_for_sharding", "info", {"gpus": best.count}))
    if any(gpus[o.gpu_id].software_stack.lower() == "rocm" for o in top):
        out.append(Finding("stack.rocm", "warn", {}))
    if workload.budget_usd is not None and top and all(o.cost_usd is not None and o.cost_usd > workload.budget_usd for o in top):
        out.append(Finding("budget.none_within", "fail", {"budget_usd": float(workload.budget_usd)}))
    return out
