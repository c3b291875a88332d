"""Evaluate one workload over the catalog: shape, defaults, fit per GPU, time, cost, ranking, tier, guidance."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from rules.market.book import OfferBook
from rules.market.ownership import ownership_findings
from rules.memory.parts import on_basis
from rules.memory.diffusion import DEFAULT_VIDEO_FRAMES, default_resolution, find_diffusion_model
from rules.plans.explain import switch_findings
from rules.plans.fit import CandidateSpace, counts_for, fit_outcome, margin_numbers
from rules.plans.guidance import LONG_JOB_HOURS, guidance_findings
from rules.plans.notable import notable_rejects
from rules.plans.constraints import apply_constraints, decided_by
from rules.plans.ranking import Scored, objective_for, rank_scored
from rules.plans.search import Search, search, with_cost, with_findings
from rules.plans.serving_verdict import evaluate_serving
from rules.plans.tier import pick_tier
from rules.tables import RuleTables
from rules.types import GpuSpec, Method, Offer, Provider, PurchasePrice, Workload, owned_only
from rules.verdict import Finding, Number, Option, Pinned, Verdict
from rules.workload.serving import serving_method
from rules.workload.setup import DEFAULT_METHOD, UNTIMED_METHODS, Setup
from rules.workload.families import with_family_vocab
from rules.workload.shapes import Shape, shape_from_model, typical_shape, with_params

DEFAULT_PARAMS_B = 8.0
# Software stacks the memory and time models are not built for (they describe CUDA, ROCm and Gaudi
# frameworks, and MLX/Metal and llama.cpp for serving on Apple silicon).
UNMODELLED_STACKS = frozenset({"XLA", "Neuron"})
TOP_OPTIONS = 3
# Default dataset when the objective is cost and no size was given: typical instruction-tuning sets
# hold 1k-100k examples (LIMA 1,000, arXiv:2305.11206; Dolly 15,011; Alpaca 52,002), 10k is their
# geometric middle; one epoch, each sample at the sequence length. Stated in the assumptions.
DEFAULT_SAMPLES = 10_000


def resolve_shape(workload: Workload, method: str) -> tuple[Shape, list[Finding]]:
    """The model's shape, a typical one for a bare parameter count, or an 8B default."""
    if method == "diffusion" or resolve_family(workload) == "diffusion":
        preset = find_diffusion_model(workload.model, workload.params_b)
        return replace(typical_shape(preset.denoiser_params_b), name=preset.id, assumed=False), []
    if workload.model is not None:
        shape = shape_from_model(workload.model)
        if workload.params_b and abs(workload.params_b - shape.params_b) > 0.05 * shape.params_b:
            shape = with_params(shape, workload.params_b)
        return shape, []
    params = workload.params_b or DEFAULT_PARAMS_B
    shape = with_family_vocab(typical_shape(params), workload.family)
    code = "model.typical_shape" if workload.params_b else "model.missing"
    return shape, [Finding(code, "info" if workload.params_b else "warn",
                           {"params_b": params, "layers": shape.layers, "hidden_size": shape.hidden_size})]


def training_pool(gpus: Mapping[str, GpuSpec]) -> Mapping[str, GpuSpec]:
    """The GPUs a training plan is searched on when the user named none: not Apple silicon (the training
    model is for CUDA/ROCm frameworks), laptop GPUs, modded boards or GeForce GTX cards (nobody rents them; a
    user who owns one names it, and it is then evaluated as pinned hardware)."""
    return {k: g for k, g in gpus.items() if not (g.unified_memory or g.laptop or g.modified or owned_only(g))}


def _is_diffusion_model(workload: Workload) -> bool:
    return workload.model is not None and workload.model.kind == "diffusion"


def resolve_family(workload: Workload) -> str:
    """"diffusion" for image and video diffusion models (named family, legacy method, or catalog kind)."""
    if ((workload.family or "").lower() == "diffusion" or workload.method == "diffusion"
            or (workload.model is not None and workload.model.kind == "diffusion")):
        return "diffusion"
    return "llm"


