"""The write as a transaction: interrupted anywhere (SIGINT once or twice, SIGTERM, a crash), fully old or new.

Crashes are real: a forked child runs the write and dies with `os._exit` at the
n-th filesystem step, skipping every handler, as SIGKILL or a power cut would;
the parent then recovers as the next run does.  Signals are real too: the write
sends them to its own process at the n-th step.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import toolkit.transaction as transaction
from tests.codegen.conftest import tree_digest
from toolkit.errors import ToolError
from toolkit.signals import Terminated
from toolkit.transaction import (
    JOURNAL,
    InterruptedWrite,
    finished_writes,
    leftovers,
    recover,
    refuse_tracked_journal,
    remove_leftovers,
    swap_into_place,
)

_GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}

# The signals sent here must do what a terminal's do, however the suite was started.
pytestmark = pytest.mark.usefixtures("default_signals")

OLD_FOLDER = {"a.py": b"old a\n", "sub/b.py": b"old b\n", "gone.py": b"gone\n"}
NEW_FOLDER = {"a.py": b"new a\n", "sub/b.py": b"new b\n", "sub/c.py": b"new c\n"}
FOLDERS = (".", "pkg", "spec")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel, data in {**{f"pkg/api/{k}": v for k, v in OLD_FOLDER.items()}, "spec/lock.json": b"old\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    (root / "README.md").write_bytes(b"mine\n")
    return root


CONTENTS: dict[str, bytes | Mapping[str, bytes]] = {
    "pkg/api": NEW_FOLDER,
    "spec/lock.json": b"new\n",
    "spec/runtime-ref": b"c\n",
}


def is_write_target(target: str) -> bool:
    """The targets these tests' writes swap: all a journal may name here."""
    return target in CONTENTS


def expected_new(root: Path) -> dict[str, str]:
    """The digest of the tree after a finished write, computed on a copy."""
    copy = root.parent / "expected"
    shutil.copytree(root, copy, symlinks=True)
    swap_into_place(copy, CONTENTS)
    digest = tree_digest(copy)
    shutil.rmtree(copy)
    return digest


@pytest.fixture
def states(root: Path) -> tuple[dict[str, str], dict[str, str]]:
    return tree_digest(root), expected_new(root)


def test_a_write_swaps_everything_and_leaves_nothing_behind(root: Path) -> None:
    swap_into_place(root, CONTENTS)
    assert (root / "pkg/api/sub/c.py").read_bytes() == b"new c\n" and not (root / "pkg/api/gone.py").exists()
    assert (root / "spec/runtime-ref").read_bytes() == b"c\n" and (root / "README.md").read_bytes() == b"mine\n"
    assert leftovers(root, FOLDERS, is_write_target) == []


# --- crashes: the next run recovers -------------------------------------------------------


def _step_counter(monkeypatch: pytest.MonkeyPatch, at: int, action: Callable[[], None]) -> None:
    """Run `action` before the at-th rename or removal the transaction makes."""
    calls = 0
    real_replace, real_remove = os.replace, transaction._remove

    def count() -> None:
        nonlocal calls
        calls += 1
        if calls == at:
            action()

    def replace(src: Any, dst: Any) -> None:
        count()
        real_replace(src, dst)

    def remove(path: Path) -> None:
        count()
        real_remove(path)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(transaction, "_remove", remove)


