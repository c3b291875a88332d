"""Process start to ready: `gpu-advisor ask` from exec to its first answer, with its peak memory."""

from __future__ import annotations

import compileall
import json
import os
import resource
import subprocess
import time
from importlib import util

from bot.bench.http_load import gpu_advisor_command
from bot.bench.result import AskTiming, ImportTime, StartProfileRow

QUESTION = "fine-tune a 13B model with QLoRA on a budget"
LIMIT_S = 60.0


PACKAGES = ("bot", "knowledge", "rules")


def ensure_bytecode() -> bool:
    """Compile the project's modules to `__pycache__` once, as an install or a server that has run before has them.

    A process started with PYTHONDONTWRITEBYTECODE=1 (set in some sandboxes and CI images) never writes the
    cache, so every start would compile every module from source (about 0.15 s here) and the start-up budgets
    would measure the compiler instead. True when every module has current bytecode (a read-only tree: False)."""
    ok = True
    for name in PACKAGES:
        spec = util.find_spec(name)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            ok = bool(compileall.compile_dir(folder, quiet=2)) and ok
    return ok


def time_ask(database_url: str, *, runs: int = 3, question: str = QUESTION) -> AskTiming:
    """Wall time of `gpu-advisor ask` (exec, imports, snapshot, answer, exit); median of `runs` after one warm-up.

    The warm-up fills the OS file cache, and the modules' bytecode is compiled first (`ensure_bytecode`), as on
    a server that has run before.
    """
    bytecode = ensure_bytecode()
    env = {**os.environ, "DATABASE_URL": database_url, "LOG_LEVEL": "WARNING"}
    command = [*gpu_advisor_command(), "ask", question, "--json"]
    times, peak_kb = [], 0
    for attempt in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, timeout=LIMIT_S, check=False)
        elapsed = time.perf_counter() - started
        if done.returncode != 0 or b'"blocks"' not in done.stdout:
            raise RuntimeError(f"gpu-advisor ask failed: {done.stderr.decode(errors='replace')[-1500:]}")
        peak_kb = max(peak_kb, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before)
        if attempt:
            times.append(elapsed)
    times.sort()
    return AskTiming(median_s=round(times[len(times) // 2], 3), best_s=round(times[0], 3), runs=runs,
                     peak_rss_mb=round(peak_kb / 1024, 1), bytecode=bytecode)


def import_profile(database_url: str) -> list[ImportTime]:
    """The slowest imports of `gpu-advisor ask` (python -X importtime), cumulative ms, top 10."""
    env = {**os.environ, "DATABASE_URL": database_url, "LOG_LEVEL": "WARNING"}
    code = "import sys; from bot.cli import main; sys.exit(main())"
    import sys

    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code, "ask", QUESTION, "--json"],
                          env=env, capture_output=True, timeout=LIMIT_S, check=False)
    rows: list[ImportTime] = []
    for line in done.stderr.decode(errors="replace").splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative_us, name = line.removeprefix("import time:").split("|", 2)
        if cumulative_us.strip().isdigit():
            depth = len(name) - len(name.lstrip()) - 1  # one space after the bar, two more per level
            rows.append(ImportTime(module=name.strip(), depth=depth // 2,
                                   cumulative_ms=round(int(cumulative_us) / 1000, 1)))
    return sorted(rows, key=lambda r: r["cumulative_ms"], reverse=True)[:12]


_PROFILE_CODE = """
import cProfile, json, pstats, sys, io, contextlib
profiler = cProfile.Profile()
profiler.enable()
from bot.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["ask", sys.argv[1], "--json"])
profiler.disable()
rows = []
for (f, line, name), (_, calls, own, cum, _) in pstats.Stats(profiler).stats.items():
    if "/bot/" in f or "/knowledge/" in f or "/rules/" in f:
        short = f[f.rfind("/", 0, max(f.rfind("/bot/"), f.rfind("/knowledge/"), f.rfind("/rules/")) + 1) + 1:]
        rows.append({"where": f"{short}:{line}({name})", "calls": calls, "cumulative_ms": round(cum * 1000, 1)})
rows.sort(key=lambda r: r["cumulative_ms"], reverse=True)
print(json.dumps(rows[:15]))
"""


def start_profile(database_url: str) -> list[StartProfileRow]:
    """cProfile of one `gpu-advisor ask` in a fresh interpreter: the project's functions by cumulative ms."""
    import sys

    env = {**os.environ, "DATABASE_URL": database_url, "LOG_LEVEL": "WARNING"}
    done = subprocess.run([sys.executable, "-c", _PROFILE_CODE, QUESTION], env=env, capture_output=True,
                          timeout=LIMIT_S, check=False)
    lines = done.stdout.decode(errors="replace").strip().splitlines()
    rows: list[StartProfileRow] = json.loads(lines[-1]) if done.returncode == 0 and lines else []  # _PROFILE_CODE's rows
    return rows
