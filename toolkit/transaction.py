"""Swap many files and folders into place as one transaction, with a journal for what interrupts it.

How it works, and why: docs/maintainers/design.md, "toolkit/transaction.py".
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from toolkit.errors import Problem, ToolError
from toolkit.paths import is_write_target, leftover_folders
from toolkit.printable import printable
from toolkit.signals import signals_recorded

JOURNAL = ".codegen-journal.json"
JOURNAL_TEMPORARY = f"{JOURNAL}.tmp"
LEFTOVER = re.compile(r"\.(.+)\.codegen-(?:new|old)-[0-9a-f]{8}")
_TAG = re.compile(r"[0-9a-f]{8}")  # os.urandom(4).hex(), as swap_into_place makes it
_WRITTEN = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_JOURNAL_FIELDS = {"state", "tag", "written", "swaps"}
_SWAP_FIELDS = {"target", "existed"}
_JOURNAL_MAX_BYTES = 1 << 20  # a real one lists a handful of swaps
# Variables that would point git at another repository or index than root's own.
_GIT_REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")

IsWriteTarget = Callable[[str], bool]  # the targets a write of the caller's may swap: all a journal may name

# What this process's finished writes and recoveries left in the tree, oldest first.
_FINISHED_WRITES: list[str] = []

Content = bytes | Mapping[str, bytes]  # a file's bytes, or a folder's files by relative path


class InterruptedWrite(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived while the tree was being swapped; the write finished first."""

    def __init__(self, message: str, signum: int) -> None:
        super().__init__(message)
        self.signum = signum


def _sibling(target: str, kind: str, tag: str) -> str:
    head, _, name = target.rpartition("/")
    return f"{head}/.{name}.codegen-{kind}-{tag}" if head else f".{name}.codegen-{kind}-{tag}"


@dataclass(frozen=True)
class _Swap:
    target: str
    existed: bool
    tag: str

    @property
    def fresh(self) -> str:
        return _sibling(self.target, "new", self.tag)

    @property
    def backup(self) -> str:
        return _sibling(self.target, "old", self.tag)


def swap_into_place(root: Path, contents: Mapping[str, Content | None]) -> None:
    """Replace every target (a path relative to root) with its content, or remove it (None), all or nothing."""
    tag = os.urandom(4).hex()
    swaps = [_Swap(target, os.path.lexists(root / target), tag) for target in contents]
    swaps = [swap for swap in swaps if swap.existed or contents[swap.target] is not None]  # nothing to remove
    try:
        for swap in swaps:
            content = contents[swap.target]
            if content is not None:
                _write(root / swap.fresh, content)
    except BaseException:
        for swap in swaps:
            _remove(root / swap.fresh)
        raise
    with signals_recorded() as received:
        try:
            _write_journal(root, swaps, "swapping")
            for swap in swaps:
                if swap.existed:
                    os.replace(root / swap.target, root / swap.backup)
                if contents[swap.target] is not None:
                    os.replace(root / swap.fresh, root / swap.target)
            _write_journal(root, swaps, "done")
        except BaseException:
            _roll_back(root, swaps)
            raise
        # The commit point has passed: from here on, whatever interrupts says the tree is new.
        holds = f"the tree holds the new files ({len(swaps)} path(s) swapped)"
        _FINISHED_WRITES.append(f"the write finished: {holds}")
        _finish(root, swaps)
    if received:
        raise InterruptedWrite(
            f"{signal.Signals(received[0]).name} arrived during the write, which finished first: {holds}", received[0]
        )


def finished_writes() -> tuple[str, ...]:
    """What this process's finished writes and recoveries did, oldest first (each says what the tree holds)."""
    return tuple(_FINISHED_WRITES)


def _write(path: Path, content: Content) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
        return
    path.mkdir()
    for rel, data in content.items():
        out = path / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)


