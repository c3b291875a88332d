"""The verdict for serving and running: the user's own hardware first, then the ranked alternatives, the fit
matrix over precisions, how memory grows with context, and the launch command."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from rules.market.book import OfferBook
from rules.market.offers import price_findings
from rules.market.ownership import purchase_prices
from rules.memory.parts import GIB
from rules.memory.serving import is_large_card, kv_bytes_per_sequence, serving_memory
from rules.plans.command import build_command, copies_per_server
from rules.plans.guidance import link_findings
from rules.plans.ranking import objective_for
from rules.plans.serving import (
    MULTINODE_COUNTS,
    SERVING_COUNTS,
    Scored,
    ServingPlan,
    ServingSpace,
    fit_serving,
    meets_target,
    price,
    rank_serving,
    score,
    scored_rate,
    to_option,
    valid_counts,
)
from rules.plans.serving_findings import option_findings, pinned_findings
from rules.speed.serving import Rate
from rules.plans.tier import pick_tier
from rules.tables import RuleTables
from rules.types import GpuSpec, Offer, Provider, PurchasePrice, Workload, owned_only
from rules.verdict import Finding, Number, Option, Pinned, PrecisionFit, Rejection, Verdict
from rules.workload.serving import (
    CONTEXT_STEPS,
    GGUF_ENGINES,
    asked_format_runs,
    engine_runs,
    ladder,
    matrix_precisions,
    native_format,
    quality_code,
)
from rules.workload.shapes import Shape

TOP_OPTIONS = 3
# A context below this is no use for a chat or a completion (a system prompt and a question fill it).
MIN_USEFUL_CONTEXT = 1024
BUY_OPTIONS = 3  # cards to buy within a budget, shown
CONTEXT_ROUNDING = 256


def search_counts(workload: Workload, *, pinned: bool) -> tuple[int, ...]:
    if workload.gpus and not pinned:
        return (workload.gpus,)
    return SERVING_COUNTS + MULTINODE_COUNTS


def _engine_for(precision: str, gpu: GpuSpec, default: str) -> str:
    """GGUF levels run on llama.cpp; the others on the default engine, or vLLM / MLX next to a GGUF one."""
    if precision.startswith("gguf"):
        return default if default in GGUF_ENGINES else "llama.cpp"
    if default in GGUF_ENGINES:
        return "mlx" if getattr(gpu, "unified_memory", False) else "vllm"
    return default


def fit_matrix(space: ServingSpace, gpu: GpuSpec, count: int) -> tuple[PrecisionFit, ...]:
    """bf16, fp8 (where allowed), int8, 4-bit and the GGUF levels on this hardware: need, fit, caveat code."""
    default = space.engine(gpu)
    wanted = list(matrix_precisions(space.shape, gpu, default))
    # The format asked for, as the verdict sizes it (a GGUF engine's "4-bit" is its Q4_K_M level).
    asked = ladder(space.workload, space.shape, gpu, default)[0] if space.workload.quantization else None
    if asked and asked not in wanted:
        wanted.append(asked)
    out = []
    for precision in wanted:
        # The format the user asked for on the engine the verdict sized it with (evaluate_pinned), so the row
        # and the verdict agree ("4-bit" on a 3090 run with llama.cpp is llama.cpp's 4-bit, not vLLM's).
        engine = default if precision == asked else _engine_for(precision, gpu, default)
        plan = space.plan(gpu, count, precision, engine)
        out.append(PrecisionFit(precision, plan.fits, round(plan.needed_gib, 1), round(plan.has_gib, 1),
                                quality_code(precision, space.shape)))
    return tuple(out)


def fewest_cards(space: ServingSpace, gpu: GpuSpec) -> int:
    """The named GPU's count when the count is the question ("how many 4090s to serve 70B?"; the parser reads a
    GPU named without a count, not asked about, as one card): the fewest of these cards that hold the model and
    its cache, else the most this card may be used at (the answer is then no, even at that count)."""
    counts = SERVING_COUNTS + MULTINODE_COUNTS
    found = fit_serving(gpu, space, counts)
    if isinstance(found, ServingPlan):
        return found.setup.gpus
    allowed = space.valid_counts(gpu, space.engine(gpu), counts)
    return allowed[-1] if allowed else 1


def evaluate_pinned(space: ServingSpace, gpu: GpuSpec, count: int) -> tuple[Pinned, ServingPlan, list[Finding]]:
    """Exactly the named hardware: the least-quantised precision that fits, else the smallest with offload.
    A card count tensor parallelism cannot use (3 cards for 64 heads) is served by llama.cpp's layer split."""
    engine = space.engine(gpu)
    if not valid_counts(gpu, space.shape, engine, (count,)) and not space.workload.engine:
        engine = "llama.cpp"
    plans = [space.plan(gpu, count, precision, engine) for precision in ladder(space.workload, space.shape, gpu,
                                                                               engine)]
    chosen = next((p for p in plans if p.fits), plans[-1])
    if chosen.fits:
        rate: Rate | None = space.rate(chosen)
        offload = 0.0
    elif engine in GGUF_ENGINES and not gpu.unified_memory:  # llama.cpp keeps the layers that do not fit in host
        # RAM (-ngl below all); a Mac has no other RAM: what the GPU may not wire is the same memory, kept by macOS
        rate = space.offload(chosen)
        offload = round(chosen.needed_gib - chosen.has_gib, 1)
    else:  # a paged serving engine has no useful offload for many users: the answer is no, and why
        rate, offload = None, 0.0
    pinned = Pinned(gpu.id, count, chosen.fits, chosen.setup.weight_format, round(chosen.needed_gib, 1),
                    round(chosen.has_gib, 1), offload, space.throughput(chosen, rate) if rate else None)
    findings = pinned_findings(space, gpu, count, plans, chosen, rate)
    if not asked_format_runs(space.workload, gpu, engine):
        findings.insert(0, unsupported_format(space.workload, gpu, engine, chosen.setup.weight_format))
    named = space.workload.engine
    if named and named != engine and not engine_runs(named, gpu):
        # vLLM asked of a GTX 1080 Ti: it needs compute capability 7.0 and does not start there
        findings.insert(0, Finding("engine.unsupported", "warn", {"engine": named, "gpu": gpu.id, "instead": engine}))
    if not chosen.fits and chosen.sustained > 0:
        findings.append(Finding("pinned.users", "info", {
            "gpu": gpu.id, "gpus": count, "precision": chosen.setup.weight_format,
            "max_concurrency": chosen.sustained, "concurrency": chosen.setup.concurrency,
            "context_tokens": chosen.setup.context_tokens}))
    shorter = shorter_context(chosen)
    if shorter is not None:
        findings.append(Finding("pinned.context", "info", {
            "gpu": gpu.id, "gpus": count, "precision": chosen.setup.weight_format, "max_context": shorter,
            "context_tokens": chosen.setup.context_tokens}))
    return pinned, chosen, findings


