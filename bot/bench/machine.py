"""The machine a benchmark ran on: CPU model, cores, RAM, Python, OS, load average."""

from __future__ import annotations

import os
import platform
import resource
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


def describe() -> MachineInfo:
    """What the figures depend on; the load average says how busy the machine was while measuring."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": _cpu_model(),
        "cores": cores,
        "ram_gb": _ram_gb(),
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }


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
