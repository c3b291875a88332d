"""What a comparison concludes: which compared GPU to pick for a workload, and, without one, what each
GPU is best at from its catalog facts (never a workload nobody gave)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from rules.types import GpuSpec

SAME_PCT = 2.0  # differences under 2 % (cost or time per job) are noise in the estimates, not a reason


@dataclass(frozen=True, slots=True)
class Contender:
    """One compared GPU's best plan for the workload: how many it needs, hours and cost per job (None = no fit,
    or no time/price known)."""

    gpu_id: str
    count: int | None
    hours: float | None = None
    cost_usd: Decimal | None = None

    def __init__(self, gpu_id: str, count: int | None, hours: float | None = None,
                 cost_usd: Decimal | None = None) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "gpu_id", gpu_id)
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "hours", hours)
        object.__setattr__(self, "cost_usd", cost_usd)


@dataclass(frozen=True, slots=True)
class ComparisonVerdict:
    """`outcome`: "pick" (a winner over a runner-up, with its reasons), "only_fit" or "none_fit".

    `reasons` are codes in the order they are told: fewer_gpus or more_gpus, cheaper, faster or slower, then
    same (no lead worth telling) or unmeasured (no time or price for both); `numbers` carries count,
    other_count, cheaper_pct, faster_pct, slower_pct as they apply.
    """

    outcome: str
    winner: str | None = None
    runner_up: str | None = None
    reasons: tuple[str, ...] = ()
    numbers: Mapping[str, float | int] = field(default_factory=dict)


def decide_comparison(contenders: Sequence[Contender], objective: str = "cheapest") -> ComparisonVerdict:
    """Pick among the GPUs that fit: lowest cost per job (the default objective), or shortest time when the
    user asked for the fastest; then fewer GPUs; then the order the user named them. The winner is told
    against the runner-up: fewer GPUs, how much cheaper or faster, and how much slower when it is."""
    fitting = [c for c in contenders if c.count is not None]
    if not fitting:
        return ComparisonVerdict("none_fit")
    if len(fitting) == 1:
        only = fitting[0]
        return ComparisonVerdict("only_fit", only.gpu_id, numbers={"count": only.count or 0})
    order = {c.gpu_id: i for i, c in enumerate(contenders)}
    ranked = sorted(fitting, key=_ranking(objective, order))
    winner, other = ranked[0], ranked[1]
    assert winner.count is not None and other.count is not None
    numbers: dict[str, float | int] = {"count": winner.count, "other_count": other.count}
    reasons: list[str] = []
    if winner.count < other.count:
        reasons.append("fewer_gpus")
    elif winner.count > other.count:
        reasons.append("more_gpus")
    cheaper = _lead_pct(winner.cost_usd, other.cost_usd)
    faster = _lead_pct(winner.hours, other.hours)
    if cheaper is not None and cheaper >= SAME_PCT:
        reasons.append("cheaper")
        numbers["cheaper_pct"] = cheaper
    if faster is not None and faster >= SAME_PCT:
        reasons.append("faster")
        numbers["faster_pct"] = faster
    elif faster is not None and -faster >= SAME_PCT:
        reasons.append("slower")
        numbers["slower_pct"] = -faster  # takes this much longer than the runner-up
    if cheaper is None and faster is None:
        reasons.append("unmeasured")  # no price and no time for both: nothing but the counts to go on
    elif not [r for r in reasons if r != "more_gpus"]:
        reasons.append("same")
    return ComparisonVerdict("pick", winner.gpu_id, other.gpu_id, tuple(reasons), numbers)


def _ranking(objective: str, order: Mapping[str, int]) -> Callable[[Contender], tuple[float, float, float, int]]:
    inf = float("inf")

    def cost(c: Contender) -> float:
        return float(c.cost_usd) if c.cost_usd is not None else inf

    def hours(c: Contender) -> float:
        return c.hours if c.hours is not None else inf

    if objective == "fastest":
        return lambda c: (hours(c), cost(c), float(c.count or 0), order[c.gpu_id])
    return lambda c: (cost(c), hours(c), float(c.count or 0), order[c.gpu_id])


def _lead_pct(mine: Decimal | float | None, theirs: Decimal | float | None) -> float | None:
    """How much lower `mine` is than `theirs`, in % of theirs (negative when higher); None without both."""
    if mine is None or theirs is None or float(theirs) <= 0:
        return None
    return round(100 * (float(theirs) - float(mine)) / float(theirs), 0)


@dataclass(frozen=True, slots=True)
class Strength:
    """A catalog fact in which one compared GPU leads all the others: a code and its value."""

    code: str  # most_memory, fastest_memory, most_bf16, only_fp8, most_fp8, nvlink_only, cheapest_rent, lowest_power, newest
    numbers: Mapping[str, float | int | Decimal | str]

    def __init__(self, code: str, numbers: Mapping[str, float | int | Decimal | str]) -> None:
        # Spelled out: mypyc compiles it, not a dataclass's generated __init__ (rules/__init__.py).
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "numbers", numbers)


def catalog_strengths(gpus: Sequence[GpuSpec], rent_usd: Mapping[str, Decimal | None]) -> dict[str, tuple[Strength, ...]]:
    """Per GPU, the facts in which it is strictly ahead of every other compared GPU (a shared lead is no lead).
    `rent_usd`: the cheapest on-demand $/GPU-hour per GPU (None = nobody rents it)."""
    out: dict[str, list[Strength]] = {g.id: [] for g in gpus}

    def lead(code: str, value: Callable[[GpuSpec], float | None], key: str, lower: bool = False,
             shown: Callable[[float], float | str] = lambda v: v) -> None:
        known = [(g, v) for g in gpus if (v := value(g)) is not None]
        if len(known) < 2:
            return
        best = (min if lower else max)(v for _, v in known)
        leaders = [g for g, v in known if v == best]
        if len(leaders) == 1:
            out[leaders[0].id].append(Strength(code, {key: shown(best)}))

    lead("most_memory", lambda g: g.vram_gb, "vram_gb")
    lead("fastest_memory", lambda g: g.memory_bandwidth_gbs, "bandwidth_gbs")
    lead("most_bf16", lambda g: g.bf16_dense_tflops or g.fp16_dense_tflops, "bf16_tflops")
    fp8 = [g for g in gpus if g.fp8_support and g.fp8_dense_tflops]
    if len(fp8) == 1:
        out[fp8[0].id].append(Strength("only_fp8", {"fp8_tflops": fp8[0].fp8_dense_tflops or 0.0}))
    else:
        lead("most_fp8", lambda g: g.fp8_dense_tflops if g.fp8_support else None, "fp8_tflops")
    linked = [g for g in gpus if g.has_nvlink_class_link]
    if len(linked) == 1:
        out[linked[0].id].append(Strength("nvlink_only", {"link": linked[0].scaleup_link}))
    lead("cheapest_rent", lambda g: float(r) if (r := rent_usd.get(g.id)) is not None else None, "usd_per_gpu_hour",
         lower=True)
    lead("lowest_power", lambda g: float(g.tdp_w), "tdp_w", lower=True)
    lead("newest", lambda g: float(g.release_year), "year", shown=lambda v: str(int(v)))  # "2024", never "2,024"
    return {gpu_id: tuple(s) for gpu_id, s in out.items()}