def runs_asked_format(space: ServingSpace, gpu: GpuSpec) -> bool:
    """Whether this card runs the format the user asked for. A card that does not is no option for it when
    others are searched (alternatives, cards to buy); named hardware is answered apart, by evaluate_pinned, in a
    format it does run (and `fewest_cards` counts it in that format)."""
    return not space.workload.quantization or asked_format_runs(space.workload, gpu, space.engine(gpu))


def offered(space: ServingSpace, gpu: GpuSpec) -> bool:
    """Whether a card is one to search plans on or to buy for this request: not a card answered only when named
    (`owned_only`: a GeForce GTX), and one the engine asked for starts on (vLLM before Volta does not)."""
    named = space.workload.engine
    return not owned_only(gpu) and (not named or engine_runs(named, gpu))


def unsupported_format(workload: Workload, gpu: GpuSpec, engine: str, instead: str) -> Finding:
    """The precision asked for has no kernel on this card in this engine (vLLM's quantisation hardware table:
    `format_supported`): what it was sized in instead."""
    return Finding("quant.unsupported", "warn", {"precision": workload.quantization or instead, "gpu": gpu.id,
                                                 "engine": engine, "instead_precision": instead})


def shorter_context(plan: ServingPlan) -> int | None:
    """For one sequence that does not fit at its context while the weights and the engine's fixed parts do: the
    longest context whose KV cache fits beside them, rounded down to 256 tokens (vLLM's `--max-model-len`,
    llama.cpp's `-c`); None when it does fit, when not even MIN_USEFUL_CONTEXT tokens would, or for several
    sequences (fewer users is then the other lever, `pinned.users`). KV bytes are taken as linear in the context,
    which is exact for full attention and conservative for sliding-window layers (their cache stops growing)."""
    setup, memory = plan.setup, plan.memory
    if plan.fits or setup.concurrency != 1 or setup.context_tokens <= 0 or memory.kv_per_sequence <= 0:
        return None
    free = plan.has_gib * GIB - memory.fixed
    tokens = int(free / (memory.kv_per_sequence / setup.context_tokens)) // CONTEXT_ROUNDING * CONTEXT_ROUNDING
    return tokens if MIN_USEFUL_CONTEXT <= tokens < setup.context_tokens else None


