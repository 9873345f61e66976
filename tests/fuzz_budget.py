"""How hard the property and conformance tests search.

In `nox -s tests` they are reproducible: hypothesis derandomizes, so the same
examples run on every run and machine and a failure in CI fails again locally.
`nox -s fuzz` sets E2B_FUZZ=1: random examples, each test's budget times
FUZZ_FACTOR, to look for what the fixed examples miss. A failure there prints
the blob to replay it with `@reproduce_failure`.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

FUZZING = os.environ.get("E2B_FUZZ") == "1"
FUZZ_FACTOR = 20

# No timing checks: a deadline or "input generation is slow" fails a test when the machine is loaded
# (CI's two cores, xdist workers beside it), which says nothing about the code under test.
UNTIMED = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deterministic", UNTIMED, derandomize=True, database=None, print_blob=True)
settings.register_profile("fuzz", UNTIMED, derandomize=False, database=None, print_blob=True)
settings.load_profile("fuzz" if FUZZING else "deterministic")


def examples(n: int) -> int:
    """A test's example budget: `n` in the test suite, more when fuzzing."""
    return n * FUZZ_FACTOR if FUZZING else n
