"""Fixtures for the release tests: a scratch copy of this repository (a real git repository).

The copy is the codegen tests' pristine project (regenerated from the rebuilt
upstream and committed on `main`); the generated-files check that `release`
runs reads that upstream, in process, with the codegen tests' memoized generation.
"""

from __future__ import annotations

import contextlib
import io
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from release.cli import main as release_main
from tests.codegen.conftest import (  # noqa: F401  (fixtures, shared with the codegen tests)
    _memoized_generation,
    commit_all,
    generation_memo,
    git_repo,
    pristine_project,
    pristine_upstream,
)

SDK, CLI, LOCAL_API = "packages/python-sdk", "packages/cli", "packages/local-api"


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def project(pristine_project: Path, tmp_path: Path) -> Path:  # noqa: F811  (the fixture, imported above)
    dest = tmp_path / "project"
    shutil.copytree(pristine_project, dest, symlinks=True)
    return dest


@pytest.fixture(autouse=True)
def _codegen_env(pristine_upstream: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.delenv("E2B_RUNTIME_REF", raising=False)
    monkeypatch.setenv("E2B_RUNTIME_REPO", str(pristine_upstream))
    monkeypatch.setenv("E2B_CODEGEN_CACHE", str(tmp_path / "cache"))


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
