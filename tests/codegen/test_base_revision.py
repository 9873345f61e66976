"""The offline check trusts only the base revision's lock: a forged lock never reads "clean"."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from codegen.base_revision import find_base
from codegen.config import Project
from codegen.errors import CodegenError
from codegen.lock import git_blob_id
from tests.codegen.conftest import OFFLINE, Result, change_description, commit_all, git_repo, unchanged

pytestmark = pytest.mark.usefixtures("offline_project")  # the configured upstream is unreachable


def forge_on_a_branch(project: Path, run: Callable[..., Result]) -> None:
    """What a hostile pull request does: edit the spec, write its blob id into the lock, regenerate offline."""
    git_repo(project).git.checkout("-q", "-b", "pr")
    spec = project / "spec/openapi.yml"
    spec.write_text(change_description(spec.read_text()))
    lock_path = project / "spec/openapi.lock.json"
    lock = json.loads(lock_path.read_text())
    lock["blob"] = git_blob_id(spec.read_bytes())
    lock_path.write_text(json.dumps(lock, indent=2) + "\n")
    generated = run(project, "generate", **OFFLINE)
    assert generated.code == 0, generated.text
    commit_all(project, "a description, hand-edited")


@pytest.mark.parametrize("args", [("--base", "main"), ()], ids=["--base main", "merge base with main"])
def test_a_forged_lock_offline_is_refused_naming_the_touched_files(
    project: Path, run: Callable[..., Result], args: tuple[str, ...]
) -> None:
    forge_on_a_branch(project, run)
    with unchanged(project):
        result = run(project, "check", *args, **OFFLINE)
    assert result.code == 2, result.text
    assert "codegen: clean" not in result.text
    assert "this change moves or touches the pin (spec/openapi.lock.json, spec/openapi.yml differ" in result.err
    assert "only the upstream can" in result.err and "E2B_RUNTIME_REPO may name a mirror" in result.err


def test_a_forged_lock_with_the_upstream_reachable_is_a_hand_edited_spec(
    project: Path, run: Callable[..., Result]
) -> None:
    forge_on_a_branch(project, run)
    result = run(project, "check", "--base", "main")
    assert result.code == 1, result.text
    assert "hand-edited spec" in result.out


def test_a_change_that_leaves_the_pin_alone_is_checked_offline_against_the_bases_lock(
    project: Path, run: Callable[..., Result]
) -> None:
    git_repo(project).git.checkout("-q", "-b", "pr")
    (project / "README.md").write_text("a documentation change\n")
    commit_all(project, "docs")
    result = run(project, "check", "--base", "main", **OFFLINE)
    assert result.code == 0, result.text
    assert "unchanged since the base" in result.err and "(--base main)" in result.err


def test_an_uncommitted_edit_counts_as_touching_the_pin(project: Path) -> None:
    (project / "spec/runtime-ref").write_text("0" * 40 + "\n")
    base = find_base(Project(project), None)
    assert base is not None and base.touched == ("spec/runtime-ref",)
    assert base.described == "the merge base with main"


def test_a_base_that_names_no_commit_is_an_error(project: Path, run: Callable[..., Result]) -> None:
    result = run(project, "check", "--base", "no-such-branch", **OFFLINE)
    assert result.code == 2 and "--base no-such-branch names no commit" in result.err
    with pytest.raises(CodegenError, match="is not a revision"):
        find_base(Project(project), "--output=x")


def test_without_git_there_is_no_base_and_nothing_vouches_unless_the_tree_is_trusted_explicitly(
    project: Path, run: Callable[..., Result]
) -> None:
    shutil.rmtree(project / ".git")
    assert find_base(Project(project), None) is None
    with unchanged(project):
        result = run(project, "check", **OFFLINE)
    assert result.code == 2, result.text
    assert "no base revision" in result.err and "the check cannot vouch for the lock" in result.err
    assert "--trust-tree" in result.err and "clean" not in result.text
    trusted = run(project, "check", "--trust-tree", **OFFLINE)
    assert trusted.code == 0, trusted.text
    assert "--trust-tree: no base revision; the tree's lock and [tool.codegen] are trusted as they are" in trusted.err


def test_trust_tree_and_base_are_exclusive(project: Path, run: Callable[..., Result]) -> None:
    result = run(project, "check", "--base", "main", "--trust-tree")
    assert result.code == 2 and "not allowed with argument" in result.err