def resolve_method(workload: Workload) -> str:
    """The training method; a diffusion model trains LoRA unless the user said full (the common case)."""
    if resolve_family(workload) == "diffusion":
        return workload.method if workload.method in ("lora", "qlora", "full") else "lora"
    if workload.method:
        return workload.method
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
    if setup.is_diffusion:  # no token sequence; LoRA on every linear of the denoiser's blocks
        values.pop("seq_len", None)
        values.pop("lora_targets", None)
        values.update({"family": "diffusion", "resolution": setup.resolution, "cache_latents": setup.cache_latents,
                       "text_encoder_training": setup.text_encoder_training})
        if setup.frames > 1:
            values["frames"] = setup.frames
    given = {"model": workload.model or workload.params_b, "params_b": workload.params_b or workload.model,
             "recipe": workload.recipe, "precision": workload.precision,
             "grad_checkpointing": workload.grad_checkpointing, "spot": workload.spot,
             "lora_targets": workload.lora_targets, "resolution": workload.resolution,
             "family": workload.family or workload.model, "cache_latents": workload.cache_latents,
             "text_encoder_training": workload.text_encoder_training, "frames": workload.frames}
    defaulted = tuple(k for k in values if (given[k] if k in given else getattr(workload, k, None)) is None)
    return values, defaulted


def diffusion_defaults(workload: Workload) -> Workload:
    """The preset's native resolution (and clip length for video) when the user gave none."""
    preset = find_diffusion_model(workload.model, workload.params_b)
    frames = workload.frames or (DEFAULT_VIDEO_FRAMES if preset.video else None)
    return replace(workload, resolution=workload.resolution or default_resolution(preset), frames=frames)


def effective_workload(workload: Workload, method: str, objective: str) -> tuple[Workload, bool]:
    """With the cheapest objective and no dataset size, a stated default dataset makes cost per job computable."""
    constrained = workload.deadline_hours is not None or workload.budget_usd is not None
    if (objective != "cheapest" and not constrained) or method in UNTIMED_METHODS or workload.tokens \
            or workload.samples:
        return workload, False
    return replace(workload, samples=DEFAULT_SAMPLES), True


def pinned_finding(gpu_id: str, search_result: Search, gpus: Mapping[str, GpuSpec], headroom: float) -> Finding:
    """A direct yes/no for the GPU (and count) the user named, with its per-GPU need and what a plan may use of
    the card (`usable_gib`: the VRAM less the headroom kept free as safety margin)."""
    fit = search_result.fits[gpu_id]
    usable = margin_numbers(gpus[gpu_id], headroom)
    if fit.candidate is not None:
        estimate = fit.candidate.estimate
        passed: dict[str, Number] = {
            "gpu": gpu_id, "gpus": fit.candidate.count, "needed_gib": round(estimate.per_gpu_gib, 1),
            "has_gib": gpus[gpu_id].vram_gb, **usable, "switches": ",".join(fit.candidate.switches)}
        setup = fit.candidate.setup
        if setup.offload and fit.candidate.host_gib > 0:  # fits only with states kept off the card: said first
            passed.update(offload_gib=round(fit.candidate.host_gib, 1), offload_target=setup.offload_target)
        return Finding("fit.pinned", "pass", passed)
    assert fit.rejection is not None
    numbers = fit.rejection.numbers
    return Finding("fit.pinned", "fail", {
        "gpu": gpu_id, "gpus": numbers["gpus"], "needed_gib": numbers["needed_gib"],
        "has_gib": numbers["has_gib"], **usable, "reason": fit.rejection.code})


# A lighter training method to try on the named hardware when the one asked for does not fit it: full -> LoRA
# -> QLoRA (frozen 16-bit weights, then 4-bit ones). Not offered when the user fixed the weights' precision.
LIGHTER_METHODS: dict[str, tuple[Method, ...]] = {"full": ("lora", "qlora"), "lora": ("qlora",)}


def lighter_method_fit(work: Workload, shape: Shape, method: str, gpu: GpuSpec, counts: tuple[int, ...],
                       tables: RuleTables, unified: bool) -> Finding | None:
    """`pinned.method_fits` {gpu, gpus, method, needed_gib, has_gib}: the first lighter method whose plan fits the
    named GPUs at the counts searched ("LoRA on Mistral 7B does not fit a 12 GB RTX 3060; QLoRA does")."""
    if work.precision is not None or method not in LIGHTER_METHODS:
        return None
    host_ram = tables.training.host_ram_gib_per_gpu.get(gpu.segment, float("inf"))
    for lighter in LIGHTER_METHODS[method]:
        space = CandidateSpace(replace(work, method=lighter), shape, lighter, 0.1 if shape.assumed else 0.0,
                               unified=unified)
        outcome = fit_outcome(gpu, space, counts, tables.headroom_fraction, host_ram)
        if outcome.candidate is not None:
            return Finding("pinned.method_fits", "info", {
                "gpu": gpu.id, "gpus": outcome.candidate.count, "method": lighter,
                "needed_gib": round(outcome.candidate.estimate.per_gpu_gib, 1), "has_gib": gpu.vram_gb})
    return None


