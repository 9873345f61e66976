"""Reading a file of the tree, never through a symlink: what every step that only reads uses."""

from __future__ import annotations

import errno
import os
import stat
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