def context_growth(space: ServingSpace, plan: ServingPlan) -> Finding:
    """Memory per GPU at 4k / 32k / 128k for the sized sequences, and what an fp8 KV cache saves."""
    numbers: dict[str, Number] = {"context_tokens": plan.setup.context_tokens, "gpu": plan.gpu.id,
                                  "gpus": plan.setup.gpus, "concurrency": plan.setup.concurrency}
    large, unified = is_large_card(plan.gpu), bool(getattr(plan.gpu, "unified_memory", False))
    for tokens in CONTEXT_STEPS:
        if space.shape.max_context and tokens > space.shape.max_context:
            break  # beyond what the model reads (Llama 3 8B: 8,192): the message's short form names no steps
        setup = replace(plan.setup, context_tokens=tokens)
        memory = serving_memory(space.shape, setup, large=large, unified=unified)
        label = f"{tokens // 1024}k"
        numbers[f"needed_gib_{label}"] = round(memory.needed(setup.concurrency) / GIB, 1)
        numbers[f"kv_cache_gib_{label}"] = round(setup.concurrency * memory.kv_per_sequence / GIB, 2)
    kv = plan.setup.concurrency * kv_bytes_per_sequence(space.shape, plan.setup)
    fp8 = plan.setup.concurrency * kv_bytes_per_sequence(space.shape, replace(plan.setup, kv_cache_dtype="fp8"))
    numbers["fp8_kv_saves_gib"] = round((kv - fp8) / GIB, 2)
    return Finding("serving.context_growth", "info", numbers)


def _search(space: ServingSpace, pool: Mapping[str, GpuSpec], counts: tuple[int, ...],
            offers_by_gpu: Mapping[str, Sequence[Offer]], providers: Mapping[str, Provider],
            book: OfferBook | None) -> tuple[list[Scored], list[Rejection]]:
    scored, rejections = [], []
    for gpu_id, gpu in pool.items():
        if not offered(space, gpu):
            continue  # named hardware is answered apart, by evaluate_pinned (which says when the engine cannot start)
        if not runs_asked_format(space, gpu):
            rejections.append(Rejection(gpu_id, "fit.format", {"precision": space.workload.quantization or "",
                                                               "engine": space.engine(gpu)}))
            continue
        found = fit_serving(gpu, space, counts)
        if isinstance(found, Rejection):
            rejections.append(found)
            continue
        offer = price(found, offers_by_gpu.get(gpu_id, ()), space.workload, space.tables, providers, book)
        scored.append(score(found, space, offer, rate_now=False))
    return scored, rejections


