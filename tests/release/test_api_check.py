"""The Python API check (griffe): changelog-check, `api-check` and `release` on a scratch copy of this repository."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.codegen.conftest import commit_all, git_repo, unchanged
from tests.release.conftest import SDK, Result, add_fragment

RESULTS = f"{SDK}/e2b/_results.py"
SANDBOX = f"{SDK}/e2b/sandbox_sync/main.py"
LOGIC = f"{SDK}/e2b/_sandbox_logic.py"
FORCED_REMOVED = "e2b.SandboxPauseResult.forced: attribute removed"


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text, f"{old!r} is not in {rel}"
    path.write_text(text.replace(old, new))


def remove_forced(root: Path) -> None:
    """Drop the `forced` field, its docstring line with it."""
    text = (root / RESULTS).read_text()
    field = text.index("    forced: bool\n")
    docstring_end = text.index('"""\n', text.index('"""', field) + 3) + 4
    edit(root, RESULTS, text[field:docstring_end], "")


@pytest.fixture
def branch(project: Path) -> Path:
    git_repo(project).git.checkout("-q", "-b", "work")
    return project


def test_a_removed_attribute_under_a_fix_fragment_fails_naming_it(branch: Path, run: Callable[..., Result]) -> None:
    remove_forced(branch)
    add_fragment(branch, SDK, "7.fix.md", "Tidy the pause result.\n")
    result = run(branch, "changelog-check")
    assert result.code == 1, result.out + result.err
    assert (
        f"error: e2b: the Python API breaks against main (merge base {git_repo(branch).head.commit.hexsha[:12]}), "
        f"but {SDK}/changelog.d/ has no new `breaking` fragment:"
    ) in result.out
    assert f"  {FORCED_REMOVED}\n" in result.out
    assert "e2b.SandboxPauseResult.__init__(forced): parameter removed" in result.out
    assert f"-> add `{SDK}/changelog.d/<PR number>.breaking.md`" in result.out


def test_the_same_break_under_a_breaking_fragment_passes(branch: Path, run: Callable[..., Result]) -> None:
    remove_forced(branch)
    add_fragment(branch, SDK, "7.breaking.md", "`SandboxPauseResult.forced` is gone.\n")
    result = run(branch, "changelog-check")
    assert result.code == 0, result.out + result.err
    assert "python api: e2b against main" in result.out and FORCED_REMOVED in result.out


def test_a_removed_keyword_parameter_is_a_break_even_with_kwargs(branch: Path, run: Callable[..., Result]) -> None:
    """griffe lets `**opts` absorb a removed keyword; `pause(force=...)` is documented API all the same."""
    edit(
        branch,
        SANDBOX,
        "        mode: SnapshotMode | None = None,\n        force: bool | None = None,\n",
        "        mode: SnapshotMode | None = None,\n",
    )
    add_fragment(branch, SDK, "8.fix.md", "Simpler pause.\n")
    result = run(branch, "changelog-check")
    assert result.code == 1
    assert "  e2b.Sandbox.pause(force): parameter removed" in result.out


def test_a_renamed_private_helper_passes(branch: Path, run: Callable[..., Result]) -> None:
    edit(branch, LOGIC, "_or_unset", "_maybe_unset")  # a private module's private function
    edit(branch, SANDBOX, "_opts(", "_options(")  # a public class's private method
    add_fragment(branch, SDK, "9.fix.md", "Internal rename.\n")
    result = run(branch, "changelog-check")
    assert result.code == 0, result.out + result.err
    assert "breaks" not in result.out


def test_the_skip_trailer_does_not_skip_a_break(branch: Path, run: Callable[..., Result]) -> None:
    remove_forced(branch)
    repo = git_repo(branch)
    repo.git.add("--all")
    repo.git.commit("-q", "-m", "tidy\n\nChangelog: skip", env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})  # fmt: skip
    result = run(branch, "changelog-check")
    assert result.code == 1, result.out + result.err
    assert FORCED_REMOVED in result.out and "skipped by a `Changelog: skip` commit trailer" in result.out


def test_api_check_names_breaks_and_additions_against_a_base(branch: Path, run: Callable[..., Result]) -> None:
    git_repo(branch).create_tag("e2b-v2.0.0")
    remove_forced(branch)
    edit(branch, RESULTS, "    paused: bool\n", "    paused: bool\n    queued: bool = False\n")
    edit(branch, f"{SDK}/e2b/__init__.py", "__all__ = [\n", '__all__ = [\n    "RETRIES",\n')
    with (branch / SDK / "e2b/__init__.py").open("a") as init:
        init.write("\nRETRIES = 3\n")
    commit_all(branch, "pause result")
    result = run(branch, "api-check", "--base", "e2b-v2.0.0")
    assert result.code == 1, result.out + result.err
    assert "against e2b-v2.0.0 (merge base" in result.out and FORCED_REMOVED in result.out
    add_fragment(branch, SDK, "+pause.breaking.md", "`forced` is gone.\n")
    result = run(branch, "api-check", "--base", "e2b-v2.0.0")
    assert result.code == 0, result.out + result.err
    assert "- added: `e2b.SandboxPauseResult.queued (attribute)`" in result.out
    assert "- added: `e2b.RETRIES (attribute)`" in result.out


def test_api_check_with_no_package_change(branch: Path, run: Callable[..., Result]) -> None:
    result = run(branch, "api-check")
    assert result.code == 0, result.out + result.err
    assert "api-check: 0 changed package(s)" in result.out


def test_release_refuses_a_break_planned_below_major(project: Path, run: Callable[..., Result]) -> None:
    git_repo(project).create_tag("e2b-v2.0.0")
    remove_forced(project)
    add_fragment(project, SDK, "7.fix.md", "Tidy the pause result.\n")
    with unchanged(project):
        result = run(project, "release", "--dry-run")
    assert result.code != 0, result.out + result.err
    assert "e2b: the plan is a patch release (2.0.1) but the Python API breaks against e2b-v2.0.0:" in result.err
    assert FORCED_REMOVED in result.err and "+<name>.breaking.md" in result.err
    (project / SDK / "changelog.d/7.fix.md").rename(project / SDK / "changelog.d/7.breaking.md")
    result = run(project, "release", "--dry-run")
    assert result.code == 0, result.out + result.err
    assert "e2b: Python API against e2b-v2.0.0: major" in result.err


def test_release_without_the_last_tag_says_it_did_not_compare(project: Path, run: Callable[..., Result]) -> None:
    add_fragment(project, SDK, "7.fix.md", "A fix.\n")
    result = run(project, "release", "--dry-run")
    assert result.code == 0, result.out + result.err
    assert "e2b: no tag e2b-v2.0.0: its Python API is not compared" in result.err


def test_a_symlink_in_a_package_is_refused_not_read(branch: Path, run: Callable[..., Result], tmp_path: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("TOKEN = 'do-not-print'\n")
    (branch / SDK / "e2b/extra.py").symlink_to(secret)
    result = run(branch, "changelog-check")
    assert result.code == 2, result.out + result.err
    assert (
        "e2b: e2b/extra.py in " in result.err
        and "is a symlink; the Python API check reads no file through one" in result.err
    )
    assert "do-not-print" not in result.out + result.err