def _crash_in_child(root: Path, at: int, *, fail_rename_at: int | None = None) -> int:
    """Fork; the child writes and dies at step `at`. Returns its exit status (0: it finished first)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        try:
            with pytest.MonkeyPatch.context() as mp:
                _step_counter(mp, at, lambda: os._exit(9))
                if fail_rename_at is not None:
                    real = os.replace
                    renames = 0

                    def failing(src: Any, dst: Any) -> None:
                        nonlocal renames
                        renames += 1
                        if renames == fail_rename_at:
                            raise OSError(28, "No space left on device")
                        real(src, dst)

                    mp.setattr(os, "replace", failing)
                swap_into_place(root, CONTENTS)
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def next_run(root: Path) -> str | None:
    """What the next codegen run does first (codegen.tree.write.recover_tree, on this tree's folders)."""
    said = recover(root, is_write_target)
    remove_leftovers(root, leftovers(root, FOLDERS, is_write_target))
    return said


def _each_step(run: Callable[[int], int]) -> Iterator[int]:
    at = 1
    while run(at) == 9:
        yield at
        at += 1
    assert at > 5, "the write finished before the steps under test"


def test_a_crash_at_any_step_is_recovered_to_fully_old_or_fully_new(
    root: Path, states: tuple[dict[str, str], dict[str, str]], tmp_path: Path
) -> None:
    old, new = states
    pristine = tmp_path / "pristine"
    os.rename(root, pristine)
    outcomes = []

    def run(at: int) -> int:
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(pristine, root, symlinks=True)
        return _crash_in_child(root, at)

    for at in _each_step(run):
        said = next_run(root)
        assert leftovers(root, FOLDERS, is_write_target) == [], at
        digest = tree_digest(root)
        assert digest in (old, new), at
        outcomes.append("new" if digest == new else "old")
        assert said is None or ("rolled back" in said) == (digest == old)
    assert "old" in outcomes and "new" in outcomes  # crashes before and after the commit point


def test_a_crash_during_a_rollback_is_recovered_to_fully_old(
    root: Path, states: tuple[dict[str, str], dict[str, str]], tmp_path: Path
) -> None:
    old, _ = states
    pristine = tmp_path / "pristine"
    os.rename(root, pristine)

    def run(at: int) -> int:
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(pristine, root, symlinks=True)
        # the 4th rename fails (a full disk), the rollback starts, and the crash comes during it
        return _crash_in_child(root, at, fail_rename_at=4)

    crashed = list(_each_step(run))
    assert crashed
    for at in crashed:
        run(at)
        assert "rolled back" in (next_run(root) or "rolled back")
        assert tree_digest(root) == old and leftovers(root, FOLDERS, is_write_target) == [], at


# --- signals: they wait for the swap, and the message says what the tree holds --------------------


def test_sigint_while_the_new_files_are_prepared_writes_nothing(
    root: Path, states: tuple[dict[str, str], dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    old, _ = states
    real = transaction._write
    calls = 0

    def write(path: Path, content: transaction.Content) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            os.kill(os.getpid(), signal.SIGINT)
        real(path, content)

    monkeypatch.setattr(transaction, "_write", write)
    with pytest.raises(KeyboardInterrupt) as caught:
        swap_into_place(root, CONTENTS)
    assert not isinstance(caught.value, InterruptedWrite)
    assert tree_digest(root) == old and leftovers(root, FOLDERS, is_write_target) == []


@pytest.mark.parametrize("signals", [(signal.SIGINT,), (signal.SIGINT, signal.SIGINT), (signal.SIGTERM,)])
def test_signals_during_the_swap_wait_for_it_and_say_the_tree_is_new(
    root: Path, states: tuple[dict[str, str], dict[str, str]], monkeypatch: pytest.MonkeyPatch, signals: tuple[int, ...]
) -> None:
    _, new = states
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        for at in range(1, 15):  # the journal, six renames, the commit point, six removals
            if at > 1:
                recover(root, is_write_target)  # nothing to recover: each write finished
            _step_counter(monkeypatch, at, lambda: _send(signals))
            with pytest.raises(InterruptedWrite) as caught:
                swap_into_place(root, {**CONTENTS, "spec/runtime-ref": f"{at}\n".encode()})
            monkeypatch.undo()
            assert caught.value.signum == signals[0]
            assert "the tree holds the new files" in str(caught.value)
            assert (root / "spec/runtime-ref").read_bytes() == f"{at}\n".encode()
            assert leftovers(root, FOLDERS, is_write_target) == []
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert {k: v for k, v in tree_digest(root).items() if k != "spec/runtime-ref"} == {
        k: v for k, v in new.items() if k != "spec/runtime-ref"
    }


def _send(signals: tuple[int, ...]) -> None:
    for signum in signals:
        os.kill(os.getpid(), signum)


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


def test_sigterm_while_preparing_rolls_back_like_ctrl_c(
    root: Path, states: tuple[dict[str, str], dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    old, _ = states
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    real = transaction._write

    def write(path: Path, content: transaction.Content) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        real(path, content)

    monkeypatch.setattr(transaction, "_write", write)
    try:
        with pytest.raises(Terminated):
            swap_into_place(root, CONTENTS)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert tree_digest(root) == old and leftovers(root, FOLDERS, is_write_target) == []


# --- the journal is data: nothing outside the swaps it may name --------------------------------


WHEN = "2026-11-30 12:00:00Z"


def _journal(swaps: object, **fields: object) -> str:
    return json.dumps({"state": "swapping", "tag": "0123abcd", "written": WHEN, "swaps": swaps, **fields})


@pytest.mark.parametrize(
    ("journal", "says"),
    [
        (_journal([{"target": "../x", "existed": True}]), "is not a normalized path"),
        (_journal([{"target": "/etc", "existed": True}]), "is not a normalized path"),
        (_journal([{"target": ".", "existed": False}]), "is not a normalized path"),
        (_journal([{"target": "pkg/./api", "existed": False}]), "is not a normalized path"),
        (_journal([{"target": "pkg//api", "existed": False}]), "is not a normalized path"),
        (_journal([{"target": "README.md", "existed": False}]), "'README.md' is not a path a codegen write swaps"),
        (_journal([{"target": "pkg", "existed": False}]), "'pkg' is not a path a codegen write swaps"),
        (_journal([{"target": "pkg/api", "existed": True}] * 2), "is listed twice"),
        (_journal([{"target": "pkg/api", "existed": "yes"}]), "a swap is not a {target"),
        (_journal([{"target": "pkg/api", "existed": True, "then": "rm"}]), "a swap is not a {target"),
        (_journal([["pkg/api", True]]), "a swap is not a {target"),
        (_journal({"target": "pkg/api"}), "its swaps are not a list"),
        (_journal([], state="rm -rf"), "its state is neither"),
        (_journal([], tag="../../x"), "its tag is not one codegen makes"),
        (_journal([], tag="DEADBEEF"), "its tag is not one codegen makes"),
        (_journal([], tag="0123abcd\n"), "its tag is not one codegen makes"),
        (_journal([], written="x"), "its time is not one codegen writes"),
        (_journal([], written="\x1b[2K\rcodegen: clean"), "its time is not one codegen writes"),
        (_journal([], extra=1), "its fields must be"),
        ('["swapping"]', "its fields must be"),
        ("not json", "it is unreadable"),
        ('"\\ud800"', "its fields must be"),
    ],
)
def test_a_journal_codegen_did_not_write_is_refused(root: Path, journal: str, says: str) -> None:
    (root / JOURNAL).write_text(journal)
    before = tree_digest(root)
    with pytest.raises(ToolError, match="cannot recover the interrupted write") as raised:
        recover(root, is_write_target)
    (problem,) = raised.value.problems
    assert says in problem.message and "nothing was touched" in problem.message
    assert problem.message.isprintable()
    assert tree_digest(root) == before


def test_a_journal_printed_in_a_refusal_is_escaped(root: Path) -> None:
    (root / JOURNAL).write_text(_journal([{"target": "\x1b]0;x\x07\u202e\ncodegen: clean", "existed": False}]))
    with pytest.raises(ToolError) as raised:
        recover(root, is_write_target)
    (problem,) = raised.value.problems
    assert "\\x1b]0;x\\x07\\u202e\\ncodegen: clean" in problem.message and problem.message.isprintable()


@pytest.mark.parametrize("link", ["pkg", "pkg/api", "pkg/.api.codegen-old-0123abcd", "pkg/.api.codegen-new-0123abcd"])
def test_a_journal_whose_swap_meets_a_symlink_is_refused(root: Path, tmp_path: Path, link: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(root / "pkg", elsewhere)
    if os.path.lexists(root / link):
        shutil.rmtree(root / link)
    (root / link).symlink_to(elsewhere / "api" if link != "pkg" else elsewhere)
    (root / JOURNAL).write_text(_journal([{"target": "pkg/api", "existed": True}]))
    before, outside = tree_digest(root), tree_digest(elsewhere)
    with pytest.raises(ToolError, match="is, or lies under, a symlink"):
        recover(root, is_write_target)
    assert tree_digest(root) == before and tree_digest(elsewhere) == outside


@pytest.mark.parametrize("name", [JOURNAL, f"{JOURNAL}.tmp"])
def test_a_journal_that_is_a_symlink_or_a_folder_is_refused(root: Path, tmp_path: Path, name: str) -> None:
    (tmp_path / "target").write_text(_journal([{"target": "pkg/api", "existed": False}]))
    (root / name).symlink_to(tmp_path / "target")
    with pytest.raises(ToolError, match="is not a journal codegen wrote"):
        recover(root, is_write_target)
    (root / name).unlink()
    (root / name).mkdir()
    with pytest.raises(ToolError, match="is not a journal codegen wrote"):
        recover(root, is_write_target)
    assert (root / name).is_dir() and (tmp_path / "target").exists() and (root / "pkg/api/a.py").exists()


@pytest.mark.parametrize("name", [JOURNAL, f"{JOURNAL}.tmp"])
def test_a_journal_in_the_git_index_is_refused_whatever_it_says(root: Path, name: str) -> None:
    """Even a well-formed journal naming a real target: a commit is not this machine's interrupted write."""
    (root / JOURNAL).write_text(_journal([{"target": "pkg/api", "existed": False}]))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True, env=_GIT_ENV)
    (root / name).touch()
    subprocess.run([*git, "add", "-f", "--", name], check=True, env=_GIT_ENV)
    subprocess.run([*git, "commit", "-q", "--no-verify", "-m", "journal"], check=True, env=_GIT_ENV)
    before = tree_digest(root)
    with pytest.raises(ToolError) as raised:
        recover(root, is_write_target)
    (problem,) = raised.value.problems
    assert problem.render() == (
        f"{name}: committed, but a codegen journal is never committed and never read from a commit; "
        f"nothing was done: run `git rm -f {name}`, commit, then run again"
    )
    assert tree_digest(root) == before


def test_outside_a_git_checkout_nothing_is_tracked(root: Path) -> None:
    refuse_tracked_journal(root)  # no repository: nothing to refuse, nothing raised


def test_leftovers_are_only_siblings_of_targets_a_write_swaps(root: Path) -> None:
    for rel in (
        "pkg/.api.codegen-old-0123abcd",
        "pkg/.README.md.codegen-old-0123abcd",
        ".noxfile.py.codegen-old-0123abcd",
    ):
        (root / rel).write_text("x\n")
    assert leftovers(root, FOLDERS, is_write_target) == ["pkg/.api.codegen-old-0123abcd"]


def test_settled_records_each_finished_write_and_recovery(root: Path) -> None:
    before = len(finished_writes())
    swap_into_place(root, CONTENTS)
    assert finished_writes()[before:] == ("the write finished: the tree holds the new files (3 path(s) swapped)",)


@pytest.mark.parametrize("signals", [(signal.SIGINT,), (signal.SIGINT, signal.SIGINT), (signal.SIGTERM,)])
def test_signals_during_a_rollback_wait_for_it(
    root: Path, states: tuple[dict[str, str], dict[str, str]], monkeypatch: pytest.MonkeyPatch, signals: tuple[int, ...]
) -> None:
    old, _ = states
    real = os.replace
    renames = 0

    def failing(src: Any, dst: Any) -> None:
        nonlocal renames
        renames += 1
        if renames == 4:  # a full disk mid-swap starts the rollback...
            raise OSError(28, "No space left on device")
        if renames == 5:  # ...and the signals arrive during it
            _send(signals)
        real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        with pytest.raises(OSError, match="No space left"):
            swap_into_place(root, CONTENTS)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert renames == 5  # the rollback put the old folder back
    assert tree_digest(root) == old and leftovers(root, FOLDERS, is_write_target) == []