def one_card(scored: list[Scored]) -> list[Finding]:
    """The smallest single card that holds the model (the '1x 48 GB' of 'or buy one bigger card')."""
    singles = [s.plan for s in scored if s.plan.setup.gpus == 1]
    if not singles:
        return []
    plan = min(singles, key=lambda p: (p.gpu.vram_gb, p.gpu.id))
    return [Finding("pinned.one_card", "info", {"gpu": plan.gpu.id, "vram_gb": plan.gpu.vram_gb,
                                                "precision": plan.setup.weight_format,
                                                "needed_gib": round(plan.needed_gib, 1)})]


def buy_price(gpu: GpuSpec, street: Mapping[str, Sequence[PurchasePrice]] | None) -> tuple[float, dict[str, str]] | None:
    """What one new card costs to buy: its newest recorded street price (the low end of its range), else its list
    price (`purchase_usd`); with the numbers that say which: price_basis street (price_date, price_source) or new
    (price_year of the list price). None when neither is known."""
    for known in purchase_prices(gpu, (street or {}).get(gpu.id, ())):
        if known.basis == "street":
            return known.usd, {"price_basis": "street", "price_date": known.date, "price_source": known.source}
        if known.basis == "new":
            return known.usd, {"price_basis": "new", "price_year": list_price_year(gpu)}
    return None


def one_card_to_buy(scored: list[Scored], street: Mapping[str, Sequence[PurchasePrice]] | None = None,
                    ) -> list[Finding]:
    """For hardware people own (DESIGN §3: its alternative is buying): the single card that costs least to buy
    (street price where recorded, else list price: `buy_price`) and holds the model, with what it would cost."""
    singles = [(cost, s.plan) for s in scored if s.plan.setup.gpus == 1
               for cost in (buy_price(s.plan.gpu, street),) if cost is not None]
    if not singles:
        return []
    (usd, basis), plan = min(singles, key=lambda row: (row[0][0], row[1].gpu.id))
    gpu = plan.gpu
    code = "pinned.buy_one_street" if basis["price_basis"] == "street" else "pinned.buy_one"
    return [Finding(code, "info", {
        "gpu": gpu.id, "vram_gb": gpu.vram_gb, "purchase_usd": usd, **basis,
        "precision": plan.setup.weight_format, "needed_gib": round(plan.needed_gib, 1)})]


def list_price_year(gpu: GpuSpec) -> str:
    """The year of the catalog's list price (`purchase_usd`, a launch price: knowledge/data/SOURCES.md): its
    date where the catalog has one, else the launch year."""
    return str(gpu.purchase_date.year if gpu.purchase_date else gpu.release_year)


def _shown(ranked: list[Scored], pinned: Scored | None) -> list[Scored]:
    """The user's own plan first when it fits; then the best priced plans (unpriced only if none has a price)."""
    priced = [s for s in ranked if s.usd_per_million is not None] or ranked
    rest = [s for s in priced if pinned is None or s.plan.gpu.id != pinned.plan.gpu.id]
    return ([pinned] if pinned is not None else []) + rest


def assumptions_of(workload: Workload, shape: Shape, method: str, plan: ServingPlan | None,
                   concurrency: int) -> tuple[dict[str, Number | bool], tuple[str, ...]]:
    setup = plan.setup if plan is not None else None
    values: dict[str, Number | bool] = {
        "model": shape.name, "params_b": shape.params_b, "method": method,
        "engine": setup.engine if setup else (workload.engine or "vllm"),
        "quantization": setup.weight_format if setup else (workload.quantization or native_format(shape)),
        "kv_cache_dtype": setup.kv_cache_dtype if setup else (workload.kv_cache_dtype or "bf16"),
        "concurrency": concurrency, "context_tokens": setup.context_tokens if setup else (workload.context_tokens or 0),
        "gpus": setup.gpus if setup else (workload.gpus or 1), "spot": bool(workload.spot),
    }
    values["precision"] = values["quantization"]
    if workload.tokens_per_s:
        values["tokens_per_s"] = workload.tokens_per_s
        values["tokens_per_s_scope"] = workload.tokens_per_s_scope or "per_user"
    given = {"model": workload.model or workload.params_b, "params_b": workload.params_b or workload.model,
             "method": workload.method, "engine": workload.engine, "quantization": workload.quantization,
             "precision": workload.quantization, "kv_cache_dtype": workload.kv_cache_dtype,
             "concurrency": workload.concurrency, "context_tokens": workload.context_tokens, "gpus": workload.gpus,
             "spot": workload.spot, "tokens_per_s": workload.tokens_per_s, "tokens_per_s_scope": workload.tokens_per_s}
    return values, tuple(k for k in values if given.get(k) is None)


