"""Reading a file of the tree, never through a symlink: what every step that only reads uses."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path


def read_or_none(path: Path) -> bytes | None:
    """The file's bytes; None when it is missing, not a regular file, or a symlink (never followed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the last component is a symlink
            return None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def holds_exactly(root: Path, folders: Iterable[str], files: Mapping[str, bytes]) -> bool:
    """Whether the tree's files under `folders` are exactly `files` there, byte for byte (a symlink: never)."""
    folders = tuple(folders)
    prefixes = tuple(f"{folder}/" for folder in folders)
    wanted = {rel: data for rel, data in files.items() if rel.startswith(prefixes)}
    found: set[str] = set()
    for folder in folders:
        for path in (root / folder).rglob("*"):
            if "__pycache__" in path.parts or (path.is_dir() and not path.is_symlink()):
                continue
            rel = path.relative_to(root).as_posix()
            if rel not in wanted or read_or_none(path) != wanted[rel]:  # read_or_none: None for a symlink
                return False
            found.add(rel)
    return found == wanted.keys()