def _roll_back(root: Path, swaps: list[_Swap]) -> None:
    """Undo whatever part of the swaps happened; safe to repeat after any interruption."""
    for swap in reversed(swaps):
        target, fresh, backup = root / swap.target, root / swap.fresh, root / swap.backup
        if os.path.lexists(backup):  # the old copy was moved aside: whatever is at target is new
            _remove(target)
            os.replace(backup, target)
        elif not swap.existed and not os.path.lexists(fresh):  # the new copy went where nothing was
            _remove(target)
        _remove(fresh)
    (root / JOURNAL_TEMPORARY).unlink(missing_ok=True)
    (root / JOURNAL).unlink(missing_ok=True)


def _finish(root: Path, swaps: list[_Swap]) -> None:
    for swap in swaps:
        _remove(root / swap.backup)
        _remove(root / swap.fresh)
    (root / JOURNAL).unlink(missing_ok=True)


def _write_journal(root: Path, swaps: list[_Swap], state: str) -> None:
    record = {
        "state": state,
        "tag": swaps[0].tag if swaps else "0" * 8,
        "written": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%SZ"),
        "swaps": [{"target": s.target, "existed": s.existed} for s in swaps],
    }
    temporary = root / JOURNAL_TEMPORARY
    with open(temporary, "w", encoding="utf-8") as file:
        json.dump(record, file, indent=2)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, root / JOURNAL)


def recover(root: Path, is_write_target: IsWriteTarget) -> str | None:
    """Roll back or finish a write a previous run left unfinished; say what was done (None: nothing).

    Refused (ToolError, nothing touched): a journal in the tree that git tracks, or one that is
    not exactly what swap_into_place writes for targets `is_write_target` accepts.
    """
    journal, temporary = root / JOURNAL, root / JOURNAL_TEMPORARY
    if os.path.lexists(journal) or os.path.lexists(temporary):  # none: nothing to read, no git to ask
        refuse_tracked_journal(root)
    for path in (journal, temporary):
        if path.is_symlink() or (os.path.lexists(path) and not path.is_file()):
            raise ToolError(
                Problem("is not a journal codegen wrote (not a regular file)", where=path.name, remedy="delete it")
            )
    if not journal.exists():
        temporary.unlink(missing_ok=True)  # a journal whose writing was interrupted: no swap had started
        return None
    state, written, swaps = _read_journal(root, is_write_target)
    with signals_recorded() as received:
        temporary.unlink(missing_ok=True)
        if state == "done":
            _finish(root, swaps)
            said = f"found a write from {written} that had finished: cleaned up after it, the tree holds its new files"
        else:
            _roll_back(root, swaps)
            said = f"found a write from {written} that was interrupted: rolled back, the tree holds what it held before"
        _FINISHED_WRITES.append(said)
    if received:
        raise InterruptedWrite(
            f"{signal.Signals(received[0]).name} arrived while recovering, which finished first: {said}", received[0]
        )
    return said


def recover_tree(root: Path, say: Callable[[str], None]) -> bool:
    """Before a run: settle what an interrupted write left; True when something was found."""
    said = recover(root, is_write_target)
    if said:
        say(f"warning: {said}")
    stray = leftovers(root, leftover_folders(root), is_write_target)
    if stray:
        remove_leftovers(root, stray)
        say(f"warning: removed {len(stray)} entr(y/ies) an interrupted write left: {', '.join(stray)}")
    return bool(said or stray)


def refuse_tracked_journal(root: Path) -> None:
    """A journal in the git index came from a commit, not from an interrupted write on this machine."""
    tracked = _tracked(root, (JOURNAL, JOURNAL_TEMPORARY))
    if tracked:
        names = " ".join(tracked)
        raise ToolError(
            Problem(
                f"{', '.join(tracked)}: committed, but a codegen journal is never committed and never read from "
                f"a commit; nothing was done: run `git rm -f {names}`, commit, then run again"
            )
        )