def evaluate_serving(workload: Workload, method: str, shape: Shape, findings: list[Finding], *,
                     gpus: Mapping[str, GpuSpec], offers_by_gpu: Mapping[str, Sequence[Offer]],
                     providers: Mapping[str, Provider], tables: RuleTables,
                     offer_book: OfferBook | None = None,
                     street: Mapping[str, Sequence[PurchasePrice]] | None = None) -> Verdict:
    """Serving or running over the catalog; the named GPU (count: one unless given) answered first. `street`:
    dated street prices to buy a GPU, by GPU id (what buying one costs today: buy_price)."""
    space = ServingSpace(workload, shape, method, tables)
    pinned_gpu = gpus.get(workload.gpu) if workload.gpu else None
    scored, rejections = _search(space, gpus, search_counts(workload, pinned=pinned_gpu is not None),
                                 offers_by_gpu, providers, offer_book)
    if workload.gpus and not scored and pinned_gpu is None:  # the count asked for fits nowhere: any count
        scored, rejections = _search(space, gpus, search_counts(workload, pinned=True), offers_by_gpu, providers,
                                     offer_book)
    ranked = rank_serving(scored, objective_for(workload), space)
    if workload.tokens_per_s:  # plans that sustain the rate asked for first: a cheaper plan that misses it is no pick
        ranked = [s for s in ranked if meets_target(workload, scored_rate(s, space))] + \
            [s for s in ranked if not meets_target(workload, scored_rate(s, space))]
    pinned = pinned_plan = pinned_scored = None
    if pinned_gpu is not None:
        count = workload.gpus or fewest_cards(space, pinned_gpu)
        pinned, pinned_plan, extra = evaluate_pinned(space, pinned_gpu, count)
        findings += extra
        if not pinned.fits:
            findings += one_card(scored)
            if pinned_gpu.segment == "consumer" or pinned_gpu.unified_memory:  # hardware people own and buy
                findings += one_card_to_buy(scored, street)
        if pinned.fits:
            offer = price(pinned_plan, offers_by_gpu.get(pinned_gpu.id, ()), workload, tables, providers, offer_book)
            pinned_scored = score(pinned_plan, space, offer)
    if workload.budget_usd is not None and workload.budget_usd_per_hour is None and pinned_gpu is None:
        # the search tried every count in order, fewest first, as the budget's counts would: its plans answer it
        # (not with a count of its own to keep, nor with a tokens/s target that can pass a first fit over)
        searched = {s.plan.gpu.id: s for s in scored} if not workload.gpus and not workload.tokens_per_s else None
        findings += buy_within_budget(space, gpus, float(workload.budget_usd), street, searched)
    shown = _shown(ranked, pinned_scored)[:TOP_OPTIONS]
    top = tuple(_with_findings(to_option(s, space), gpus[s.plan.gpu.id], workload,
                               offers_by_gpu.get(s.plan.gpu.id, ()), tables, shape) for s in shown)
    chosen = pinned_plan if pinned_plan is not None else (shown[0].plan if shown else None)
    if chosen is None:
        chosen = _reference(space, gpus)
    concurrency = top[0].throughput.concurrency if top and top[0].throughput else chosen.setup.concurrency
    if pinned is not None and pinned.throughput is not None:
        concurrency = pinned.throughput.concurrency
    assumptions, defaulted = assumptions_of(workload, shape, method, chosen, concurrency)
    findings += verdict_findings(space, workload, shape, chosen, top, pinned is not None, len(gpus))
    if workload.model is not None and workload.model.kind == "speech":
        # vLLM, SGLang, llama.cpp, Ollama and MLX-LM serve language models; Whisper runs in its own tools
        command, command_findings = None, [Finding("command.speech", "info", {"model": workload.model.name})]
    elif (launched := _launched(chosen, pinned, shown)) is None:
        command, command_findings = None, []
    else:
        command, command_findings = build_command(launched, shape, workload.model.hf_id if workload.model else None)
    findings += command_findings
    if top and (pinned is None or pinned.fits):
        memory = top[0].memory
    else:
        memory = to_option(score(chosen, space, None), space).memory
    matrix = fit_matrix(space, chosen.gpu, chosen.setup.gpus)
    notable = tuple(sorted(rejections, key=lambda r: (-gpus[r.gpu_id].vram_gb, r.gpu_id))[:4]) if not top else ()
    tier = pick_tier(tables.tier_rows, method, shape.params_b, top[0] if top else None, memory)
    return Verdict(workload, assumptions, defaulted, memory, top, notable, tuple(findings), tier,
                   pinned=pinned, command=command, precisions=matrix)


