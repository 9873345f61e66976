"""release.wheels: every package has a smoke test (the builds themselves run in test_make_release)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from release.packages import load_packages
from release.wheels import SMOKE_TESTS

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_has_a_smoke_test() -> None:
    assert set(SMOKE_TESTS) == {p.name for p in load_packages(ROOT)}


def test_the_smoke_tests_are_the_documented_ones() -> None:
    argv = {name: [t.argv for t in tests] for name, tests in SMOKE_TESTS.items()}
    assert argv == {
        "e2b": [("python", "-c", "import e2b; print(e2b.__version__)")],
        "e2b-cli": [("e2b", "--version")],
        "e2b-local-api": [("e2b-local-api", "--help")],
    }


def test_a_failed_step_shows_its_last_output_lines_escaped() -> None:
    """A tool's output is data: each of its lines is shown under the problem, controls escaped."""
    from release.errors import ReleaseError
    from release.wheels import _run

    script = "import sys; print('built'); print('x\\x1b[2J\\u202e', file=sys.stderr); sys.exit(3)"
    with pytest.raises(ReleaseError) as caught:
        _run([sys.executable, "-c", script], what="the smoke test")
    [problem] = caught.value.problems
    lines = problem.render().split("\n")
    assert lines[0].startswith("the smoke test failed (exit 3): ")
    assert lines[1:] == [
        "    built",
        "    x\\x1b[2J\\u202e",
        "  -> fix the package, then release again; nothing was written",
    ]
