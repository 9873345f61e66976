"""A sandbox's CPU and memory, summed over its processes, in envd's /metrics shape.

CPU is the share of the host's cores its processes used since the previous
call (since they started, on the first call); memory is their resident set.
Totals and disk are the host's: a sandbox here has no limits of its own.
"""

from __future__ import annotations

import os
import shutil
import time
from typing import Any

from .sandbox_view import SandboxView

_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _cpu_seconds_and_rss(pid: int) -> tuple[float, int, float] | None:
    """(user+system CPU seconds, resident bytes, start time in seconds since boot) of one process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        with open(f"/proc/{pid}/statm", "rb") as f:
            statm = f.read().split()
    except OSError:
        return None  # exited meanwhile
    fields = stat[stat.rfind(b")") + 2 :].split()
    # Fields after the name start at 3 (state): utime is 14, stime 15, starttime 22.
    utime, stime, start = int(fields[11]), int(fields[12]), int(fields[19])
    return (utime + stime) / _TICKS, int(statm[1]) * _PAGE, start / _TICKS


def _mem_total() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return 0


def _uptime() -> float:
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


def metrics_of(sandbox: SandboxView, samples: dict[str, tuple[float, float]]) -> dict[str, Any]:
    """envd's Metrics for the sandbox; `samples` keeps each sandbox's last (wall, cpu) between calls."""
    now, uptime = time.monotonic(), _uptime()
    cpu = rss = 0.0
    oldest = uptime
    for pid in sandbox.pids():
        usage = _cpu_seconds_and_rss(pid)
        if usage is not None:
            cpu += usage[0]
            rss += usage[1]
            oldest = min(oldest, usage[2])
    cores = os.cpu_count() or 1
    previous = samples.get(sandbox.sandbox_id)
    if previous is not None and now > previous[0] and cpu >= previous[1]:
        used = (cpu - previous[1]) / ((now - previous[0]) * cores)
    else:
        used = cpu / (max(uptime - oldest, 1e-3) * cores) if cpu else 0.0
    samples[sandbox.sandbox_id] = (now, cpu)
    total = _mem_total()
    disk = shutil.disk_usage(sandbox.root)
    return {
        "ts": int(time.time()),
        "cpu_count": cores,
        "cpu_used_pct": round(min(used, 1.0) * 100, 2),
        "mem_total_mib": total // (1 << 20),
        "mem_used_mib": int(rss) // (1 << 20),
        "mem_total": total,
        "mem_used": int(rss),
        "mem_cache": 0,
        "disk_used": disk.used,
        "disk_total": disk.total,
    }
