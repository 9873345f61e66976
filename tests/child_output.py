"""A child's stderr, line by line, until the line a test waits for: within a bound, never forever."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable

# Seconds: a failure bound only (a child takes a fraction of one). A child that never prints the line
# is killed, its stderr then ends, and the test's assertion says what it printed instead.
LINES_BOUND = 120.0


def stderr_until(
    proc: subprocess.Popen[str], reached: Callable[[list[str]], bool], *, bound: float = LINES_BOUND
) -> list[str]:
    """The lines `proc` wrote to stderr, up to the first after which `reached(lines so far)` holds."""
    assert proc.stderr is not None
    seen: list[str] = []
    watchdog = threading.Timer(bound, proc.kill)
    watchdog.start()
    try:
        for line in proc.stderr:
            seen.append(line)
            if reached(seen):
                break
    finally:
        watchdog.cancel()
    return seen