def pinned_of(gpu_id: str, search_result: Search, gpus: Mapping[str, GpuSpec], space: CandidateSpace) -> Pinned:
    """The same answer as `pinned_finding`, as the verdict's `pinned` (training: no throughput)."""
    fit = search_result.fits[gpu_id]
    if fit.candidate is not None:
        estimate = fit.candidate.estimate
        return Pinned(gpu_id, fit.candidate.count, True, fit.candidate.setup.weight_format,
                      round(estimate.per_gpu_gib, 1), gpus[gpu_id].vram_gb, round(estimate.cpu_offload_gib, 1), None)
    assert fit.rejection is not None
    numbers = fit.rejection.numbers
    count = int(numbers["gpus"])
    precision = space.candidate(count, space.ladders(count)[-1]).setup.weight_format
    return Pinned(gpu_id, count, False, precision, float(numbers["needed_gib"]), float(numbers["has_gib"]), 0.0,
                  None)


def nearest_first(objective: str, findings: tuple[Finding, ...], workload: Workload) -> str:
    """A deadline no plan meets ranks the plans by how soon they finish (the nearest miss first) unless the user
    named an objective: the cheapest of plans that all miss it is not what a deadline asks for."""
    if workload.objective is None and any(f.code == "deadline.none_meets" for f in findings):
        return "fastest"
    return objective


def priced_first(options: list[Scored]) -> list[Scored]:
    """Plans with a capable offer, in rank order; the unpriced only when nothing has a price."""
    return [o for o in options if o.offer is not None] or options


def shown_options(ranked: list[Scored], alternatives: list[Scored], pinned_gpu: str | None) -> list[Scored]:
    """Pinned and fits: its plan first (priced or not), then the best others. Pinned and does not fit: the best
    plans overall, with the pinned GPU's own smallest fitting plan among the first three. No GPU pinned (a
    count nothing fits): the best plans at any count. (Scores in rank order: only the shown build options.)"""
    if pinned_gpu is None:
        return priced_first(alternatives)
    if ranked:
        return ranked[:1] + priced_first([o for o in alternatives if o.gpu_id != pinned_gpu])
    best = priced_first(alternatives)
    own = next((o for o in alternatives if o.gpu_id == pinned_gpu), None)
    if own is None or any(o is own for o in best[:TOP_OPTIONS]):
        return best
    rest = [o for o in best if o is not own]
    return rest[:TOP_OPTIONS - 1] + [own] + rest[TOP_OPTIONS - 1:]


def shown_option(scored: Scored, gpu: GpuSpec, space: CandidateSpace, shape: Shape, work: Workload,
                 tables: RuleTables, offers: Sequence[Offer]) -> Option:
    """A shown plan: its exact cost, then its findings (fit, links, price) and what each switch bought."""
    option = with_cost(scored.option, work, tables)
    switches = switch_findings(option, gpu, space, shape, tables, work)
    return with_findings(option, gpu, space.candidate(scored.count, scored.switches).setup, work, tables, offers,
                         extra=switches)