def buy_within_budget(space: ServingSpace, gpus: Mapping[str, GpuSpec], budget_usd: float,
                      street: Mapping[str, Sequence[PurchasePrice]] | None = None,
                      searched: Mapping[str, Scored] | None = None) -> list[Finding]:
    """A total budget for a model to serve or run is money to buy hardware with ("buy a GPU under $2000 to run
    30B"): the cards whose list price (`purchase_usd`, dated) times the count stays within it and that hold
    the model, fastest per user first (then cheaper), one per architecture and speed; else that none does.

    `searched`: the catalog search's plan per GPU, fewest cards first over SERVING_COUNTS and beyond (no tokens/s
    target). The budget's counts are a prefix of those, so a card's plan within the budget is the search's plan
    when its cards cost no more than the budget, and none otherwise: the same answer without fitting again."""
    rows: list[tuple[float, float, GpuSpec, ServingPlan, dict[str, str]]] = []
    for gpu in gpus.values():
        if not offered(space, gpu) or not runs_asked_format(space, gpu):
            continue
        known = buy_price(gpu, street)
        if known is None or known[0] <= 0:
            continue
        unit, basis = known
        if searched is not None:
            hit = searched.get(gpu.id)
            if hit is not None and hit.plan.setup.gpus in SERVING_COUNTS and hit.plan.setup.gpus * unit <= budget_usd:
                rows.append((scored_rate(hit, space).output_tokens_per_s_per_user, hit.plan.setup.gpus * unit, gpu,
                             hit.plan, basis))
            continue
        counts = tuple(c for c in SERVING_COUNTS if c * unit <= budget_usd)
        found = fit_serving(gpu, space, counts) if counts else None
        if isinstance(found, ServingPlan):
            rows.append((space.rate(found).output_tokens_per_s_per_user, found.setup.gpus * unit, gpu, found, basis))
    if not rows:
        return [Finding("buy.none_within", "info", {"budget_usd": budget_usd})]
    out: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    for per_user, cost, gpu, plan, basis in sorted(rows, key=lambda r: (-r[0], r[1], r[2].id)):
        key = (gpu.architecture, round(per_user))
        if key in seen:
            continue
        seen.add(key)
        code = "buy.within_budget_street" if basis["price_basis"] == "street" else "buy.within_budget"
        out.append(Finding(code, "info", {
            "gpu": gpu.id, "gpus": plan.setup.gpus, "purchase_usd": round(cost, 2), **basis,
            "precision": plan.setup.weight_format, "output_tokens_per_s_per_user": round(per_user, 1),
            "budget_usd": budget_usd}))
        if len(out) == BUY_OPTIONS:
            break
    return out


