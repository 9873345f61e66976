"""Fixtures for the release tests: a scratch copy of this repository (a real git repository).

The copy is the codegen tests' pristine project (regenerated from the rebuilt
upstream and committed on `main`); the generated-files check that `release`
runs, as a process of its own (`python -m codegen check`), reads that upstream,
its tools answered by the codegen tests' memo (`release_checker`).
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from release import make_release
from release.cli import main as release_main
from tests.codegen.conftest import (  # noqa: F401  (fixtures, shared with the codegen tests)
    _memoized_generation,
    commit_all,
    generation_memo,
    git_repo,
    pristine_project,
    pristine_upstream,
    release_checker,
)
from tests.once_per_run import build_once, copy_tree

SDK, CLI, LOCAL_API = "packages/python-sdk", "packages/cli", "packages/local-api"

# The release the tests plan from, whatever this checkout last released: every expected plan,
# tag and bound below is written against it.
BASELINE = {
    f"{SDK}/pyproject.toml": "2.0.0",
    f"{SDK}/e2b/__init__.py": "2.0.0",
    f"{CLI}/pyproject.toml": "2.0.0",
    f"{CLI}/e2b_cli/__init__.py": "2.0.0",
    f"{LOCAL_API}/pyproject.toml": "0.1.0",
}
BASELINE_BOUND = "e2b>=2.0.0,<3"
CHANGELOG_HEAD = "<!-- towncrier release notes start -->\n"


def set_baseline(root: Path) -> None:
    """Put the tree at BASELINE: its version files, the CLI's bound on e2b, changelogs with no release yet."""
    for rel, version in BASELINE.items():
        path = root / rel
        text, count = re.subn(
            r'^(version|__version__) = "[^"]*"$', rf'\1 = "{version}"', path.read_text(), count=1, flags=re.M
        )
        if rel == f"{CLI}/pyproject.toml":
            text, bounds = re.subn(r'"e2b>=[^"]*"', f'"{BASELINE_BOUND}"', text)
            count = min(count, bounds)
        assert count == 1, f"{rel}: no version line (or bound) to set: update set_baseline"
        path.write_text(text)
    for changelog in root.glob("packages/*/CHANGELOG.md"):
        text = changelog.read_text()
        assert CHANGELOG_HEAD in text, f"{changelog}: no towncrier marker"
        changelog.write_text(text.split(CHANGELOG_HEAD)[0] + CHANGELOG_HEAD)


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture(scope="session")
def release_baseline(pristine_project: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """The pristine project at BASELINE, committed: built once per run, each test's `project` a copy of it."""

    def build(folder: Path) -> None:
        root = copy_tree(pristine_project, folder / "project")
        set_baseline(root)
        if git_repo(root).is_dirty():
            commit_all(root, "the release tests' baseline")

    return build_once(tmp_path_factory, "release-baseline", build) / "project"


@pytest.fixture
def project(release_baseline: Path, tmp_path: Path) -> Path:
    return copy_tree(release_baseline, tmp_path / "project")


@pytest.fixture(autouse=True)
def _codegen_env(pristine_upstream: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.delenv("E2B_RUNTIME_REF", raising=False)
    monkeypatch.setenv("E2B_RUNTIME_REPO", str(pristine_upstream))
    monkeypatch.setenv("E2B_CODEGEN_CACHE", str(tmp_path / "cache"))


@pytest.fixture(autouse=True)
def _checker_with_the_memo(monkeypatch: pytest.MonkeyPatch, _memoized_generation: None) -> None:  # noqa: F811
    """The release's check runs codegen's own logic on the tools' remembered answers: what these tests read is
    its verdict (clean, drift, could not run), which the tools decide only through their outputs."""
    monkeypatch.setattr(make_release, "CHECKER", release_checker())


@pytest.fixture
def run() -> Callable[..., Result]:
    """run(root, verb, *args): `python -m release --root ROOT verb args` in process."""

    def _run(root: Path, *args: str) -> Result:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = release_main(["--root", str(root), *args])
            except SystemExit as exc:  # argparse
                code = exc.code if isinstance(exc.code, int) else 2
        return Result(code, out.getvalue(), err.getvalue())

    return _run


def add_fragment(root: Path, package: str, name: str, text: str) -> Path:
    path = root / package / "changelog.d" / name
    path.write_text(text, encoding="utf-8")
    return path