def evaluate_workload(workload: Workload, *, gpus: Mapping[str, GpuSpec],
                      offers_by_gpu: Mapping[str, Sequence[Offer]], providers: Mapping[str, Provider],
                      tables: RuleTables, offer_book: OfferBook | None = None,
                      street: Mapping[str, Sequence[PurchasePrice]] | None = None) -> Verdict:
    """`offer_book`: the same offers indexed once per snapshot (rules.market.book); the result is identical.
    `street`: dated street prices to buy a GPU, by GPU id (buy vs rent prefers them to launch prices).

    A training job with no deadline whose best plan would run longer than LONG_JOB_HOURS (three months: "pretrain
    a 7B model on 2T tokens" on two RTX 4090s is 18 years) is planned again to finish within that time, when
    some plan can, and says so (`deadline.assumed`, with the plan it replaced): nobody rents cards for years. Not
    for hardware the user named or a count they gave: that plan is theirs to judge (`time.long` says it)."""
    verdict = _evaluate_workload(workload, gpus=gpus, offers_by_gpu=offers_by_gpu, providers=providers,
                                 tables=tables, offer_book=offer_book, street=street)
    first = verdict.options[0] if verdict.options else None
    if (first is None or first.hours is None or first.hours <= LONG_JOB_HOURS or workload.deadline_hours is not None
            or workload.gpu is not None or workload.gpus is not None or first.throughput is not None):
        return verdict
    bounded = _evaluate_workload(replace(workload, deadline_hours=LONG_JOB_HOURS), gpus=gpus,
                                 offers_by_gpu=offers_by_gpu, providers=providers, tables=tables,
                                 offer_book=offer_book, street=street)
    top = bounded.options[0] if bounded.options else None
    if top is None or top.hours is None or top.hours > LONG_JOB_HOURS:
        return verdict
    assumed = Finding("deadline.assumed", "info", {
        "deadline_hours": LONG_JOB_HOURS, "from_wall_hours": round(first.hours, 1), "from_gpus": first.count,
        "from_gpu": first.gpu_id})
    # The deadline is ours, not the user's: its growth finding says so, and the ranking note it decided goes (the
    # assumed-deadline finding says why these plans).
    kept = tuple(replace(f, code="deadline.scaled_assumed") if f.code == "deadline.scaled" else f
                 for f in bounded.findings
                 if not (f.code == "rank.decided_by" and f.numbers.get("constraint") == "deadline"))
    return replace(bounded, findings=(assumed, *kept),
                   defaulted=tuple(dict.fromkeys((*bounded.defaulted, "deadline_hours"))))


