"""release.python_api.diff_generated: the regenerated folders against the tree, package by package (griffe)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from codegen.config import GENERATED_ROOTS
from release import python_api
from release.errors import ReleaseError
from release.packages import Package

WIRE = "packages/local-api/e2b_local_api/wire"
CLIENT_MODELS = "packages/python-sdk/e2b/api/client/models"


def generated_files(root: Path) -> dict[str, bytes]:
    """What the tree's generated folders hold, as a regeneration would stage it."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for folder in GENERATED_ROOTS
        for path in (root / folder).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def packages_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The packages griffe is asked to read, one entry per side."""
    read: list[str] = []
    load_api = python_api.load_api

    def spy(package: Package, where: Path) -> dict[str, Any]:
        read.append(package.name)
        return load_api(package, where)

    monkeypatch.setattr(python_api, "load_api", spy)
    return read


def test_only_the_package_whose_generated_files_changed_is_read(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    staged = generated_files(project)
    init = f"{CLIENT_MODELS}/__init__.py"
    staged[f"{CLIENT_MODELS}/sandbox_note.py"] = b"class SandboxNote:\n    text: str\n"
    staged[init] += b"from .sandbox_note import SandboxNote\n"
    read = packages_read(monkeypatch)

    diffs = {diff.package: diff for diff in python_api.diff_generated(project, staged, GENERATED_ROOTS)}

    assert set(read) == {"e2b"}  # both sides of e2b; the local server's wire models are as the tree has them
    assert diffs["e2b-local-api"] == python_api.ApiDiff("e2b-local-api", (), ())
    assert diffs["e2b"].added == ("e2b.api.client.models.sandbox_note (module)",) and not diffs["e2b"].breaks


def test_a_changed_wire_model_is_read_and_the_unchanged_client_is_not(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged = generated_files(project)
    staged[f"{WIRE}/models.py"] += b"\n\nclass Extra:\n    pass\n"
    read = packages_read(monkeypatch)
    diffs = {diff.package: diff for diff in python_api.diff_generated(project, staged, GENERATED_ROOTS)}
    assert read == ["e2b-local-api", "e2b-local-api"]
    assert diffs["e2b"] == python_api.ApiDiff("e2b", (), ())


def test_a_link_in_an_unchanged_generated_folder_is_still_refused(project: Path) -> None:
    staged = generated_files(project)
    os.symlink("/etc/passwd", project / WIRE / "passwd.py")
    with pytest.raises(ReleaseError, match="is a symlink"):
        python_api.diff_generated(project, staged, GENERATED_ROOTS)
