"""The one write of a release: files replaced and fragments removed, all or nothing.

Each new file is written beside its target and swapped in with `os.replace`;
each replaced or removed file is first moved aside.  Any failure (or Ctrl-C)
before the end moves everything back, so the tree is as it was.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path

from release.errors import Problem, ReleaseError


def _inside(root: Path, rel: str) -> Path:
    """The path of `rel` under root, refusing anything that would leave the repository through a link."""
    target = root / rel
    parent = target.parent.resolve()
    if target.is_symlink() or not parent.is_relative_to(root.resolve()):
        raise ReleaseError(
            Problem("is a symbolic link or leads out of the repository", where=rel, remedy="replace it by a file")
        )
    return target


def write_all(root: Path, files: Mapping[str, bytes], remove: Iterable[str]) -> None:
    targets = {rel: _inside(root, rel) for rel in [*files, *remove]}
    tag = uuid.uuid4().hex[:8]
    undo: list[tuple[Path, Path | None]] = []  # (target, its old content moved aside, or None if it was new)
    try:
        for rel, data in files.items():
            target = targets[rel]
            fresh = target.with_name(f".{target.name}.release-new-{tag}")
            target.parent.mkdir(parents=True, exist_ok=True)
            fresh.write_bytes(data)
            undo.append((target, _move_aside(target, tag)))
            os.replace(fresh, target)
        for rel in remove:
            target = targets[rel]
            backup = _move_aside(target, tag)
            undo.append((target, backup))
    except BaseException:
        for target, backup in reversed(undo):
            if backup is not None:
                os.replace(backup, target)
            else:
                target.unlink(missing_ok=True)
        for leftover in {t.parent for t in targets.values()}:
            for stray in leftover.glob(f".*.release-new-{tag}"):
                stray.unlink()
        raise
    for _, backup in undo:
        if backup is not None:
            backup.unlink()


def _move_aside(target: Path, tag: str) -> Path | None:
    if not target.exists():
        return None
    backup = target.with_name(f".{target.name}.release-old-{tag}")
    os.replace(target, backup)
    return backup
