"""Findings of serving plans: the fit, the quantisation's quality caveat, buying the card, and for the user's own
hardware what would make it work (a smaller precision, more cards, or offload and how slow)."""

from __future__ import annotations

from collections.abc import Sequence

from rules.market.cost import break_even
from rules.plans.serving import SERVING_COUNTS, ServingPlan, ServingSpace, valid_counts
from rules.speed.serving import HOST_RAM_GBS, Rate
from rules.tables import RuleTables
from rules.types import GpuSpec
from rules.verdict import Finding, Option, Outcome
from rules.workload.formats import weight_format
from rules.workload.serving import NATIVE_QUALITY_CODE, QUALITY_CODES, quality_code
from rules.workload.shapes import Shape


def quality_finding(precision: str, shape: Shape | None = None) -> Finding:
    """The caveat of a precision as a code (the cards say what fp8 / int8 / 4-bit / GGUF cost in quality), for
    `shape`'s model when given (`quality_code`: none for the 4-bit format it is published in)."""
    fmt = weight_format(precision)
    code = quality_code(precision, shape) if shape is not None else QUALITY_CODES[fmt.family]
    if code == NATIVE_QUALITY_CODE:
        return Finding(code, "info", {"precision": precision})
    outcome: Outcome = "info" if fmt.family in ("16bit", "fp8") else "warn"
    return Finding(code, outcome, {"precision": precision, "bits_per_weight": round(fmt.bits, 3)})


def option_findings(option: Option, gpu: GpuSpec, tables: RuleTables,
                    shape: Shape | None = None) -> tuple[Finding, ...]:
    out = [Finding("fit.vram", "pass", {
        "needed_gib": round(option.memory.per_gpu_gib, 1), "high_gib": round(option.memory.high_gib, 1),
        "has_gib": gpu.vram_gb, "headroom_pct": round(100 * (1 - option.memory.per_gpu_gib / gpu.vram_gb), 1)})]
    if option.precision and weight_format(option.precision).quantised:
        out.append(quality_finding(option.precision, shape))
    if gpu.software_stack.lower() == "rocm":
        out.append(Finding("stack.rocm", "warn", {"gpu": gpu.id}))
    if option.offer is not None:
        numbers = break_even(gpu, option.offer, tables)
        if numbers is not None:
            out.append(Finding("cost.buy_vs_rent", "info", {**numbers, "gpus": option.count,
                                                            "power_usd_per_kwh": tables.power_usd_per_kwh}))
    elif gpu.purchase_usd is not None:
        out.append(Finding("cost.purchase", "info", {"gpus": option.count,
                                                     "purchase_usd": float(gpu.purchase_usd) * option.count}))
    return tuple(out)


def _more_gpus(space: ServingSpace, gpu: GpuSpec, count: int, precision: str, engine: str) -> Finding | None:
    """The fewest cards of this GPU (more than the user has) that hold the model at `precision`."""
    for more in valid_counts(gpu, space.shape, engine, [c for c in SERVING_COUNTS if c > count]):
        plan = space.plan(gpu, more, precision, engine)
        if plan.fits:
            return Finding("pinned.more_gpus", "info", {"gpu": gpu.id, "gpus": more, "precision": precision,
                                                        "needed_gib": round(plan.needed_gib, 1)})
    return None


def pinned_findings(space: ServingSpace, gpu: GpuSpec, count: int, plans: Sequence[ServingPlan],
                    chosen: ServingPlan, rate: Rate | None) -> list[Finding]:
    """What it takes on the named hardware: which precision fits (and what the first choice needed), or
    how many more cards, or CPU offload and its (upper-bound) speed."""
    first = plans[0]
    out: list[Finding] = []
    if chosen.fits and chosen is not first:
        out.append(Finding("pinned.quantized", "info", {
            "precision": chosen.setup.weight_format, "needed_gib": round(chosen.needed_gib, 1),
            "first_precision": first.setup.weight_format, "first_needed_gib": round(first.needed_gib, 1),
            "has_gib": round(chosen.has_gib, 1)}))
    if chosen.fits:
        out.append(quality_finding(chosen.setup.weight_format, space.shape))
        return out
    engine = chosen.setup.engine
    for precision in dict.fromkeys((first.setup.weight_format, chosen.setup.weight_format)):
        more = _more_gpus(space, gpu, count, precision, engine)
        if more is not None:
            out.append(more)
    if rate is not None:  # only engines that can keep layers in host RAM (llama.cpp, Ollama, LM Studio)
        out.append(Finding("pinned.offload", "warn", {
            "offload_gib": round(chosen.needed_gib - chosen.has_gib, 1), "precision": chosen.setup.weight_format,
            "output_tokens_per_s_per_user": round(rate.output_tokens_per_s_per_user, 2),
            "host_ram_gbs": HOST_RAM_GBS}))
    return out
