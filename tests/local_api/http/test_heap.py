"""`e2b_local_api.http.heap`: freed buffers stay in the heap, so the next ones fault no page in.

Each case runs in a fresh interpreter (the setting is the whole process's) and counts the minor
page faults of allocating and freeing two 256 KiB buffers a hundred times, as an upload's pieces come and go.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHURN = """
import resource, sys
from e2b_local_api.http.heap import keep_freed_heap
if sys.argv[1] == "keep":
    assert keep_freed_heap()
def churn():
    for _ in range(100):
        first = b"x" * (256 << 10)
        second = b"y" * (256 << 10)
        del first, second
churn()  # the heap grows to its size once
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
churn()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""

PAGES_CHURNED = 100 * 2 * (256 << 10) // 4096


def _faults(mode: str) -> int:
    # glibc's thresholds as it sets them itself: no MALLOC_* or GLIBC_TUNABLES from the caller.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}
    done = subprocess.run([sys.executable, "-c", CHURN, mode], capture_output=True, text=True, check=True, env=env)
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux")
def test_freed_buffers_are_reused_without_faulting_their_pages_in_again() -> None:
    kept = _faults("keep")
    assert kept < PAGES_CHURNED // 100
    assert _faults("default") > PAGES_CHURNED // 2  # glibc's own thresholds: what this setting is for
