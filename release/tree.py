"""The one write of a release: files replaced and fragments removed, all or nothing.

It goes through codegen's journaled transaction (toolkit/transaction.py), the
one way anything here writes many files as one change: an error, Ctrl-C,
SIGTERM or a crash leaves the tree, after the next run at the latest (a
release, or any codegen verb), fully old or fully new.  What a release may
write is also all its journal may name (toolkit/paths.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from release.errors import Problem, ReleaseError
from toolkit.transaction import Content, swap_into_place


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
    removed = list(remove)
    for rel in [*files, *removed]:
        _inside(root, rel)
    contents: dict[str, Content | None] = {**files, **dict.fromkeys(removed)}
    swap_into_place(root, contents)
