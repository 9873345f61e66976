"""Swap many files and folders into place as one transaction, with a journal for what interrupts it.

1. Prepare: every new file or folder is written beside its target
   (`.NAME.codegen-new-TAG`).  Nothing visible has changed; an interruption
   removes them and truly nothing was written.
2. Swap: the journal (`.codegen-journal.json`) records every planned swap, then
   each target moves to `.NAME.codegen-old-TAG` and its new copy into place.
   The journal then says "done": that is the commit point.
3. Clean up: the old copies go, then the journal.

SIGINT and SIGTERM wait while steps 2 and 3 run (a few renames), so an
interruption there finishes the write and says so.  What a signal cannot
stop, a crash or SIGKILL can: the next run (and the check) finds the journal
and rolls back an unfinished swap, or finishes the clean-up of a done one,
before anything else.  Either way the tree ends fully old or fully new.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import signal
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from codegen.errors import CodegenError, Problem

JOURNAL = ".codegen-journal.json"
LEFTOVER = re.compile(r"\..+\.codegen-(?:new|old)-[0-9a-f]{8}")
_TAG = re.compile(r"[0-9a-f]{8}")

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


def swap_into_place(root: Path, contents: Mapping[str, Content]) -> None:
    """Replace every target (a path relative to root) with its content, all or nothing."""
    tag = uuid.uuid4().hex[:8]
    swaps = [_Swap(target, os.path.lexists(root / target), tag) for target in contents]
    try:
        for swap in swaps:
            _write(root / swap.fresh, contents[swap.target])
    except BaseException:
        for swap in swaps:
            _remove(root / swap.fresh)
        raise
    with _signals_wait() as received:
        try:
            _write_journal(root, swaps, "swapping")
            for swap in swaps:
                if swap.existed:
                    os.replace(root / swap.target, root / swap.backup)
                os.replace(root / swap.fresh, root / swap.target)
            _write_journal(root, swaps, "done")
        except BaseException:
            _roll_back(root, swaps)
            raise
        _finish(root, swaps)
    if received:
        raise InterruptedWrite(
            f"{signal.Signals(received[0]).name} arrived during the write, which finished first: "
            f"the tree holds the new files ({len(swaps)} path(s) swapped)",
            received[0],
        )


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
    (root / f"{JOURNAL}.tmp").unlink(missing_ok=True)
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
    temporary = root / f"{JOURNAL}.tmp"
    with open(temporary, "w", encoding="utf-8") as file:
        json.dump(record, file, indent=2)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, root / JOURNAL)


def recover(root: Path) -> str | None:
    """Roll back or finish a write a previous run left unfinished; say what was done (None: nothing)."""
    journal = root / JOURNAL
    (root / f"{JOURNAL}.tmp").unlink(missing_ok=True)
    if journal.is_symlink():
        raise CodegenError(Problem("is a symlink, not a journal codegen wrote", where=JOURNAL, remedy="delete it"))
    if not journal.exists():
        return None
    state, written, swaps = _read_journal(root)
    with _signals_wait() as received:
        if state == "done":
            _finish(root, swaps)
            said = f"found a write from {written} that had finished: cleaned up after it, the tree holds its new files"
        else:
            _roll_back(root, swaps)
            said = f"found a write from {written} that was interrupted: rolled back, the tree holds what it held before"
    if received:
        raise InterruptedWrite(
            f"{signal.Signals(received[0]).name} arrived while recovering, which finished first: {said}", received[0]
        )
    return said


def _read_journal(root: Path) -> tuple[str, str, list[_Swap]]:
    def refuse(why: str) -> CodegenError:
        return CodegenError(
            Problem(
                f"cannot recover the interrupted write it records: {why}",
                where=JOURNAL,
                remedy="restore the generated files with `git checkout -- packages spec`, delete the journal "
                "and every .*.codegen-old-*/.*.codegen-new-* entry, then run codegen",
            )
        )

    try:
        record = json.loads((root / JOURNAL).read_text(encoding="utf-8"))
        state, tag, written = record["state"], record["tag"], str(record["written"])
        swaps = [_Swap(str(s["target"]), bool(s["existed"]), str(tag)) for s in record["swaps"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise refuse(f"it is unreadable ({exc})") from None
    if state not in ("swapping", "done") or not isinstance(tag, str) or not _TAG.fullmatch(tag):
        raise refuse("it is not one codegen wrote")
    for swap in swaps:
        parts = swap.target.split("/")
        if swap.target.startswith("/") or ".." in parts or ".git" in parts or "" in parts:
            raise refuse(f"{swap.target!r} is not a path inside the repository")
        if any((root / "/".join(parts[:end])).is_symlink() for end in range(1, len(parts))):
            raise refuse(f"{swap.target!r} lies under a symlink")
    return state, written, swaps


def leftovers(root: Path, folders: Iterable[str]) -> list[str]:
    """Entries an interrupted write left in `folders` (the journal, `.*.codegen-new/old-*`)."""
    found = [JOURNAL] if os.path.lexists(root / JOURNAL) else []
    for folder in sorted(set(folders)):
        base = root / folder
        if base.is_symlink() or not base.is_dir():
            continue
        for entry in sorted(os.listdir(base)):
            if LEFTOVER.fullmatch(entry):
                found.append(f"{folder}/{entry}" if folder != "." else entry)
    return found


def remove_leftovers(root: Path, paths: list[str]) -> None:
    for path in paths:
        _remove(root / path)


@contextmanager
def _signals_wait() -> Iterator[list[int]]:
    """SIGINT and SIGTERM are recorded, not acted on, for the block (main thread only)."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def record(signum: int, frame: FrameType | None) -> None:
        received.append(signum)

    previous = {sig: signal.signal(sig, record) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