def _evaluate_workload(workload: Workload, *, gpus: Mapping[str, GpuSpec],
                       offers_by_gpu: Mapping[str, Sequence[Offer]], providers: Mapping[str, Provider],
                       tables: RuleTables, offer_book: OfferBook | None = None,
                       street: Mapping[str, Sequence[PurchasePrice]] | None = None) -> Verdict:
    serving = serving_method(workload) if not _is_diffusion_model(workload) else None
    if serving is not None:
        shape, findings = resolve_shape(workload, serving)
        return evaluate_serving(workload, serving, shape, findings, gpus=gpus, offers_by_gpu=offers_by_gpu,
                                providers=providers, tables=tables, offer_book=offer_book, street=street)
    method = resolve_method(workload)
    family = resolve_family(workload)
    objective = objective_for(workload)
    work, dataset_assumed = effective_workload(workload, method, objective)
    if family == "diffusion":
        work, dataset_assumed = diffusion_defaults(work), False
    shape, findings = resolve_shape(work, method)
    space = CandidateSpace(work, shape, method, 0.1 if shape.assumed else 0.0, family)
    counts = counts_for(work, "diffusion" if family == "diffusion" else method)
    pinned_gpu = workload.gpu if workload.gpu in gpus else None
    trainable = training_pool(gpus)
    pool = {pinned_gpu: gpus[pinned_gpu]} if pinned_gpu else trainable
    hours_known = bool(work.tokens or work.samples)
    # A Mac is planned with what its frameworks offer (rules.plans.switches.UNIFIED_UNAVAILABLE).
    unified = pinned_gpu is not None and gpus[pinned_gpu].unified_memory
    pinned_space = CandidateSpace(work, shape, method, 0.1 if shape.assumed else 0.0, family,
                                  unified=True) if unified else space
    fastest = objective == "fastest" and not workload.gpus and hours_known
    found = search(pool, pinned_space, counts, work, offers_by_gpu, shape, tables, providers, offer_book,
                   fastest=fastest)
    constrained = apply_constraints(found.scored, work)
    objective = nearest_first(objective, constrained.findings, workload)
    ranked = rank_scored(constrained.kept, objective, hours_known)
    if pinned_gpu is not None or (workload.gpus and not ranked):
        alt_counts = counts_for(replace(work, gpus=None), "diffusion" if family == "diffusion" else method)
        alternatives = search(trainable, space, alt_counts, work, offers_by_gpu, shape, tables, providers,
                              offer_book, fastest=objective == "fastest" and hours_known)
        alt_constrained = apply_constraints(alternatives.scored, work)
        alt_objective = nearest_first(objective, alt_constrained.findings, workload)
        shown = shown_options(ranked, rank_scored(alt_constrained.kept, alt_objective, hours_known), pinned_gpu)
        extra_rejections = [r for r in alternatives.rejections if r.gpu_id != pinned_gpu]
    else:
        alternatives, extra_rejections, shown = found, [], priced_first(ranked)
    pinned = None
    if pinned_gpu is not None:
        findings.append(pinned_finding(pinned_gpu, found, gpus, tables.headroom_fraction))
        pinned = pinned_of(pinned_gpu, found, gpus, pinned_space)
        if found.fits[pinned_gpu].candidate is None and family == "llm":
            lighter = lighter_method_fit(work, shape, method, gpus[pinned_gpu], counts, tables, unified)
            if lighter is not None:
                findings.append(lighter)
        if unified:
            findings.append(Finding("training.unified", "info", {"gpu": pinned_gpu}))
    top = tuple(shown_option(s, gpus[s.gpu_id], pinned_space if s.gpu_id == pinned_gpu else space, shape, work,
                             tables, offers_by_gpu.get(s.gpu_id, ()))
                for s in shown[:TOP_OPTIONS])
    reference = space.candidate(counts[0], ())
    chosen = space.candidate(top[0].count, top[0].switches).setup if top else reference.setup
    assumptions, defaulted = assumptions_of(workload, chosen, shape)
    if dataset_assumed:
        assumptions["samples"] = DEFAULT_SAMPLES
        defaulted += ("samples",)
    memory = top[0].memory if top else reference.estimate
    if workload.memory_basis in ("allocated", "reserved"):
        chosen_candidate = space.candidate(top[0].count, top[0].switches) if top else reference
        parts = chosen_candidate.parts or space.parts(chosen_candidate.setup)
        memory = on_basis(memory, parts, workload.memory_basis)
        assumptions["memory_basis"] = workload.memory_basis
    notable = constrained.removed[:2] + notable_rejects(found.rejections + extra_rejections, alternatives, top,
                                                        pinned_gpu, gpus, tables)
    findings += list(constrained.findings)
    findings += [f for f in found.scaled if any(o.gpu_id == f.numbers["gpu"] for o in top)]
    findings += ownership_findings(pinned_gpu, [(o.gpu_id, o.count) for o in top], found.scored + (
        alternatives.scored if alternatives is not found else []), gpus, work, tables, hours_known, street)
    # The unconstrained order is read only when a constraint removed plans (the plan it displaced).
    unconstrained = rank_scored(found.scored, objective, hours_known) if constrained.constraint else []
    decided = decided_by(constrained, top, unconstrained, objective, work)
    if decided is not None:
        findings.append(decided)
    tier = pick_tier(tables.tier_rows, method, shape.params_b, top[0] if top else None, reference.estimate)
    named_one_card = None  # whether one card of the GPU the user named holds the job
    if pinned_gpu is not None:
        named = alternatives.fits.get(pinned_gpu)
        named_one_card = named is not None and named.candidate is not None and named.candidate.count == 1
    findings += guidance_findings(workload, reference.setup, top, gpus, providers, tables, named_one_card)
    if workload.gpu and workload.gpu not in gpus:
        findings.append(Finding("gpu.unknown", "warn", {"gpu": workload.gpu}))
    return Verdict(workload, assumptions, defaulted, memory, top, notable, tuple(findings), tier, pinned=pinned)


def evaluate(
    workload: Workload,
    *,
    gpus: Mapping[str, GpuSpec],
    offers_by_gpu: Mapping[str, Sequence[Offer]],
    providers: Mapping[str, Provider],
    tables: RuleTables,
    offer_book: OfferBook | None = None,
    street: Mapping[str, Sequence[PurchasePrice]] | None = None,
) -> Verdict:
    """Evaluate a workload over the catalog: memory, plans per GPU, time, cost, tier, guidance.

    `offer_book`: `OfferBook.build(offers_by_gpu)`, built once per snapshot, makes pricing faster; same result.
    Accelerators of stacks the memory and speed models do not describe (XLA TPUs, AWS Neuron chips) are not
    planned on unless the user named one.
    """
    gpus = {k: g for k, g in gpus.items() if g.software_stack not in UNMODELLED_STACKS or k == workload.gpu}
    return evaluate_workload(
        workload, gpus=gpus, offers_by_gpu=offers_by_gpu, providers=providers, tables=tables,
        offer_book=offer_book, street=street,
    )
