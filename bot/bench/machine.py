"""The machine a benchmark ran on: CPU model, cores, RAM, Python, OS, load average."""

from __future__ import annotations

import os
import platform
import resource
import time
from pathlib import Path

from bot.bench.result import MachineInfo


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def reference_ms(tries: int = 5) -> float:
    """CPU time (best of `tries`) of a fixed pure-Python workload: the host's speed for this interpreter.

    Hosts sold under one CPU name differ: on two days, "AMD EPYC" 2-core machines answered the same corpus
    with the same code at a CPU p50 of 1.0 and 2.8 ms (docs/BENCHMARKS.md). Every answer time scales with
    the host, so a reader compares this figure first. The workload mixes what answering does: dict
    lookups, float arithmetic, string formatting and a sort.
    """
    best = float("inf")
    for _ in range(tries):
        started = time.thread_time()
        table: dict[int, float] = {}
        words: list[str] = []
        for i in range(200_000):
            table[i & 1023] = table.get(i & 1023, 0.0) + i * 0.5
            if i % 50 == 0:
                words.append(f"{i:,} GiB")
        sorted(words)
        best = min(best, time.thread_time() - started)
    return round(best * 1000, 1)


def describe(*, speed: bool = False) -> MachineInfo:
    """What the figures depend on; the load average says how busy the machine was while measuring, and
    `reference_ms` (when `speed`) how fast the host runs Python at all."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    info: MachineInfo = {
        "cpu": _cpu_model(),
        "cores": cores,
        "ram_gb": _ram_gb(),
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }
    if speed:
        import rules

        info["reference_ms"] = reference_ms()
        info["engine"] = "compiled" if rules.compiled() else "source"
    return info


def peak_rss_mb(pid: int | None = None) -> float:
    """Peak resident set (VmHWM) of a process; of this one via getrusage when /proc is absent."""
    path = Path(f"/proc/{pid or 'self'}/status")
    try:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def children_peak_rss_mb() -> float:
    """The largest peak RSS among waited-for child processes (Linux reports kB)."""
    return round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