def _tracked(root: Path, paths: Iterable[str]) -> list[str]:
    """Which of `paths` are in the index of root's git repository (none when root is not in one)."""
    env = {k: v for k, v in os.environ.items() if k not in _GIT_REDIRECTS}
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--", *(f":(literal){p}" for p in paths)],
            env=env,
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        raise ToolError(
            Problem(f"cannot ask git whether {JOURNAL} is committed: {exc}", remedy="install git, then run again")
        ) from None
    if done.returncode != 0:
        error = done.stderr.decode("utf-8", "replace").strip()
        if "not a git repository" in error:
            return []
        raise ToolError(
            Problem(
                f"cannot ask git whether {JOURNAL} is committed: {printable(error)}",
                where=str(root),
                remedy="run in a git checkout git can read (see the error above), then run again",
            )
        )
    return sorted({p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p})


def _read_journal(root: Path, is_write_target: IsWriteTarget) -> tuple[str, str, list[_Swap]]:
    def refuse(why: str) -> ToolError:
        return ToolError(
            Problem(
                f"cannot recover the interrupted write it records: {why}; nothing was touched",
                where=JOURNAL,
                remedy="restore the generated files with `git checkout -- packages spec`, delete the journal "
                "and every .*.codegen-old-*/.*.codegen-new-* entry, then run codegen",
            )
        )

    path = root / JOURNAL
    try:
        if path.stat().st_size > _JOURNAL_MAX_BYTES:
            raise refuse(f"it is larger than {_JOURNAL_MAX_BYTES} bytes")
        record = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise refuse(f"it is unreadable ({printable(str(exc))})") from None
    if not isinstance(record, dict) or set(record) != _JOURNAL_FIELDS:
        raise refuse(f"it is not one codegen wrote (its fields must be {', '.join(sorted(_JOURNAL_FIELDS))})")
    state, tag, written, entries = record["state"], record["tag"], record["written"], record["swaps"]
    if state not in ("swapping", "done"):
        raise refuse("its state is neither 'swapping' nor 'done'")
    if not isinstance(tag, str) or not _TAG.fullmatch(tag):
        raise refuse("its tag is not one codegen makes (8 lowercase hex digits)")
    if not isinstance(written, str) or not _WRITTEN.fullmatch(written):
        raise refuse("its time is not one codegen writes (YYYY-MM-DD HH:MM:SSZ)")
    if not isinstance(entries, list):
        raise refuse("its swaps are not a list")
    swaps: list[_Swap] = []
    for entry in entries:
        if not (
            isinstance(entry, dict)
            and set(entry) == _SWAP_FIELDS
            and isinstance(entry["target"], str)
            and isinstance(entry["existed"], bool)
        ):
            raise refuse("a swap is not a {target: path, existed: true|false} codegen wrote")
        swap = _Swap(entry["target"], entry["existed"], tag)
        shown = printable(repr(swap.target))
        parts = swap.target.split("/")
        if swap.target.startswith("/") or any(part in ("", ".", "..") for part in parts):
            raise refuse(f"{shown} is not a normalized path inside the repository")
        if not is_write_target(swap.target):
            raise refuse(f"{shown} is not a path a codegen write swaps")
        if any(s.target == swap.target for s in swaps):
            raise refuse(f"{shown} is listed twice")
        under = ["/".join(parts[:end]) for end in range(1, len(parts))]
        if any((root / rel).is_symlink() for rel in (*under, swap.target, swap.fresh, swap.backup)):
            raise refuse(f"{shown} is, or lies under, a symlink")
        swaps.append(swap)
    return state, written, swaps


def leftovers(root: Path, folders: Iterable[str], is_write_target: IsWriteTarget) -> list[str]:
    """Leftovers of an interrupted write: the journal, and in `folders` `.NAME.codegen-new/old-*` of targets."""
    found = [name for name in (JOURNAL, JOURNAL_TEMPORARY) if os.path.lexists(root / name)]
    for folder in sorted(set(folders)):
        base = root / folder
        if base.is_symlink() or not base.is_dir():
            continue
        for entry in sorted(os.listdir(base)):
            match = LEFTOVER.fullmatch(entry)
            if match and is_write_target(f"{folder}/{match[1]}" if folder != "." else match[1]):
                found.append(f"{folder}/{entry}" if folder != "." else entry)
    return found


def remove_leftovers(root: Path, paths: list[str]) -> None:
    for path in paths:
        _remove(root / path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
