"""The `e2b-local-api` console script: Ctrl-C stops the server at any moment, with one line.

The launcher of the `e2b` command (`e2b_cli.launcher`) does the same for the
CLI; this one imports nothing heavy either and handles, before anything else
runs:

- Ctrl-C while fastapi, pydantic and uvicorn are being imported (the first
  few hundred milliseconds) would print a `KeyboardInterrupt` traceback: the
  handler is installed before any import of ours, so the process says
  "Interrupted." and ends with status 130.
- Once it serves, uvicorn takes SIGINT over, shuts down gracefully, puts this
  handler back and raises the signal again (uvicorn 0.29 and later), which
  would otherwise end in the traceback of a `KeyboardInterrupt` out of
  `asyncio.run`: the same line and status follow its shutdown log.

SIGTERM keeps its default: uvicorn shuts down on it, then the process ends by
the signal, with no traceback either. What remains is the interpreter's own
start-up (site and `.pth` processing, some 30 ms), before any code of this
package runs: a Ctrl-C then gets Python's default `KeyboardInterrupt`
traceback, and nothing here can change that.
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
