"""release.tree: one write, all or nothing, through codegen's journaled transaction."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from release.errors import ReleaseError
from release.tree import write_all
from tests.toolkit.test_transaction import _each_step, _step_counter
from toolkit.paths import is_write_target, leftover_folders
from toolkit.transaction import leftovers, recover_tree


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_writes_and_removes(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text("old\n")
    (tmp_path / "d").mkdir()
    (tmp_path / "d/1.fix.md").write_text("gone\n")
    write_all(tmp_path, {"a.toml": b"new\n", "d/CHANGELOG.md": b"log\n"}, ["d/1.fix.md"])
    assert snapshot(tmp_path) == {"a.toml": b"new\n", "d/CHANGELOG.md": b"log\n"}


def test_a_failure_puts_everything_back(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text("old\n")
    (tmp_path / "frag.md").write_text("keep\n")
    (tmp_path / "blocker").write_text("a file where a folder is needed\n")
    before = snapshot(tmp_path)
    with pytest.raises(OSError):
        write_all(tmp_path, {"a.toml": b"new\n", "new.md": b"x\n", "blocker/inside.md": b"y\n"}, ["frag.md"])
    assert snapshot(tmp_path) == before


def test_links_out_of_the_tree_are_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "pyproject.toml").write_text("theirs\n")
    os.symlink(outside, root / "pkg")
    os.symlink(outside / "pyproject.toml", root / "link.toml")
    for rel in ("pkg/pyproject.toml", "link.toml"):
        with pytest.raises(ReleaseError, match="symbolic link or leads out of the repository"):
            write_all(root, {rel: b"mine\n"}, [])
    assert (outside / "pyproject.toml").read_text() == "theirs\n"


# --- interrupted: the release's write is codegen's journaled transaction --------------------------------

CLI = "packages/cli"
OLD = {
    f"{CLI}/pyproject.toml": b'version = "2.0.0"\n',
    f"{CLI}/e2b_cli/__init__.py": b'__version__ = "2.0.0"\n',
    f"{CLI}/changelog.d/README.md": b"how to\n",
    f"{CLI}/changelog.d/12.fix.md": b"A fix.\n",
    f"{CLI}/changelog.d/+help.doc.md": b"Help.\n",
    "README.md": b"mine\n",
}
WRITTEN = {
    f"{CLI}/pyproject.toml": b'version = "2.0.1"\n',
    f"{CLI}/e2b_cli/__init__.py": b'__version__ = "2.0.1"\n',
    f"{CLI}/CHANGELOG.md": b"## e2b-cli 2.0.1\n",  # new: the package had no changelog yet
}
REMOVED = [f"{CLI}/changelog.d/12.fix.md", f"{CLI}/changelog.d/+help.doc.md"]


def _crash_in_child(root: Path, at: int) -> int:
    """Fork; the child runs the release's write and dies (os._exit, as SIGKILL would) at step `at`."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        try:
            with pytest.MonkeyPatch.context() as mp:
                _step_counter(mp, at, lambda: os._exit(9))
                write_all(root, WRITTEN, REMOVED)
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_release_write_crashed_at_any_step_is_fully_old_or_fully_new_after_the_next_run(tmp_path: Path) -> None:
    """The next run (a release, or any codegen verb) first settles the journal: codegen.tree.write.recover_tree."""
    pristine, root = tmp_path / "pristine", tmp_path / "repo"
    for rel, data in OLD.items():
        (pristine / rel).parent.mkdir(parents=True, exist_ok=True)
        (pristine / rel).write_bytes(data)
    old = snapshot(pristine)
    new = {**{k: v for k, v in old.items() if k not in REMOVED}, **WRITTEN}

    def run(at: int) -> int:
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(pristine, root, symlinks=True)
        return _crash_in_child(root, at)

    outcomes = []
    for at in _each_step(run):
        said: list[str] = []
        recover_tree(root, said.append)
        assert leftovers(root, leftover_folders(root), is_write_target) == [], at
        after = snapshot(root)
        assert after in (old, new), at
        outcomes.append("new" if after == new else "old")
        journal = [line for line in said if "found a write" in line]  # the rest: stray siblings removed
        assert not journal or ("rolled back" in journal[0]) == (after == old), said
    assert "old" in outcomes and "new" in outcomes  # crashes before and after the commit point
    assert run(len(outcomes) + 1) == 0 and snapshot(root) == new  # uninterrupted, it finishes


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        (f"{CLI}/pyproject.toml", True),
        (f"{CLI}/CHANGELOG.md", True),
        (f"{CLI}/e2b_cli/__init__.py", True),
        (f"{CLI}/changelog.d/12.fix.md", True),
        (f"{CLI}/changelog.d/+help.doc.md", True),
        (f"{CLI}/changelog.d/README.md", False),
        (f"{CLI}/changelog.d/1.bugfix.md", False),
        (f"{CLI}/e2b_cli/main.py", False),
        ("packages/python-sdk/e2b/api", True),  # codegen's: it swaps the generated folder whole
        ("packages/python-sdk/e2b/api/__init__.py", False),
        ("packages/python-sdk/e2b/sandbox/__init__.py", False),
        ("packages/pyproject.toml", False),
        ("pyproject.toml", False),
        ("noxfile.py", False),
    ],
)
def test_a_journal_names_only_what_a_codegen_or_release_write_swaps(path: str, allowed: bool) -> None:
    assert is_write_target(path) is allowed
