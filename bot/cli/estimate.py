"""`gpu-advisor estimate`: memory, plans, time and cost for one workload (flags, or JSON Lines on --input)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bot.cli.context import CliError, to_json

METHODS = ("full", "pretrain", "lora", "qlora", "inference", "diffusion", "serving", "running")
CHECKPOINTING = ("none", "full", "selective", "offloaded")
SHARDING = ("none", "ddp", "zero1", "zero2", "zero3", "fsdp")
OBJECTIVES = ("cheapest", "fastest", "simplest", "balanced")
TOKENS_PER_S_SCOPES = ("per_user", "total")
FRAMEWORKS = ("hf", "torchtune", "unsloth", "axolotl", "llamafactory", "deepspeed", "megatron", "torchtitan")
LOSSES = ("full", "fp32_upcast", "compiled", "bf16", "chunked", "bf16_inplace", "fused", "cce")
BASES = ("allocated", "reserved", "device")
# Keys accepted on --input lines: the flag names with underscores (+ resolution for diffusion).
INPUT_KEYS = ("model", "params_b", "method", "framework", "recipe", "optimizer", "precision", "seq_len",
              "batch_size", "grad_checkpointing", "lora_rank", "lora_targets", "gpus", "sharding",
              "offload", "gpu", "tokens", "samples", "epochs", "budget_usd", "deadline_hours", "spot",
              "objective", "resolution", "concurrency", "context_tokens", "quantization", "kv_cache_dtype", "engine",
              "tokens_per_s", "tokens_per_s_scope", "family", "framework_version", "loss", "memory_basis",
              "text_encoder_training", "cache_latents", "electricity_usd_per_kwh", "frames", "compile")
CASES_DIR = Path(__file__).resolve().parents[2] / "tests" / "cases"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("estimate", help="will it fit, on what, how long, what it costs")
    p.add_argument("--model", help="model preset, alias or Hugging Face id")
    p.add_argument("--params-b", type=float, help="parameter count in billions (without --model)")
    p.add_argument("--method", choices=METHODS)
    p.add_argument("--framework", choices=FRAMEWORKS)
    p.add_argument("--recipe", help="mixed_adamw, bf16_adamw, optimizer_in_backward, fp32")
    p.add_argument("--optimizer", help="adamw, adamw8bit, paged_adamw8bit, adafactor, sgd")
    p.add_argument("--precision", help="bf16, fp16, fp32, fp8, int8, nf4")
    p.add_argument("--seq-len", type=int)
    p.add_argument("--batch-size", type=int, help="micro-batch per GPU")
    p.add_argument("--grad-checkpointing", choices=CHECKPOINTING)
    p.add_argument("--lora-rank", type=int)
    p.add_argument("--lora-targets", help="all, qv, attn, mlp or a comma list (q_proj,v_proj)")
    p.add_argument("--gpus", type=int, help="GPU count to plan for")
    p.add_argument("--sharding", choices=SHARDING)
    p.add_argument("--offload", action="store_true", default=None, help="CPU offload of states")
    p.add_argument("--gpu", help="only this GPU (name as people write it)")
    p.add_argument("--tokens", type=float, help="dataset tokens per epoch")
    p.add_argument("--samples", type=int, help="dataset samples per epoch (x seq len)")
    p.add_argument("--epochs", type=float)
    p.add_argument("--budget-usd", help="total budget for the job")
    p.add_argument("--deadline-hours", type=float)
    p.add_argument("--spot", action="store_true", default=None, help="spot / interruptible allowed")
    p.add_argument("--objective", choices=OBJECTIVES)
    p.add_argument("--concurrency", type=int, help="serving: sequences (users, requests) in flight at once")
    p.add_argument("--context", "--context-tokens", dest="context_tokens", type=int,
                   help="serving: tokens per sequence, prompt + output (default 4096, stated)")
    p.add_argument("--quantization", help="weight format: bf16, fp16, fp8, int8, int4, nf4, awq, gptq, exl2, mxfp4, "
                                          "nvfp4, gguf, gguf-q2_k, gguf-q3_k_m, gguf-q4_0, gguf-q4_k_m, gguf-q5_k_m, "
                                          "gguf-q6_k, gguf-q8_0")
    p.add_argument("--kv-cache-dtype", help="KV cache: fp16, bf16, fp8, q8_0, q4_0")
    p.add_argument("--engine", help="serving engine: vllm, sglang, tgi, tensorrt-llm, llama.cpp, ollama, mlx, "
                                    "lmstudio, transformers, exllama")
    p.add_argument("--tokens-per-s", type=float, help="serving: output tokens/s wanted (see --tokens-per-s-scope)")
    p.add_argument("--tokens-per-s-scope", choices=TOKENS_PER_S_SCOPES, help="per_user (default) or total")
    p.add_argument("--family", help="model family: llama, qwen, gemma ... or diffusion (with --method lora/full)")
    p.add_argument("--resolution", type=int, help="diffusion: image side in pixels (default 1024)")
    p.add_argument("--compile", action="store_true", default=None, help="torch.compile on (faster)")
    p.add_argument("--frames", type=int, help="video diffusion: frames per training clip (default 40)")
    p.add_argument("--framework-version", help="the framework's version or date (0.2.1, 2024-05): its defaults then")
    p.add_argument("--loss", choices=LOSSES, help="loss implementation (default: the framework's)")
    p.add_argument("--memory-basis", choices=BASES,
                   help="report memory as torch allocated, allocator reserved, or device (nvidia-smi, default)")
    p.add_argument("--text-encoder-training", action="store_true", default=None, help="diffusion: train the text encoder")
    p.add_argument("--cache-latents", action="store_true", default=None,
                   help="diffusion: latents and text embeddings cached, encoders off the GPU")
    p.add_argument("--electricity-usd-per-kwh", help="buy vs rent: your power price (default 0.15)")
    p.add_argument("--input", metavar="FILE", help="JSON Lines of workloads ('-' = stdin), one result per line")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--calibration-report", action="store_true",
                   help="print the memory model's error on the published measured runs")
    p.set_defaults(handler=cmd_estimate)


def cmd_estimate(args: Any) -> int:
    if args.calibration_report:
        return print_calibration_report(CASES_DIR, as_json=args.json)
    from bot.cli.context import open_context
    from knowledge.rule_tables import load_rule_tables

    context = open_context()
    try:
        snapshot = context.snapshot()
    except (OSError, ValueError) as error:
        raise CliError(f"the catalog could not be loaded: {error}") from error
    tables = load_rule_tables()
    if args.input is None:
        values = {key: getattr(args, key, None) for key in INPUT_KEYS}
        return _emit(_run(values, snapshot, tables, flags=True), as_json=args.json)
    stream = getattr(sys.stdin, "buffer", sys.stdin) if args.input == "-" else _open(args.input)
    status = 0
    for number, raw in enumerate(stream, start=1):
        try:
            line = _decode(raw, number)
            if not line.strip():
                continue
            result = _run(_parse_line(line, number), snapshot, tables)
            out = to_json(result)
        except CliError as error:
            out, status = to_json({"error": str(error), "line": number}), 1
        print(out, flush=True)  # JSON Lines: one result per input line
    return status


def _open(path: str) -> Any:
    try:
        return open(path, "rb")  # noqa: SIM115 - closed at exit of a one-shot command
    except OSError as error:
        raise CliError(f"cannot read {path}: {error.strerror}") from error


def _decode(raw: bytes | str, number: int) -> str:
    """A line as UTF-8 text (a BOM on the first dropped); a byte that is not UTF-8 refuses the line."""
    if isinstance(raw, str):
        return raw
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CliError(f"line {number}: not UTF-8 (byte {error.start + 1}: 0x{raw[error.start]:02x})") from None
    return text.removeprefix("\ufeff") if number == 1 else text


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _parse_line(line: str, number: int) -> dict[str, Any]:
    try:
        data = json.loads(line, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        raise CliError(f"line {number}: not JSON ({error.msg})") from error
    except ValueError as error:  # NaN, Infinity, -Infinity: Python's json takes them, JSON does not
        raise CliError(f"line {number}: not JSON ({error})") from error
    except RecursionError:
        raise CliError(f"line {number}: not JSON (nested too deeply)") from None
    if not isinstance(data, dict):
        raise CliError(f"line {number}: expected a JSON object")
    unknown = sorted(set(data) - set(INPUT_KEYS))
    if unknown:
        raise CliError(f"line {number}: unknown keys {', '.join(unknown)} (use: {', '.join(INPUT_KEYS)})")
    return {key: data.get(key) for key in INPUT_KEYS}


def _run(values: dict[str, Any], snapshot: Any, tables: Any, *, flags: bool = False) -> dict[str, Any]:
    from rules.serialize import verdict_to_json
    from rules.engine import evaluate

    workload = build_workload(values, snapshot, flags=flags)
    verdict = evaluate(workload, gpus=snapshot.gpus, offers_by_gpu=snapshot.offers_by_gpu,
                       providers=snapshot.providers, tables=tables, street=getattr(snapshot, "purchase_prices", None))
    return verdict_to_json(verdict, snapshot.gpus)


def _choice(values: dict[str, Any], key: str, allowed: tuple[str, ...]) -> str | None:
    value = values.get(key)
    if value is None:
        return None
    if str(value).lower() not in allowed:
        raise CliError(f"{key}: {value!r} is not one of {', '.join(allowed)}")
    return str(value).lower()


def _resolve_model(name: str, snapshot: Any) -> Any:
    match = snapshot.model_index.resolve(name)
    if match.status == "found" and match.model_id in snapshot.models:
        return snapshot.models[match.model_id]
    if match.status == "ambiguous":
        raise CliError(f"model {name!r} is ambiguous: {', '.join(match.candidates[:5])}")
    raise CliError(f"unknown model {name!r}; give --params-b for a model outside the catalog")


def _resolve_gpu(name: str, snapshot: Any) -> tuple[str, int | None]:
    match = snapshot.gpu_index.resolve(name)
    if match.status == "found" and match.gpu_id:
        return match.gpu_id, match.count
    options = match.candidates or match.suggestions
    hint = f"; did you mean {', '.join(options[:4])}?" if options else ""
    raise CliError(f"unknown GPU {name!r}{hint}")


def _require_lora_targets(text: str | None) -> None:
    from rules.workload.setup import parse_lora_targets

    if text is not None and parse_lora_targets(text) is None:
        raise CliError(f"lora_targets: {text!r} is not all, qv, qkv, attn, mlp or a comma list of modules "
                       "(q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, lm_head)")


def build_workload(values: dict[str, Any], snapshot: Any, *, flags: bool = False) -> Any:
    """A Workload from flag values / a JSON line; bad values raise CliError with the key and the range."""
    from bot.cli.validate import require_estimate_values
    from rules.types import Workload
    from rules.workload.formats import KV_CACHE_DTYPES, WEIGHT_FORMATS
    from rules.workload.serving import ENGINES

    values = require_estimate_values(values, flags=flags)
    model = None
    if values.get("model"):
        try:
            model = _resolve_model(str(values["model"]), snapshot)
        except CliError:
            if values.get("params_b") is None:
                raise
    _require_lora_targets(values.get("lora_targets"))
    gpu_id, gpu_count = (None, None)
    if values.get("gpu"):
        gpu_id, gpu_count = _resolve_gpu(str(values["gpu"]), snapshot)
    return Workload(
        model=model, params_b=values.get("params_b"),
        method=_choice(values, "method", METHODS),  # type: ignore[arg-type]
        framework=_choice(values, "framework", FRAMEWORKS), recipe=values.get("recipe"),
        optimizer=values.get("optimizer"), precision=values.get("precision"),
        seq_len=values.get("seq_len"), batch_size=values.get("batch_size"),
        grad_checkpointing=_choice(values, "grad_checkpointing", CHECKPOINTING),  # type: ignore[arg-type]
        lora_rank=values.get("lora_rank"), lora_targets=values.get("lora_targets"),
        gpus=values.get("gpus") or gpu_count,
        sharding=_choice(values, "sharding", SHARDING),  # type: ignore[arg-type]
        offload=values.get("offload"), gpu=gpu_id, resolution=values.get("resolution"),
        tokens=values.get("tokens"), samples=values.get("samples"),
        epochs=values.get("epochs"), budget_usd=values.get("budget_usd"),
        deadline_hours=values.get("deadline_hours"), spot=values.get("spot"),
        objective=_choice(values, "objective", OBJECTIVES),  # type: ignore[arg-type]
        concurrency=values.get("concurrency"), context_tokens=values.get("context_tokens"),
        quantization=_choice(values, "quantization", WEIGHT_FORMATS),
        kv_cache_dtype=_choice(values, "kv_cache_dtype", KV_CACHE_DTYPES),
        engine=_choice(values, "engine", ENGINES), tokens_per_s=values.get("tokens_per_s"),
        tokens_per_s_scope=_choice(values, "tokens_per_s_scope", TOKENS_PER_S_SCOPES),  # type: ignore[arg-type]
        family=str(values["family"]).lower() if values.get("family") else None,
        framework_version=str(values["framework_version"]) if values.get("framework_version") else None,
        loss=_choice(values, "loss", LOSSES), memory_basis=_choice(values, "memory_basis", BASES),
        text_encoder_training=values.get("text_encoder_training"), cache_latents=values.get("cache_latents"),
        electricity_usd_per_kwh=values.get("electricity_usd_per_kwh"), frames=values.get("frames"),
        compile=values.get("compile"),
    )


def _emit(result: dict[str, Any], *, as_json: bool) -> int:
    if as_json:
        print(to_json(result, indent=2))
        return 0
    memory = result["memory"]
    print(f"Memory per GPU: {memory['per_gpu_gib']:.1f} GiB (band {memory['low_gib']:.1f}-{memory['high_gib']:.1f})")
    print("  " + ", ".join(f"{k} {v:.1f}" for k, v in memory["breakdown"].items() if v))
    print("Assumed: " + ", ".join(f"{k}={v}" for k, v in result["assumptions"].items()))
    if result.get("pinned"):
        _print_pinned(result["pinned"])
    for rank, option in enumerate(result["options"], start=1):
        if "throughput" in option:
            _print_serving_option(rank, option)
            continue
        cost = f"${option['cost_usd']:.2f}" if option["cost_usd"] is not None else "no price/hours"
        hours = f"{option['hours']:.1f} h" if option["hours"] is not None else "hours unknown"
        switches = f" +{'+'.join(option['switches'])}" if option["switches"] else ""
        print(f"{rank}. {option['count']}x {option['gpu']['name']} ({option['sharding']}{switches}): "
              f"{option['memory_per_gpu_gib']:.1f} GiB/GPU, {hours}, {cost}")
    if not result["options"]:
        print("No GPU in the catalog fits this job.")
    for reject in result["rejected"]:
        numbers = reject["numbers"]
        print(f"  not {reject['gpu']['name']}: {reject['code']} "
              f"(needs {numbers.get('needed_gib')} GiB, has {numbers.get('has_gib')})")
    for finding in result["findings"]:
        print(f"  [{finding['outcome']}] {finding['code']} {finding['numbers']}")
    if result.get("precisions"):
        print("Precisions: " + ", ".join(f"{p['precision']} {p['needed_gib']:.1f} GiB "
                                         f"{'fits' if p['fits'] else 'no'}" for p in result["precisions"]))
    if result.get("command"):
        print("Command: " + result["command"]["line"])
    return 0


def _print_pinned(pinned: dict[str, Any]) -> None:
    verdict = "fits" if pinned["fits"] else f"does not fit (offload {pinned['offload_gib']:.1f} GiB)"
    print(f"Your {pinned['count']}x {pinned['gpu']['name']}: {verdict} at {pinned['precision']}, "
          f"needs {pinned['needed_gib']:.1f} GiB/GPU of {pinned['has_gib']:.1f}")
    if pinned.get("throughput"):
        print("  " + _rates(pinned["throughput"]))


def _rates(throughput: dict[str, Any]) -> str:
    return (f"{throughput['output_tokens_per_s_per_user']:.1f} tok/s per user, "
            f"{throughput['output_tokens_per_s']:.1f} tok/s for {throughput['concurrency']} "
            f"({throughput['basis']}), prefill {throughput['prefill_tokens_per_s']:.0f} tok/s, "
            f"up to {throughput['max_concurrency']} sequences")


def _print_serving_option(rank: int, option: dict[str, Any]) -> None:
    cost = option["usd_per_million_output_tokens"]
    price = f"${cost:.2f}/M output tokens, ${option['usd_per_month']:.0f}/month" if cost is not None else "no price"
    print(f"{rank}. {option['count']}x {option['gpu']['name']} {option['precision']} on {option['engine']}: "
          f"{option['memory_per_gpu_gib']:.1f} GiB/GPU, {_rates(option['throughput'])}, {price}")


def print_calibration_report(cases_dir: Path, *, as_json: bool) -> int:
    """Median / p90 absolute % error and band coverage, overall, tuned vs held-out, per source."""
    from rules.memory.calibration import evaluate_cases, summaries

    cases = load_memory_cases(cases_dir)
    settings = json.loads((cases_dir / "memory_cases_settings.json").read_text(encoding="utf-8"))["cases"]
    models = json.loads((cases_dir / "memory_case_models.json").read_text(encoding="utf-8"))
    results = evaluate_cases(cases, settings, models)
    rows = summaries(results)
    if as_json:
        # An empty group (no held-out case of that kind) has no median: null, not NaN (issue 19).
        print(to_json([{"group": s.label, "count": s.count,
                        "median_abs_pct": round(s.median_abs_pct, 1) if s.count else None,
                        "p90_abs_pct": round(s.p90_abs_pct, 1) if s.count else None, "in_band": s.in_band}
                       for s in rows], indent=2))
        return 0
    for r in sorted(results, key=lambda r: r.error_pct):
        mark = "H" if r.held_out else " "
        band = "in " if r.in_band else "OUT"
        print(f"{r.case_id:42s} {mark} {r.kind:17s} {r.measured_gib:6.1f} predicted "
              f"{r.predicted_gib:6.1f} [{r.low_gib:6.1f}, {r.high_gib:6.1f}] {r.error_pct:+6.1f}% {band}")
    print()
    print(f"{'group':32s} {'n':>3s} {'median|%|':>10s} {'p90|%|':>8s} {'in band':>8s}")
    for s in rows:
        if s.count:
            print(f"{s.label:32s} {s.count:3d} {s.median_abs_pct:10.1f} {s.p90_abs_pct:8.1f} {s.in_band:4d}/{s.count}")
    print()
    _print_time_report(cases, settings, models)
    return 0


def load_memory_cases(cases_dir: Path) -> list[dict[str, Any]]:
    """The published measured runs: the shared dev table and the ones added here (each row says its table)."""
    dev = json.loads((cases_dir / "memory_cases_dev.json").read_text(encoding="utf-8"))
    more = json.loads((cases_dir / "memory_cases_more.json").read_text(encoding="utf-8"))
    return [{**case, "table": "dev"} for case in dev] + [{**case, "table": "more"} for case in more]


def _print_time_report(cases: list[Any], settings: dict[str, Any], models: dict[str, Any]) -> None:
    """Throughput cases: implied MFU, the fit on the tuned part, and hours error of the MFU table."""
    from knowledge.load import read_catalog
    from knowledge.rule_tables import load_rule_tables
    from knowledge.snapshot import gpu_spec
    from knowledge.tables import GpuBase
    from rules.memory.calibration import throughput_cases
    from rules.speed.calibration import MAX_PLAUSIBLE_MFU, fit_mfu, time_error_summary, time_errors

    gpus = {spec.id: spec for spec in (gpu_spec(row) for row in read_catalog()["gpus"] if isinstance(row, GpuBase))}
    tables = load_rule_tables()
    rows = throughput_cases(cases, settings, models, gpus, tables)
    errors = {e.case_id: e.error_pct for e in time_errors(rows, tables.mfu)}
    print("Time model: published tokens/s vs FLOPs / (dense peak x MFU table); error = predicted hours")
    for r in rows:
        flag = "H" if r.held_out else " "
        note = "  implausible (> peak share), not fitted" if r.observed_mfu > MAX_PLAUSIBLE_MFU else ""
        print(f"{r.case_id:42s} {flag} {r.segment:11s} {r.method:5s} {r.tokens_per_gpu_s:8.0f} tok/GPU/s "
              f"MFU {r.observed_mfu:5.3f}  hours {errors[r.case_id]:+6.1f}%{note}")
    print("fit (median of tuned, plausible):", ", ".join(f"{s}/{m} {v}" for (s, m), v in fit_mfu(rows).items()))
    print(f"{'group':32s} {'n':>3s} {'median|%|':>10s} {'p90|%|':>8s}")
    for label, count, median, p90 in time_error_summary(rows, errors):
        print(f"{label:32s} {count:3d} {median:10.1f} {p90:8.1f}")
