"""Exclusive locks on a file (flock), waited for up to a bound, that say who holds them.

One lock serialises codegen runs on a working tree, another the use of a
cached upstream repository: two runs in one tree would otherwise race on the
same renames, and two runs sharing a cache on the same git refs.
"""

from __future__ import annotations

import datetime
import errno
import fcntl
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from toolkit.errors import Problem, ToolError

TIMEOUT_ENV = "E2B_CODEGEN_LOCK_TIMEOUT"
DEFAULT_TIMEOUT = 120.0
_POLL = 0.05


def lock_timeout() -> float:
    raw = os.environ.get(TIMEOUT_ENV)
    try:
        return max(0.0, float(raw)) if raw else DEFAULT_TIMEOUT
    except ValueError:
        raise ToolError(Problem(f"{TIMEOUT_ENV}={raw!r} is not a number of seconds")) from None


@contextmanager
def held(path: Path, what: str, say: Callable[[str], None] = lambda _: None) -> Iterator[None]:
    """Hold the lock at `path` for the block; wait up to the timeout, then say who holds it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        why = "it is a symlink" if exc.errno == errno.ELOOP else exc.strerror
        raise ToolError(Problem(f"cannot open the lock of {what}: {why}", where=str(path))) from None
    try:
        timeout = lock_timeout()
        deadline = time.monotonic() + timeout
        said = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = _holder(fd)
                if time.monotonic() >= deadline:
                    raise ToolError(
                        Problem(
                            f"{what} is in use by {holder}; gave up after {timeout:g} s",
                            where=str(path),
                            remedy=f"wait for that run to finish or stop it; {TIMEOUT_ENV} sets how long to wait",
                        )
                    ) from None
                if not said:
                    say(f"waiting for {what}, in use by {holder}")
                    said = True
                time.sleep(_POLL)
        started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%SZ")
        command = " ".join(sys.argv)[:200]
        try:  # a signal as soon as the holder is written still leaves the lock empty
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} ({command}), since {started}\n".encode(), 0)
            yield
        finally:
            os.ftruncate(fd, 0)  # an idle lock is empty, so that it never shows as a change
    finally:
        os.close(fd)  # releases the lock


def _holder(fd: int) -> str:
    text = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
    return text if text and text.isprintable() else "another process"
