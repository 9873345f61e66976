"""release.changelog_check: a change to a package's hand-written files needs a fragment (real git repositories)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.codegen.conftest import PERSON, commit_all, git_repo, import_generated, plant_bytecode
from tests.release.conftest import CLI, SDK, Result, add_fragment


@pytest.fixture
def branch(project: Path) -> Path:
    """The project copy on a branch `work` off `main`."""
    git_repo(project).git.checkout("-q", "-b", "work")
    return project


def touch(root: Path, rel: str, text: str = "\n# changed\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(text)


def test_no_change_passes(branch: Path, run: Callable[..., Result]) -> None:
    result = run(branch, "changelog-check")
    assert result.code == 0, result.out + result.err
    assert "every changed package has a fragment" in result.out


def test_a_change_without_a_fragment_fails_and_says_how(branch: Path, run: Callable[..., Result]) -> None:
    touch(branch, f"{CLI}/e2b_cli/main.py")
    commit_all(branch, "cli change")
    touch(branch, f"{SDK}/README.md", "\nmore\n")  # not committed yet: the working tree counts too
    result = run(branch, "changelog-check")
    assert result.code == 1
    assert f"error: e2b-cli changed ({CLI}/e2b_cli/main.py) but {CLI}/changelog.d/ has no new fragment" in result.out
    assert f"error: e2b changed ({SDK}/README.md) but {SDK}/changelog.d/ has no new fragment" in result.out
    assert "changelog.d/<PR number>.<type>.md" in result.out and "breaking, feature, fix, doc, misc" in result.out
    assert "`Changelog: skip`" in result.out


def test_a_fragment_satisfies_it(branch: Path, run: Callable[..., Result]) -> None:
    touch(branch, f"{CLI}/e2b_cli/main.py")
    add_fragment(branch, CLI, "41.fix.md", "The list command no longer crashes.\n")
    result = run(branch, "changelog-check")
    assert result.code == 0, result.out + result.err


def test_a_new_untracked_file_counts(branch: Path, run: Callable[..., Result]) -> None:
    touch(branch, f"{CLI}/e2b_cli/extra.py", "X = 1\n")
    assert run(branch, "changelog-check").code == 1


def test_generated_code_and_changelog_files_are_not_hand_written(branch: Path, run: Callable[..., Result]) -> None:
    touch(branch, f"{SDK}/e2b/api/error_codes.py")
    touch(branch, f"{SDK}/CHANGELOG.md", "\n")
    touch(branch, f"{SDK}/changelog.d/README.md", "\n")
    touch(branch, "tests/cli/test_main.py")  # not shipped
    result = run(branch, "changelog-check")
    assert result.code == 0, result.out + result.err


def test_bytecode_committed_in_a_generated_folder_is_a_change(
    branch: Path, run: Callable[..., Result], tmp_path: Path
) -> None:
    """Issue 20, item 3: only what the manifest lists is generated; planted bytecode needs a fragment."""
    planted = plant_bytecode(branch, tmp_path / "payload-ran")
    result = run(branch, "changelog-check")
    assert result.code == 1, result.out + result.err
    assert f"error: e2b changed ({planted}) but {SDK}/changelog.d/ has no new fragment" in result.out


def test_bytecode_that_imports_leave_behind_is_no_change(branch: Path, run: Callable[..., Result]) -> None:
    import_generated(branch, write_bytecode=True)
    assert list((branch / SDK / "e2b/api").rglob("__pycache__/*.pyc"))  # the premise
    result = run(branch, "changelog-check")
    assert result.code == 0, result.out + result.err


def test_a_generated_file_a_bump_removes_is_no_change(branch: Path, run: Callable[..., Result]) -> None:
    """Listed by the base's manifest only: still generated, so no fragment is needed for it.

    The Python API check, which imports the package, still sees what that removal does to `import e2b`.
    """
    manifest = branch / "spec/generated-files.json"
    data = json.loads(manifest.read_text())
    del data["files"][f"{SDK}/e2b/api/error_codes.py"]
    manifest.write_text(json.dumps(data, indent=2) + "\n")
    (branch / SDK / "e2b/api/error_codes.py").unlink()
    result = run(branch, "changelog-check")
    assert "changelog-check: every changed package has a fragment" in result.out, result.out + result.err
    assert result.code == 1 and "has no new `breaking` fragment" in result.out
    assert "  e2b: module removed at run time (ModuleNotFoundError: No module named 'e2b.api.error_codes')\n" in (
        result.out
    )


def test_removing_a_fragment_is_no_fragment(branch: Path, run: Callable[..., Result]) -> None:
    add_fragment(branch, CLI, "40.fix.md", "Old.\n")
    commit_all(branch, "fragment")
    git_repo(branch).git.branch("-f", "main", "HEAD")
    (branch / CLI / "changelog.d/40.fix.md").unlink()
    touch(branch, f"{CLI}/e2b_cli/main.py")
    assert run(branch, "changelog-check").code == 1


def test_the_skip_trailer(branch: Path, run: Callable[..., Result]) -> None:
    touch(branch, f"{CLI}/e2b_cli/main.py")
    repo = git_repo(branch)
    repo.git.add("--all")
    repo.index.commit("Reword a comment\n\nChangelog: skip\n", author=PERSON, committer=PERSON, skip_hooks=True)
    result = run(branch, "changelog-check")
    assert result.code == 0 and "skipped by a `Changelog: skip` commit trailer" in result.out


def test_base_is_the_merge_base(branch: Path, run: Callable[..., Result]) -> None:
    """A change on main after the branch point is not the branch's change."""
    repo = git_repo(branch)
    repo.git.checkout("-q", "main")
    touch(branch, f"{CLI}/e2b_cli/main.py")
    commit_all(branch, "on main")
    repo.git.checkout("-q", "work")
    assert run(branch, "changelog-check").code == 0
    first = repo.git.rev_list("--max-parents=0", "HEAD").strip()
    touch(branch, f"{CLI}/e2b_cli/output.py")
    commit_all(branch, "on work")
    result = run(branch, "changelog-check", "--base", first)
    assert result.code == 1 and "e2b_cli/output.py" in result.out


def test_a_bad_fragment_fails_the_check(branch: Path, run: Callable[..., Result]) -> None:
    add_fragment(branch, CLI, "42.bugfix.md", "Wrong type.\n")
    result = run(branch, "changelog-check")
    assert result.code == 2 and "unknown fragment type 'bugfix'" in result.err


@pytest.mark.parametrize("base", ["no-such-branch", "--all"])
def test_a_bad_base_is_refused(branch: Path, run: Callable[..., Result], base: str) -> None:
    result = run(branch, "changelog-check", f"--base={base}")
    assert result.code == 2
    assert "cannot find no-such-branch" in result.err or "starts with '-'" in result.err


def test_without_main_it_asks_for_a_base(branch: Path, run: Callable[..., Result]) -> None:
    git_repo(branch).git.branch("-D", "main")
    result = run(branch, "changelog-check")
    assert result.code == 2 and "pass --base" in result.err


def test_a_hostile_file_name_is_printed_escaped(branch: Path, run: Callable[..., Result]) -> None:
    touch(branch, f"{CLI}/e2b_cli/x\x1b]0;owned\x07\u202e.py", "X = 1\n")
    result = run(branch, "changelog-check")
    assert result.code == 1
    assert f"error: e2b-cli changed ({CLI}/e2b_cli/x\\x1b]0;owned\\x07\\u202e.py) but" in result.out
    assert not {"\x1b", "\x07", "\u202e"} & set(result.out + result.err)
