"""release.wheels: every package has a smoke test (the builds themselves run in test_make_release)."""

from __future__ import annotations

from pathlib import Path

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
