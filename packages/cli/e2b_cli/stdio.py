"""stdout and stderr as the console script writes to them: closed ones, and writes that fail.

Python makes `sys.stdout` None when descriptor 1 is closed at start (`e2b sandbox list >&-`), and the
next file or socket the process opens takes descriptor 1: output would go into an HTTP connection.
`guard_stdio` puts /dev/null, read-only, on a closed 0, 1 or 2, so nothing else takes its place and a
write there fails (EBADF), and puts streams over 1 and 2 whose failed writes raise `OutputError`, which
names the stream: the top-level handler tells it from an OSError of the command's own and says it in
one line, exit status 1; `exec` kills the remote command whose output has nowhere to go. A closed pipe
stays a `BrokenPipeError` (exit status 141, nothing said).
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any

__all__ = ["OutputError", "guard_stdio"]


class OutputError(OSError):
    """A write to stdout or stderr failed (a full disk, a closed descriptor), a closed pipe aside."""

    stream: str = "stdout"


class _OutputFile(io.FileIO):
    """Descriptor 1 or 2, its write errors raised as `OutputError`."""

    def __init__(self, fd: int, stream: str) -> None:
        super().__init__(fd, "w", closefd=False)
        self.stream = stream

    def write(self, data: Any, /) -> int:
        try:
            return super().write(data)
        except BrokenPipeError:
            raise
        except OSError as error:
            failed = OutputError(error.errno, error.strerror)
            failed.stream = self.stream
            raise failed from None


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _stream(fd: int, name: str, current: Any) -> io.TextIOWrapper:
    # As Python made the stream it replaces (encoding, errors, buffering); for a closed one, what
    # Python gives stderr: nothing written there arrives anyway.
    return io.TextIOWrapper(
        io.BufferedWriter(_OutputFile(fd, name)),
        encoding=getattr(current, "encoding", None) or "utf-8",
        errors=getattr(current, "errors", None) or "backslashreplace",
        line_buffering=bool(getattr(current, "line_buffering", True)),
        write_through=bool(getattr(current, "write_through", False)),
    )


def guard_stdio() -> None:
    """Occupy closed standard descriptors with /dev/null (read-only), and make `sys.stdout`/`sys.stderr` guarded."""
    for fd in (0, 1, 2):
        if not _is_open(fd):
            # The lowest free descriptor is `fd` itself when those below it are open (they are, in this order).
            opened = os.open(os.devnull, os.O_RDONLY)
            if opened != fd:
                os.dup2(opened, fd)
                os.close(opened)
    for fd, name in ((1, "stdout"), (2, "stderr")):
        current = getattr(sys, name)
        if current is not None:
            try:
                current.flush()
            except (OSError, ValueError):
                pass
        setattr(sys, name, _stream(fd, name, current))
