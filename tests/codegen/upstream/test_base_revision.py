"""The check trusts only the base revision: its upstream, its lock; a forged one never reads "clean"."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from codegen.cli import RUN_LOCK
from codegen.upstream.base_revision import find_base
from codegen.upstream.spec_lock import git_blob_id
from tests.codegen.conftest import (
    OFFLINE,
    UNREACHABLE_URL,
    Result,
    Upstream,
    add_optional_property,
    change_description,
    commit_all,
    git_repo,
    run_in_process,
    run_subprocess,
    unchanged,
)
from toolkit.errors import ToolError
from toolkit.paths import Project

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
    with pytest.raises(ToolError, match="is not a revision"):
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


# --- hostile pull requests, run as the workflows run the check (real subprocesses) ---------


def ci_env(cache: Path) -> dict[str, str | None]:
    """CI sets no override: the configured upstream (the base's) is the one fetched."""
    return {"E2B_RUNTIME_REPO": None, "E2B_RUNTIME_REF": None, "E2B_CODEGEN_CACHE": str(cache)}


def set_runtime_repo(project: Path, url: str) -> None:
    """What a pull request writes: runtime-repo in pyproject.toml and the lock that records it."""
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text()
    line = next(line for line in text.splitlines() if line.startswith("runtime-repo = "))
    pyproject.write_text(text.replace(line, f"runtime-repo = {json.dumps(url)}"))
    lock_path = project / "spec/openapi.lock.json"
    lock = json.loads(lock_path.read_text())
    lock["runtime"] = url
    lock_path.write_text(json.dumps(lock, indent=2) + "\n")


def forged_runtime(upstream: Upstream, dest: Path) -> tuple[Path, str]:
    """A bare copy of the runtime with one forged commit on main: (its path, the forged commit)."""
    work = upstream.path.parent / "forging"
    git_repo(upstream.path).git.clone("--quiet", "--", str(upstream.path), str(work))
    sha = Upstream(work).commit_edit(change_description, "forged: a description the runtime never had")
    git_repo(work).git.clone("--quiet", "--bare", "--", str(work), str(dest))
    return dest, sha


def pull_request_with_its_own_upstream(
    project: Path, upstream: Upstream, cache: Path, where: str, configured: str
) -> None:
    """Main fetches from `upstream`; the pull request commits a forged runtime at `where` and pins it."""
    set_runtime_repo(project, upstream.url)
    commit_all(project, "the runtime repository")
    git_repo(project).git.checkout("-q", "-b", "pr")
    planted, forged = forged_runtime(upstream, project / where)
    # Regenerated from the forged runtime, as the pull request's author did with their own tools.
    (project / "spec/runtime-ref").write_text(forged + "\n")
    generated = run_in_process(project, "generate", env={**ci_env(cache), "E2B_RUNTIME_REPO": str(planted)})
    assert generated.code == 0, generated.text
    set_runtime_repo(project, configured)
    commit_all(project, "a forged runtime, committed")


@pytest.mark.parametrize(
    ("where", "configured", "refusal"),
    [
        ("vendor/runtime.git", "vendor/runtime.git", "resolves inside this repository"),
        (
            "https:/github.com/e2b-dev/runtime.git",
            "https:/github.com/e2b-dev/runtime.git",  # one slash: a look-alike in review
            "is neither a URL nor a local path (a ':' before the first '/')",
        ),
    ],
    ids=["vendor", "https-look-alike"],
)
def test_a_pull_request_that_brings_its_own_upstream_is_refused_before_git_runs(
    project: Path, upstream: Upstream, tmp_path: Path, where: str, configured: str, refusal: str
) -> None:
    cache = tmp_path / "ci-cache"
    pull_request_with_its_own_upstream(project, upstream, tmp_path / "setup-cache", where, configured)
    base = str(git_repo(project).git.rev_parse("main"))
    with unchanged(project):
        result = run_subprocess(project, "check", "--base", base, "--no-cache", env=ci_env(cache))
    assert result.code == 2, result.text
    assert "pyproject.toml [tool.codegen]: " in result.err and refusal in result.err
    assert "clean" not in result.text
    assert not list(cache.glob("runtime-*.git"))  # no repository was fetched, or even created


@pytest.mark.parametrize("reachable", [True, False], ids=["base-upstream-reachable", "base-upstream-unreachable"])
def test_a_pull_request_that_names_another_upstream_is_checked_against_the_bases(
    project: Path, upstream: Upstream, tmp_path: Path, reachable: bool
) -> None:
    """An upstream outside the tree (an attacker's https URL, here a folder) never vouches for itself."""
    set_runtime_repo(project, upstream.url if reachable else UNREACHABLE_URL)
    commit_all(project, "the runtime repository")
    git_repo(project).git.checkout("-q", "-b", "pr")
    elsewhere, forged = forged_runtime(upstream, tmp_path / "elsewhere" / "runtime.git")
    set_runtime_repo(project, str(elsewhere))
    (project / "spec/runtime-ref").write_text(forged + "\n")
    generated = run_in_process(project, "generate", env=ci_env(tmp_path / "setup-cache"))
    assert generated.code == 0, generated.text
    commit_all(project, "another upstream")
    with unchanged(project):
        result = run_subprocess(project, "check", "--base", "main", "--no-cache", env=ci_env(tmp_path / "ci-cache"))
    assert result.code == 2, result.text
    assert "clean" not in result.text
    if reachable:
        assert f"fetching from the base's {upstream.url}" in result.err
        assert f"commit {forged} does not exist in {upstream.url}" in result.err
    else:
        assert f"{UNREACHABLE_URL} is unreachable" in result.err
        assert "pyproject.toml [tool.codegen] (runtime-repo) differ from the base" in result.err


def test_a_settings_change_with_the_pin_unchanged_is_fetched_from_the_bases_upstream(
    project: Path, upstream: Upstream, run: Callable[..., Result], tmp_path: Path
) -> None:
    set_runtime_repo(project, upstream.url)
    commit_all(project, "the runtime repository")
    git_repo(project).git.checkout("-q", "-b", "pr")
    moved = tmp_path / "moved" / "runtime.git"
    git_repo(upstream.path).git.clone("--quiet", "--bare", "--", str(upstream.path), str(moved))
    set_runtime_repo(project, str(moved))
    commit_all(project, "the runtime moved")
    result = run(project, "check", "--base", "main", E2B_RUNTIME_REPO=None)
    assert result.code == 0, result.text
    assert f"fetching from the base's {upstream.url}" in result.err and str(moved) not in result.err


def ci_checkout(project: Path, dest: Path) -> Path:
    """What actions/checkout leaves by default: one commit, detached, no branch and no remote ref."""
    repo = git_repo(project)
    repo.git.clone("--quiet", "--depth", "1", "--branch", "pr", "--", f"file://{project}", str(dest))
    ci = git_repo(dest)
    ci.git.checkout("-q", "--detach")
    for ref in str(ci.git.for_each_ref("--format=%(refname)", "refs/heads", "refs/remotes")).split():
        ci.git.update_ref("-d", ref)
    assert ci.git.rev_parse("--is-shallow-repository") == "true"
    (dest / RUN_LOCK).touch()  # the one file a run may create (ignored by git): not a change to the tree
    return dest


def test_in_a_ci_like_checkout_without_a_base_nothing_vouches_for_a_lock_moved_with_the_pin(
    project: Path, run: Callable[..., Result], upstream: Upstream, tmp_path: Path
) -> None:
    git_repo(project).git.checkout("-q", "-b", "pr")
    moved = upstream.commit_edit(add_optional_property)  # a real runtime commit, whose spec is not this one
    spec = project / "spec/openapi.yml"
    spec.write_text(change_description(spec.read_text()))
    (project / "spec/runtime-ref").write_text(moved + "\n")
    lock_path = project / "spec/openapi.lock.json"
    lock = json.loads(lock_path.read_text())
    lock.update(commit=moved, blob=git_blob_id(spec.read_bytes()))
    lock_path.write_text(json.dumps(lock, indent=2) + "\n")
    envd_lock_path = project / "spec/envd.lock.json"  # the envd files' lock records the same pin
    envd_lock = json.loads(envd_lock_path.read_text())
    envd_lock.update(commit=moved)
    envd_lock_path.write_text(json.dumps(envd_lock, indent=2) + "\n")
    generated = run(project, "generate", **OFFLINE)  # the forged lock vouches for the forged spec
    assert generated.code == 0, generated.text
    commit_all(project, "pin, spec and lock moved together")
    checkout = ci_checkout(project, tmp_path / "ci")
    env = ci_env(tmp_path / "ci-cache")
    with unchanged(checkout):
        result = run_subprocess(checkout, "check", "--no-cache", env=env)
    assert result.code == 2, result.text
    assert "no base revision" in result.err and "the check cannot vouch for the lock" in result.err
    assert "clean" not in result.text
    # Only an explicit --trust-tree gives the old answer, and says what it trusted.
    trusted = run(checkout, "check", "--trust-tree", "--no-cache", **OFFLINE)
    assert trusted.code == 0, trusted.text
    assert "--trust-tree: no base revision; the tree's lock and [tool.codegen] are trusted" in trusted.err


def test_ci_runs_on_a_fresh_clone_of_main_and_its_base_origin_main_is_there(project: Path, tmp_path: Path) -> None:
    """.ci/run's base: the default branch as the remote has it, which on a fresh clone of main is HEAD."""
    (project / "README.md").write_text("reviewed and merged\n")
    commit_all(project, "a merged change")
    clone = tmp_path / "clone"
    git_repo(project).git.clone("--quiet", "--", f"file://{project}", str(clone))
    (clone / RUN_LOCK).touch()
    with unchanged(clone):
        result = run_subprocess(clone, "check", "--base", "origin/main", "--no-cache", env=ci_env(tmp_path / "c"))
    assert result.code == 0, result.text
    assert "the lock is unchanged since the base" in result.err and "(--base origin/main)" in result.err


@pytest.mark.parametrize("committed", [False, True], ids=["uncommitted", "committed-on-a-branch"])
def test_offline_a_hand_edited_spec_is_drift_against_the_bases_locked_blob(
    project: Path, run: Callable[..., Result], tmp_path: Path, committed: bool
) -> None:
    spec = project / "spec/openapi.yml"
    pinned = spec.read_bytes()
    if committed:
        git_repo(project).git.checkout("-q", "-b", "pr")
    spec.write_bytes(pinned + b"# a line added by hand\n")
    if committed:
        commit_all(project, "an edited spec")
    env = ci_env(tmp_path / "cache")
    with unchanged(project):
        result = run_subprocess(project, "check", *(("--base", "main") if committed else ()), env=env)
    assert result.code == 1, result.text
    assert "1 path(s) drifted" in result.out and "  hand-edited spec spec/openapi.yml  (fix: " in result.out
    assert "-# a line added by hand" in result.out
    assert "`nox -s codegen` restores the pinned spec/openapi.yml." in result.out
    assert "using git's copy of the locked blob" in result.err and "unchanged since the base" in result.err
    restored = run(project, "generate", **OFFLINE)
    assert restored.code == 0, restored.text
    assert spec.read_bytes() == pinned
    after = run(project, "check", *(("--base", "main") if committed else ()), **OFFLINE)
    assert after.code == 0, after.text


def test_offline_a_change_to_any_codegen_setting_is_refused_naming_it(
    project: Path, run: Callable[..., Result]
) -> None:
    git_repo(project).git.checkout("-q", "-b", "pr")
    pyproject = project / "pyproject.toml"
    tags = 'sdk-tags = ["sandboxes", "snapshots", "templates"]'
    assert tags in pyproject.read_text()
    pyproject.write_text(
        pyproject.read_text().replace(tags, 'sdk-tags = ["sandboxes", "snapshots", "templates", "admin"]')
    )
    commit_all(project, "more tags")
    with unchanged(project):
        result = run(project, "check", "--base", "main", **OFFLINE)
    assert result.code == 2, result.text
    assert "(pyproject.toml [tool.codegen] (sdk-tags) differ from the base " in result.err
    assert "clean" not in result.text
    # Anything else in pyproject.toml is not a setting: the lock still vouches.
    git_repo(project).git.checkout("-q", "main", "--", "pyproject.toml")
    pyproject.write_text(pyproject.read_text() + "\n[tool.other]\nkey = 1\n")
    assert run(project, "check", "--base", "main", **OFFLINE).code == 0
