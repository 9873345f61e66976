"""Synthetic resource samples: what `GET /sandboxes/{id}/metrics` answers.

Nothing runs in a local sandbox, so its usage is made up, but reproducibly:
one sample every `INTERVAL` seconds on whole seconds from the second the
sandbox started, each value derived from the sandbox's id, the sample's index and the
sandbox's sizes. The same sandbox asked twice for the same interval answers
the same samples, whichever process or order asks, and no value exceeds its
total (a client can plot them or check `used <= total`).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime

INTERVAL = 5  # seconds between samples
MIB = 1024 * 1024


@dataclass(frozen=True)
class Sample:
    timestamp: int  # Unix seconds
    cpu_count: int
    cpu_used_pct: float
    mem_used: int
    mem_total: int
    mem_cache: int
    disk_used: int
    disk_total: int

    @property
    def time(self) -> datetime:
        return datetime.fromtimestamp(self.timestamp, UTC)


@dataclass(frozen=True)
class Resources:
    sandbox_id: str
    started_at: datetime
    cpu_count: int
    memory_mb: int
    disk_size_mb: int


def samples(resources: Resources, *, now: datetime, start: int | None, end: int | None) -> list[Sample]:
    """The samples taken up to `now`, those from `start` to `end` (Unix seconds, both included), oldest first."""
    first = math.floor(resources.started_at.timestamp())  # the second it started in: a new sandbox has one
    last = math.floor(now.timestamp())
    low = first if start is None else max(first, start)
    high = last if end is None else min(last, end)
    # The first sample index at or after `low`, so a narrow range costs nothing however old the sandbox.
    index = max(0, -(-(low - first) // INTERVAL))
    taken = []
    while (timestamp := first + index * INTERVAL) <= high:
        taken.append(_sample(resources, index, timestamp))
        index += 1
    return taken


def _sample(resources: Resources, index: int, timestamp: int) -> Sample:
    mem_total = resources.memory_mb * MIB
    disk_total = resources.disk_size_mb * MIB
    return Sample(
        timestamp=timestamp,
        cpu_count=resources.cpu_count,
        cpu_used_pct=round(2 + 60 * _fraction(resources, index, "cpu"), 2),
        mem_used=int(mem_total * (0.2 + 0.4 * _fraction(resources, index, "mem"))),
        mem_total=mem_total,
        mem_cache=int(mem_total * (0.05 + 0.1 * _fraction(resources, index, "cache"))),
        # A disk fills slowly and never empties: a tenth, plus a little per sample, capped at nine tenths.
        disk_used=int(disk_total * min(0.9, 0.1 + 0.0001 * index)),
        disk_total=disk_total,
    )


def _fraction(resources: Resources, index: int, what: str) -> float:
    """A stable value in [0, 1): CRC-32 rather than hash(), which differs between processes."""
    return zlib.crc32(f"{resources.sandbox_id}/{index}/{what}".encode()) / 2**32
