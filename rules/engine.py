"""Evaluate one workload over the catalog: shape, defaults, fit per GPU, time, cost, ranking, tier, guidance."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from rules.diffusion import find_diffusion_model
from rules.guidance import guidance_findings, option_findings
from rules.notable import notable_rejects
from rules.offer_book import OfferBook, cheapest_in
from rules.offers import SHARDED, cheapest, price_findings
from rules.plans import CandidateSpace, Fit, counts_for, fit_gpu
from rules.ranking import (
    REFERENCE_TOKENS,
    Scored,
    capacity_of,
    objective_for,
    plan_usd_per_hour,
    rank,
)
from rules.setup import DEFAULT_METHOD, UNTIMED_METHODS, Setup
from rules.shapes import Shape, shape_from_model, typical_shape, with_params
from rules.tables import RuleTables
from rules.tier import pick_tier
from rules.timing import dataset_tokens, job_hours, offer_cost
from rules.types import GpuSpec, Offer, Provider, Workload
from rules.verdict import Finding, Number, Option, Rejection, Verdict

DEFAULT_PARAMS_B = 8.0
TOP_OPTIONS = 3
# Default dataset when the objective is cost and no size was given: typical instruction-tuning sets
# hold 1k-100k examples (LIMA 1,000, arXiv:2305.11206; Dolly 15,011; Alpaca 52,002), 10k is their
# geometric middle; one epoch, each sample at the sequence length. Stated in the assumptions.
DEFAULT_SAMPLES = 10_000


@dataclass(frozen=True, slots=True)
class Search:
    """One pass of the fit search over a pool of GPUs."""

    scored: list[Scored]
    rejections: list[Rejection]
    fits: dict[str, Fit]


def resolve_shape(workload: Workload, method: str) -> tuple[Shape, list[Finding]]:
    """The model's shape, a typical one for a bare parameter count, or an 8B default."""
    if method == "diffusion":
        preset = find_diffusion_model(workload.model, workload.params_b)
        return replace(typical_shape(preset.denoiser_params_b), name=preset.id, assumed=False), []
    if workload.model is not None:
        shape = shape_from_model(workload.model)
        if workload.params_b and abs(workload.params_b - shape.params_b) > 0.05 * shape.params_b:
            shape = with_params(shape, workload.params_b)
        return shape, []
    params = workload.params_b or DEFAULT_PARAMS_B
    shape = typical_shape(params)
    code = "model.typical_shape" if workload.params_b else "model.missing"
    return shape, [Finding(code, "info" if workload.params_b else "warn",
                           {"params_b": params, "layers": shape.layers, "hidden_size": shape.hidden_size})]


def resolve_method(workload: Workload) -> str:
    if workload.method:
        return workload.method
    if workload.model is not None and workload.model.kind == "diffusion":
        return "diffusion"
    return DEFAULT_METHOD


def assumptions_of(workload: Workload, setup: Setup, shape: Shape) -> tuple[dict[str, Number | bool], tuple[str, ...]]:
    values: dict[str, Number | bool] = {
        "model": shape.name, "params_b": shape.params_b, "method": setup.method,
        "framework": setup.framework, "recipe": setup.recipe, "optimizer": setup.optimizer,
        "precision": setup.weight_format, "seq_len": setup.seq_len, "batch_size": setup.batch_size,
        "grad_checkpointing": setup.checkpointing, "gpus": setup.gpus, "sharding": setup.sharding,
        "offload": setup.offload, "spot": bool(workload.spot), "epochs": workload.epochs or 1.0,
    }
    if setup.uses_adapters:
        values["lora_rank"] = setup.lora_rank
        values["lora_targets"] = ",".join(setup.lora_targets)
    if setup.method == "diffusion":
        values["resolution"] = setup.resolution
    given = {"model": workload.model or workload.params_b, "params_b": workload.params_b or workload.model,
             "recipe": workload.recipe, "precision": workload.precision,
             "grad_checkpointing": workload.grad_checkpointing, "spot": workload.spot,
             "lora_targets": workload.lora_targets, "resolution": workload.resolution}
    defaulted = tuple(k for k in values if (given[k] if k in given else getattr(workload, k, None)) is None)
    return values, defaulted


