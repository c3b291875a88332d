"""What each memory saver of a plan bought and cost: one `plan.switch` finding per switch, in ladder order.

Numbers per switch (finding `plan.switch`): `switch` (stable id, rules.plans.switches), `order` (1 = first
turned on), `saved_gib` (per-GPU need before minus after, at the plan's GPU count), `slowdown_pct` (hours
with it / hours without it - 1, from the time model on the plan's GPU: FLOPs for recomputation,
utilisation for QLoRA and small micro-batches, measured ratios for the others, host traffic for paging
and offload; negative = faster), and `frameworks` (comma list of the frameworks that offer it; "any").
"""

from __future__ import annotations

from rules.plans.fit import CandidateSpace, usable_gib
from rules.plans.scoring import plan_hours
from rules.plans.switches import SWITCH_FRAMEWORKS
from rules.plans.ranking import REFERENCE_TOKENS
from rules.tables import RuleTables
from rules.types import GpuSpec, Workload
from rules.verdict import Finding, Option
from rules.workload.shapes import Shape


def switch_findings(option: Option, gpu: GpuSpec, space: CandidateSpace, shape: Shape, tables: RuleTables,
                    workload: Workload) -> tuple[Finding, ...]:
    """One finding per switch of the option: memory saved and the speed it costs on this GPU."""
    timed = space.candidate(option.count, ()).setup.timed
    limit = usable_gib(gpu, tables.headroom_fraction)
    out: list[Finding] = []
    before = space.candidate(option.count, ())
    hours_before: float | None = None  # the previous step's hours after, carried over
    for index, switch in enumerate(option.switches):
        after = space.candidate(option.count, option.switches[: index + 1])
        if switch == "paged_optimizer" or after.setup.offload:  # state on the host: what this card holds
            after = space.on_device(after, limit)
        saved = before.estimate.per_gpu_gib - after.estimate.per_gpu_gib
        numbers: dict[str, float | int | str] = {
            "switch": switch, "order": index + 1, "saved_gib": round(max(saved, 0.0), 1),
            "frameworks": ",".join(SWITCH_FRAMEWORKS.get(switch) or ("any",)),
        }
        if timed:
            if hours_before is None:
                hours_before = plan_hours(REFERENCE_TOKENS, before, gpu, shape, tables, workload)
            hours_after = plan_hours(REFERENCE_TOKENS, after, gpu, shape, tables, workload)
            numbers["slowdown_pct"] = round(100.0 * (hours_after / hours_before - 1.0), 1)
            hours_before = hours_after
        out.append(Finding("plan.switch", "info", numbers))
        before = after
    return tuple(out)
