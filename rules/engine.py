"""Evaluate one workload over the catalog: shape, defaults, fit per GPU, time, cost, ranking, tier, guidance."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from rules.diffusion import find_diffusion_model
from rules.guidance import guidance_findings, option_findings
from rules.plans import CandidateSpace, Fit, counts_for, fit_gpu
from rules.setup import DEFAULT_METHOD, Setup
from rules.shapes import Shape, shape_from_model, typical_shape, with_params
from rules.tables import RuleTables
from rules.tier import pick_tier
from rules.timing import cheapest_offer, dataset_tokens, job_hours, offer_cost
from rules.types import GpuSpec, Offer, Provider, Workload
from rules.verdict import Finding, Number, Option, Rejection, Verdict

DEFAULT_PARAMS_B = 8.0
TOP_OPTIONS = 3
NOTABLE_REJECTS = 4


def resolve_shape(workload: Workload, method: str) -> tuple[Shape, list[Finding]]:
    """The model's shape, a typical one for a bare parameter count, or an 8B default."""
    if method == "diffusion":
        preset = find_diffusion_model(workload.model.id if workload.model else None, workload.params_b)
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


def build_option(fit: Fit, gpu: GpuSpec, offers: Sequence[Offer], workload: Workload,
                 shape: Shape, tables: RuleTables) -> tuple[Option, float | None]:
    """The option (exact Decimal cost filled in later, for shown options only) and its float cost."""
    candidate = fit.candidate
    assert candidate is not None
    setup = candidate.setup
    tokens = dataset_tokens(workload, setup)
    hours = None
    if tokens is not None and setup.method not in ("inference", "diffusion"):
        hours = job_hours(tokens, shape.active_params_b, gpu, candidate.count, setup, tables,
                          workload.precision)
    offer, cost = cheapest_offer(offers, candidate.count, hours, spot=bool(workload.spot),
                                 rework=tables.spot_rework_fraction)
    nodes = max(1, -(-candidate.count // 8))
    return Option(gpu.id, candidate.count, nodes, setup.sharding, candidate.switches, candidate.estimate,
                  round(hours, 3) if hours is not None else None, None, offer, ()), cost


def with_cost(option: Option, workload: Workload, tables: RuleTables) -> Option:
    """The exact per-job cost (billing increments, spot rework) on the option's offer."""
    if option.offer is None or option.hours is None:
        return option
    rework = tables.spot_rework_fraction if workload.spot else 0.0
    return replace(option, cost_usd=offer_cost(option.offer, option.count, option.hours, rework=rework))


def with_findings(option: Option, gpu: GpuSpec, setup: Setup, workload: Workload, tables: RuleTables) -> Option:
    """Findings are computed for the shown options only (keeps evaluate() fast)."""
    return replace(option, findings=option_findings(option, gpu, setup, workload, tables))


def rank_key(option: Option, gpu: GpuSpec, objective: str, job_usd: float | None) -> tuple[float, ...]:
    """Lower is better. Cost per job when known, else price per hour per delivered TFLOPS."""
    usd_hour = float(option.offer.usd_per_hour) if option.offer else float("inf")
    throughput = option.count * (gpu.bf16_dense_tflops or gpu.fp16_dense_tflops)
    cost = job_usd if job_usd is not None else usd_hour / throughput * 1000
    hours = option.hours if option.hours is not None else 1000.0 / throughput
    complexity = (option.count - 1) * 0.25 + 0.1 * len(option.switches)
    if objective == "cheapest":
        return (cost, hours)
    if objective == "fastest":
        return (hours, cost)
    if objective == "simplest":
        return (option.count, len(option.switches), cost)
    return (cost * (1 + complexity) * (hours ** 0.25), hours)


def evaluate_workload(workload: Workload, *, gpus: Mapping[str, GpuSpec],
                      offers_by_gpu: Mapping[str, Sequence[Offer]], providers: Mapping[str, Provider],
                      tables: RuleTables) -> Verdict:
    method = resolve_method(workload)
    shape, findings = resolve_shape(workload, method)
    widen = 0.1 if shape.assumed else 0.0
    space = CandidateSpace(workload, shape, method, widen)
    counts = counts_for(workload, method)
    reference = space.candidate(counts[0], ())
    assumptions, defaulted = assumptions_of(workload, reference.setup, shape)
    pool = {workload.gpu: gpus[workload.gpu]} if workload.gpu in gpus else gpus
    options: list[Option] = []
    job_costs: dict[str, float | None] = {}
    rejections: list[Rejection] = []
    for gpu_id, gpu in pool.items():
        fit = fit_gpu(gpu, space, counts, tables.headroom_fraction)
        if fit.rejection is not None:
            rejections.append(fit.rejection)
        else:
            option, job_usd = build_option(fit, gpu, offers_by_gpu.get(gpu_id, ()), workload, shape, tables)
            options.append(option)
            job_costs[gpu_id] = job_usd
    objective = workload.objective or ("cheapest" if workload.budget_usd is not None else "balanced")
    options.sort(key=lambda o: (rank_key(o, gpus[o.gpu_id], objective, job_costs[o.gpu_id]), o.gpu_id))
    priced = [o for o in options if o.offer is not None] or options
    top = tuple(with_findings(with_cost(o, workload, tables), gpus[o.gpu_id],
                              space.candidate(o.count, o.switches).setup, workload, tables)
                for o in priced[:TOP_OPTIONS])
    memory = top[0].memory if top else reference.estimate
    notable = sorted(rejections, key=lambda r: (-float(gpus[r.gpu_id].vram_gb), r.gpu_id))
    tier = pick_tier(tables.tier_rows, method, shape.params_b, top[0] if top else None, reference.estimate)
    findings += guidance_findings(workload, reference.setup, top, gpus, providers, tables)
    if workload.gpu and workload.gpu not in gpus:
        findings.append(Finding("gpu.unknown", "warn", {"gpu": workload.gpu}))
    return Verdict(workload, assumptions, defaulted, memory, top, tuple(notable[:NOTABLE_REJECTS]),
                   tuple(findings), tier)