def score_option(fit: Fit, gpu: GpuSpec, offers: Sequence[Offer], workload: Workload,
                 shape: Shape, tables: RuleTables, providers: Mapping[str, Provider],
                 book: OfferBook | None = None) -> Scored:
    """The option (exact Decimal cost filled in later, for shown options only) and its ranking numbers."""
    candidate = fit.candidate
    assert candidate is not None
    setup = candidate.setup
    tokens = dataset_tokens(workload, setup)
    timed = setup.method not in UNTIMED_METHODS
    hours = ref_hours = None
    if timed:
        hours = job_hours(tokens, shape.active_params_b, gpu, candidate.count, setup, tables,
                          workload.precision) if tokens is not None else None
        ref_hours = hours if hours is not None else job_hours(
            REFERENCE_TOKENS, shape.active_params_b, gpu, candidate.count, setup, tables, workload.precision)
    rework = tables.spot_rework_fraction
    prefer_link = candidate.count > 1 and setup.sharding in SHARDED and gpu.has_nvlink_class_link
    if book is not None:  # the same pick from the snapshot's index (rules.offer_book)
        pick = cheapest_in(book, gpu.id, candidate.count, hours, spot=bool(workload.spot), rework=rework,
                           providers=providers, minimum_s=tables.billing_minimum_s, prefer_link=prefer_link)
    else:
        pick = cheapest(offers, candidate.count, hours, spot=bool(workload.spot), rework=rework,
                        providers=providers, minimum_s=tables.billing_minimum_s, prefer_link=prefer_link)
    offer, cost = pick.offer, pick.usd
    per_hour = plan_usd_per_hour(offer, candidate.count)
    work_usd = cost
    if work_usd is None and per_hour is not None and ref_hours is not None:
        work_usd = per_hour * ref_hours * (1.0 + (rework if workload.spot else 0.0))
    nodes = max(1, -(-candidate.count // 8))
    option = Option(gpu.id, candidate.count, nodes, setup.sharding, candidate.switches, candidate.estimate,
                    round(hours, 3) if hours is not None else None, None, offer, ())
    pcie_many = candidate.count > 2 and not gpu.has_nvlink_class_link
    return Scored(option, work_usd, per_hour, ref_hours, capacity_of(gpu, candidate.count, setup.method), pcie_many)


def with_cost(option: Option, workload: Workload, tables: RuleTables) -> Option:
    """The exact per-job cost (billing increments, spot rework) on the option's offer."""
    if option.offer is None or option.hours is None:
        return option
    rework = tables.spot_rework_fraction if workload.spot else 0.0
    return replace(option, cost_usd=offer_cost(option.offer, option.count, option.hours, rework=rework,
                                               minimum_s=tables.billing_minimum_s))


def with_findings(option: Option, gpu: GpuSpec, setup: Setup, workload: Workload, tables: RuleTables,
                  offers: Sequence[Offer]) -> Option:
    """Findings are computed for the shown options only (keeps evaluate() fast)."""
    prices = price_findings(option, gpu, offers, spot=bool(workload.spot))
    return replace(option, findings=option_findings(option, gpu, setup, workload, tables) + prices)


def effective_workload(workload: Workload, method: str, objective: str) -> tuple[Workload, bool]:
    """With the cheapest objective and no dataset size, a stated default dataset makes cost per job computable."""
    if objective != "cheapest" or method in UNTIMED_METHODS or workload.tokens or workload.samples:
        return workload, False
    return replace(workload, samples=DEFAULT_SAMPLES), True


def search(pool: Mapping[str, GpuSpec], space: CandidateSpace, counts: tuple[int, ...], work: Workload,
           offers_by_gpu: Mapping[str, Sequence[Offer]], shape: Shape, tables: RuleTables,
           providers: Mapping[str, Provider], book: OfferBook | None = None) -> Search:
    scored: list[Scored] = []
    rejections: list[Rejection] = []
    fits: dict[str, Fit] = {}
    for gpu_id, gpu in pool.items():
        fit = fit_gpu(gpu, space, counts, tables.headroom_fraction)
        fits[gpu_id] = fit
        if fit.rejection is not None:
            rejections.append(fit.rejection)
        else:
            scored.append(score_option(fit, gpu, offers_by_gpu.get(gpu_id, ()), work, shape, tables, providers,
                                       book))
    return Search(scored, rejections, fits)


def pinned_finding(gpu_id: str, search_result: Search, gpus: Mapping[str, GpuSpec]) -> Finding:
    """A direct yes/no for the GPU (and count) the user named, with its per-GPU need."""
    fit = search_result.fits[gpu_id]
    if fit.candidate is not None:
        estimate = fit.candidate.estimate
        return Finding("fit.pinned", "pass", {
            "gpu": gpu_id, "gpus": fit.candidate.count, "needed_gib": round(estimate.per_gpu_gib, 1),
            "has_gib": gpus[gpu_id].vram_gb, "switches": ",".join(fit.candidate.switches)})
    assert fit.rejection is not None
    numbers = fit.rejection.numbers
    return Finding("fit.pinned", "fail", {
        "gpu": gpu_id, "gpus": numbers["gpus"], "needed_gib": numbers["needed_gib"],
        "has_gib": numbers["has_gib"], "reason": fit.rejection.code})


def priced_first(options: list[Option]) -> list[Option]:
    """Plans with a capable offer, in rank order; the unpriced only when nothing has a price."""
    return [o for o in options if o.offer is not None] or options


def shown_options(ranked: list[Option], alternatives: list[Option], pinned_gpu: str | None) -> list[Option]:
    """Pinned and fits: its plan first (priced or not), then the best others. Pinned and does not fit: the best
    plans overall, with the pinned GPU's own smallest fitting plan among the first three. No GPU pinned (a
    count nothing fits): the best plans at any count."""
    if pinned_gpu is None:
        return priced_first(alternatives)
    if ranked:
        return ranked[:1] + priced_first([o for o in alternatives if o.gpu_id != pinned_gpu])
    best = priced_first(alternatives)
    own = next((o for o in alternatives if o.gpu_id == pinned_gpu), None)
    if own is None or own in best[:TOP_OPTIONS]:
        return best
    rest = [o for o in best if o is not own]
    return rest[:TOP_OPTIONS - 1] + [own] + rest[TOP_OPTIONS - 1:]


def evaluate_workload(workload: Workload, *, gpus: Mapping[str, GpuSpec],
                      offers_by_gpu: Mapping[str, Sequence[Offer]], providers: Mapping[str, Provider],
                      tables: RuleTables, offer_book: OfferBook | None = None) -> Verdict:
    """`offer_book`: the same offers indexed once per snapshot (rules.offer_book); the result is identical."""
    method = resolve_method(workload)
    objective = objective_for(workload)
    work, dataset_assumed = effective_workload(workload, method, objective)
    shape, findings = resolve_shape(work, method)
    space = CandidateSpace(work, shape, method, 0.1 if shape.assumed else 0.0)
    counts = counts_for(work, method)
    pinned_gpu = workload.gpu if workload.gpu in gpus else None
    pool = {pinned_gpu: gpus[pinned_gpu]} if pinned_gpu else gpus
    hours_known = bool(work.tokens or work.samples)
    found = search(pool, space, counts, work, offers_by_gpu, shape, tables, providers, offer_book)
    ranked = rank(found.scored, objective, hours_known)
    if pinned_gpu is not None or (workload.gpus and not ranked):
        alt_counts = counts_for(replace(work, gpus=None), method)
        alternatives = search(gpus, space, alt_counts, work, offers_by_gpu, shape, tables, providers,
                              offer_book)
        shown = shown_options(ranked, rank(alternatives.scored, objective, hours_known), pinned_gpu)
        extra_rejections = [r for r in alternatives.rejections if r.gpu_id != pinned_gpu]
    else:
        alternatives, extra_rejections, shown = found, [], priced_first(ranked)
    if pinned_gpu is not None:
        findings.append(pinned_finding(pinned_gpu, found, gpus))
    top = tuple(with_findings(with_cost(o, work, tables), gpus[o.gpu_id],
                              space.candidate(o.count, o.switches).setup, work, tables,
                              offers_by_gpu.get(o.gpu_id, ()))
                for o in shown[:TOP_OPTIONS])
    reference = space.candidate(counts[0], ())
    chosen = space.candidate(top[0].count, top[0].switches).setup if top else reference.setup
    assumptions, defaulted = assumptions_of(workload, chosen, shape)
    if dataset_assumed:
        assumptions["samples"] = DEFAULT_SAMPLES
        defaulted += ("samples",)
    memory = top[0].memory if top else reference.estimate
    notable = notable_rejects(found.rejections + extra_rejections, alternatives, top, pinned_gpu, gpus, tables)
    tier = pick_tier(tables.tier_rows, method, shape.params_b, top[0] if top else None, reference.estimate)
    findings += guidance_findings(workload, reference.setup, top, gpus, providers, tables)
    if workload.gpu and workload.gpu not in gpus:
        findings.append(Finding("gpu.unknown", "warn", {"gpu": workload.gpu}))
    return Verdict(workload, assumptions, defaulted, memory, top, notable, tuple(findings), tier)