def _reference(space: ServingSpace, gpus: Mapping[str, GpuSpec]) -> ServingPlan:
    """Nothing fits anywhere: the largest card at its most compressed precision, for the figures."""
    gpu = max(gpus.values(), key=lambda g: (g.vram_gb, g.id))
    engine = space.engine(gpu)
    counts = valid_counts(gpu, space.shape, engine, SERVING_COUNTS) or (1,)
    return space.plan(gpu, counts[-1], ladder(space.workload, space.shape, gpu, engine)[-1], engine)


def _launched(chosen: ServingPlan, pinned: Pinned | None, shown: Sequence[Scored]) -> ServingPlan | None:
    """The plan the launch line is for: the named hardware when the model runs on it (in memory, or with layers
    offloaded to host RAM), else the first option; none when nothing runs (a command that runs out of memory
    at start is no answer)."""
    if pinned is None or pinned.fits or pinned.offload_gib > 0:
        return chosen if pinned is not None or shown else None
    return shown[0].plan if shown else None


def _with_findings(option: Option, gpu: GpuSpec, workload: Workload, offers: Sequence[Offer],
                   tables: RuleTables, shape: Shape) -> Option:
    pcie_low = tables.serving.tp_pcie_low if tables.serving is not None else 1.0
    found = option_findings(option, gpu, tables, shape) + tuple(link_findings(option, gpu, serving=True,
                                                                              pcie_low=pcie_low))
    return replace(option, findings=found + price_findings(option, gpu, offers, spot=bool(workload.spot)))


def verdict_findings(space: ServingSpace, workload: Workload, shape: Shape, plan: ServingPlan,
                     top: tuple[Option, ...], pinned: bool, gpus_tried: int) -> list[Finding]:
    out: list[Finding] = []
    if not top and not pinned:
        out.append(Finding("fit.none", "fail", {"gpus_tried": gpus_tried}))
    if workload.context_tokens is None:
        # a model that reads fewer tokens than the first step (Whisper's 448-token decoder) has no growth to show
        if not (shape.max_context and shape.max_context < CONTEXT_STEPS[0]):
            out.append(context_growth(space, plan))
    elif shape.max_context and workload.context_tokens > shape.max_context:
        out.append(Finding("serving.context_capped", "warn", {
            "model": workload.model.name if workload.model is not None else shape.name,
            "asked_context_tokens": workload.context_tokens, "max_context_tokens": shape.max_context}))
    if plan.setup.full_load:
        out.append(Finding("serving.concurrency_assumed", "info", {
            "max_concurrency": plan.sustained, "context_tokens": plan.setup.context_tokens, "gpu": plan.gpu.id}))
    if native_format(shape) == "fp8" and workload.quantization is None:
        out.append(Finding("model.native_fp8", "info", {"model": shape.name}))
    if native_format(shape) == "mxfp4" and workload.quantization is None:
        out.append(Finding("model.native_mxfp4", "info", {"model": shape.name}))
    if plan.replicas > 1:
        per_server = copies_per_server(plan)
        out.append(Finding("serving.replicas", "info", {
            "replicas": plan.replicas, "gpus": plan.setup.gpus, "gpu": plan.gpu.id,
            "servers": -(-plan.replicas // per_server), "per_server": per_server,
            "each_tokens_per_s": round(space.rate(replace(plan, replicas=1)).output_tokens_per_s),
            "output_tokens_per_s": round(space.rate(plan).output_tokens_per_s)}))
    if workload.tokens_per_s and not meets_target(workload, space.rate(plan)):
        rate = space.rate(plan)
        out.append(Finding("serving.target_missed", "warn", {
            "tokens_per_s": workload.tokens_per_s, "scope": workload.tokens_per_s_scope or "per_user",
            "output_tokens_per_s": round(rate.output_tokens_per_s, 1),
            "output_tokens_per_s_per_user": round(rate.output_tokens_per_s_per_user, 1)}))
    return out
