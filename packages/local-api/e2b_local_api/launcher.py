"""The `e2b-local-api` console script: Ctrl-C stops the server at any moment, with one line.

It imports nothing heavy: the handler is in place before fastapi, pydantic and uvicorn are imported,
and once uvicorn serves and hands SIGINT back after its graceful shutdown, the same "Interrupted."
line and status 130 follow. SIGTERM keeps its default.

How it works, and why: docs/maintainers/packages.md, "packages/local-api/e2b_local_api/launcher.py".
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

__all__ = ["INTERRUPTED", "run"]

INTERRUPTED = 130  # 128 + SIGINT, as the `e2b` command and shells report it


def _on_interrupt(_signum: int, _frame: FrameType | None) -> None:
    # This runs on the main thread between two bytecodes, maybe inside a write to
    # stderr: a flush may find the stream busy, which must not stop the exit.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, RuntimeError):
            pass
    # On a terminal, the newline ends the line where the shell echoed ^C.
    lead = b"\n" if os.isatty(2) else b""
    try:
        os.write(2, lead + b"Interrupted.\n")
    except OSError:
        pass
    os._exit(INTERRUPTED)


def run() -> None:
    """Run `e2b-local-api` with the process's arguments."""
    signal.signal(signal.SIGINT, _on_interrupt)
    from e2b_local_api.cli import main

    main()
