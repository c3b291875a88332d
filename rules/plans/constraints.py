"""Hard constraints before ranking: a deadline and a budget remove the plans that break them, by name.

The objective (cheapest, fastest, simplest, balanced) then ranks what is left; with a deadline and no
objective the cheapest plan that meets it wins (issue 17 item 5). When nothing meets a constraint, nothing
is removed for it and a finding says so (`deadline.none_meets`, `budget.none_within`).

Findings and rejections (stable codes; numbers named with their units):
- rejection `deadline.miss` {hours, deadline_hours, gpus}: a plan that would finish after the deadline;
- rejection `budget.over` {cost_usd, budget_usd, gpus} / `budget.over_per_hour` {usd_per_hour,
  budget_usd_per_hour, gpus}: a plan that costs more than the budget per job / per hour;
- finding `rank.decided_by` {constraint: deadline | budget | budget_per_hour | objective, objective,
  removed, gpu, gpus, hours, cost_usd, ...}: what chose the first plan; when a constraint decided, the
  plan the objective alone would have picked is named (`unconstrained_gpu`, `unconstrained_gpus`,
  `unconstrained_hours`, `unconstrained_cost_usd`);
- finding `deadline.none_meets` {deadline_hours, best_hours, gpu, gpus, gpus_needed}: even the fastest plan
  misses it; `gpus_needed` of its card would meet it at best (gpus_needed);
- finding `deadline.scaled` {gpu, gpus_from, hours_from, gpus, hours, deadline_hours} (rules.plans.search):
  a shown plan grew to more GPUs of its type to meet the deadline.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rules.plans.ranking import Scored
from rules.types import Workload
from rules.verdict import Finding, Number, Option, Rejection


@dataclass(frozen=True, slots=True)
class Constrained:
    """The plans that meet every constraint, the ones removed (as rejections) and the workload findings."""

    kept: list[Scored]
    removed: tuple[Rejection, ...]
    findings: tuple[Finding, ...]
    constraint: str  # the last constraint that removed a plan: deadline, budget, budget_per_hour, "" (none)

    def __init__(self, kept: list[Scored], removed: tuple[Rejection, ...], findings: tuple[Finding, ...],
                 constraint: str) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "kept", kept)
        object.__setattr__(self, "removed", removed)
        object.__setattr__(self, "findings", findings)
        object.__setattr__(self, "constraint", constraint)


def _filter(scored: list[Scored], keep: Callable[[Scored], bool], reject: Callable[[Scored], Rejection]
            ) -> tuple[list[Scored], list[Rejection]]:
    kept = [s for s in scored if keep(s)]
    if not kept:  # nothing meets it: remove nothing (the findings say so)
        return scored, []
    return kept, [reject(s) for s in scored if not keep(s)]


def apply_constraints(scored: list[Scored], workload: Workload) -> Constrained:
    """Remove plans that miss the deadline or break the budget (per job, per hour); name each one removed."""
    kept, removed, findings, constraint = list(scored), [], [], ""
    deadline = workload.deadline_hours
    if deadline is not None:
        timed = [s for s in kept if s.job_hours is not None]
        if timed:
            kept, out = _filter(kept, lambda s: s.job_hours is None or s.job_hours <= deadline,
                                lambda s: Rejection(s.gpu_id, "deadline.miss", {
                                    "hours": s.job_hours or 0.0, "deadline_hours": deadline,
                                    "gpus": s.count}))
            removed += out
            constraint = "deadline" if out else constraint
            if not out and all((s.job_hours or 0.0) > deadline for s in timed):
                # the fastest plan one can rent (the card shows priced plans first), else the fastest of all
                best = min([s for s in timed if s.offer is not None] or timed, key=lambda s: s.job_hours or 0.0)
                findings.append(Finding("deadline.none_meets", "fail", {
                    "deadline_hours": deadline, "best_hours": best.job_hours or 0.0, "gpu": best.gpu_id,
                    "gpus": best.count, "gpus_needed": gpus_needed(best.count, best.job_hours or 0.0, deadline)}))
    budget = float(workload.budget_usd) if workload.budget_usd is not None else None
    if budget is not None:
        kept, out = _filter(kept, lambda s: s.work_usd is None or s.work_usd <= budget,
                            lambda s: Rejection(s.gpu_id, "budget.over", {
                                "cost_usd": round(s.work_usd or 0.0, 2), "budget_usd": budget,
                                "gpus": s.count}))
        removed += out
        constraint = "budget" if out else constraint
    per_hour = float(workload.budget_usd_per_hour) if workload.budget_usd_per_hour is not None else None
    if per_hour is not None:
        kept, out = _filter(kept, lambda s: s.plan_usd_per_hour is None or s.plan_usd_per_hour <= per_hour,
                            lambda s: Rejection(s.gpu_id, "budget.over_per_hour", {
                                "usd_per_hour": round(s.plan_usd_per_hour or 0.0, 2),
                                "budget_usd_per_hour": per_hour, "gpus": s.count}))
        removed += out
        constraint = "budget_per_hour" if out else constraint
    return Constrained(kept, tuple(removed), tuple(findings), constraint)


def gpus_needed(count: int, hours: float, deadline_hours: float) -> int:
    """The fewest cards of a plan's type that could meet the deadline: its GPU-hours over the deadline, rounded up
    (perfect scaling, so a floor: collectives and stragglers only add to it)."""
    if deadline_hours <= 0:
        return count
    return max(count, math.ceil(round(count * hours / deadline_hours, 6)))


def decided_by(constrained: Constrained, ranked: Sequence[Option], unconstrained: Sequence[Scored],
               objective: str, workload: Workload) -> Finding | None:
    """Which constraint chose the first plan, with its numbers and the plan it displaced."""
    if not ranked:
        return None
    top = ranked[0]
    numbers: dict[str, Number] = {
        "constraint": "objective", "objective": objective, "removed": len(constrained.removed),
        "gpu": top.gpu_id, "gpus": top.count, "hours": top.hours if top.hours is not None else "",
        "cost_usd": float(top.cost_usd) if top.cost_usd is not None else "",
    }
    first = unconstrained[0] if unconstrained else None
    if (constrained.constraint and first is not None
            and (first.gpu_id, first.count) != (top.gpu_id, top.count)):
        numbers["constraint"] = constrained.constraint
        numbers.update({"unconstrained_gpu": first.gpu_id, "unconstrained_gpus": first.count,
                        "unconstrained_hours": first.job_hours if first.job_hours is not None else "",
                        "unconstrained_cost_usd": round(first.work_usd, 2) if first.work_usd is not None else ""})
        if workload.deadline_hours is not None:
            numbers["deadline_hours"] = workload.deadline_hours
        if workload.budget_usd is not None:
            numbers["budget_usd"] = float(workload.budget_usd)
        if workload.budget_usd_per_hour is not None:
            numbers["budget_usd_per_hour"] = float(workload.budget_usd_per_hour)
    return Finding("rank.decided_by", "info", numbers)
