"""stderr_until: the lines up to the one a test waits for; a child that never prints it is ended, not waited on."""

from __future__ import annotations

import subprocess
import sys

from tests.child_output import stderr_until


def _child(code: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)


def test_the_lines_up_to_the_awaited_one() -> None:
    proc = _child("import sys, time\nfor n in range(3): print(n, file=sys.stderr, flush=True)\ntime.sleep(60)")
    try:
        assert stderr_until(proc, lambda lines: lines[-1] == "1\n") == ["0\n", "1\n"]
    finally:
        proc.kill()
        proc.communicate()


def test_a_child_that_never_prints_it_is_killed_and_its_lines_returned() -> None:
    proc = _child("import sys, time\nprint('started', file=sys.stderr, flush=True)\ntime.sleep(60)")
    # Started first, without the short bound: a busy machine may take longer than it to start Python.
    assert stderr_until(proc, lambda lines: lines[-1] == "started\n") == ["started\n"]
    assert stderr_until(proc, lambda lines: lines[-1] == "ready\n", bound=0.5) == []
    assert proc.wait(timeout=30) < 0  # killed by the bound, not ended by itself


def test_a_child_that_ends_first_ends_the_wait() -> None:
    proc = _child("import sys\nprint('bye', file=sys.stderr)")
    assert stderr_until(proc, lambda lines: False) == ["bye\n"]
    assert proc.wait(timeout=30) == 0
