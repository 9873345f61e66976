"""The `e2b` console script: Ctrl-C ends the command at any moment, with one line.

Two things stand in the way of that, and this module, which imports nothing
heavy, handles both before anything else runs:

- Ctrl-C during `import click` (the first 0.15 s) would print a traceback:
  the handler is installed before any import of ours.
- The SDK's default HTTP stack (pyqwest) waits in native code that does not
  look at signals, so a Ctrl-C during a request would only be noticed when
  the request ends. The command therefore runs in a worker thread while the
  main thread, the only one that receives the signal (the worker and the
  threads it starts block it), only waits; on Ctrl-C it prints one line and
  ends the process (status 130) without waiting for the worker.

What remains is the interpreter's own start-up (site and `.pth` processing,
some 30 ms), before any code of this package runs. The process ends with
os._exit once its output is flushed: the interpreter's teardown is skipped.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

__all__ = ["INTERRUPTED", "run"]

INTERRUPTED = 130  # e2b_cli.errors.ExitStatus.INTERRUPTED, without importing it


def _on_interrupt(_signum: int, _frame: FrameType | None) -> None:
    # No flush of stdout: the worker may hold its lock, blocked on a full pipe.
    # On a terminal, the newline ends the line where the shell echoed ^C.
    lead = b"\n" if os.isatty(2) else b""
    os.write(2, lead + b"Interrupted.\n")
    # os._exit: the worker may be blocked in native code; do not wait for it.
    os._exit(INTERRUPTED)


def _run_command(status: list[int]) -> None:
    # Ctrl-C must reach the main thread: only there does it interrupt the wait for this worker.
    # A process's signal goes to any thread that does not block it, and one that lands on this
    # thread, or on a thread it starts (pyqwest's runtime inherits this mask), would leave the
    # main thread waiting until the request ended (2 in 25 runs on a busy machine).
    if hasattr(signal, "pthread_sigmask"):  # not on Windows, where only the main thread gets it
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        from e2b_cli.main import main

        status.append(main())
    except SystemExit as exit_:
        status.append(exit_.code if isinstance(exit_.code, int) else 1)


def run() -> None:
    """Run `e2b` with the process's arguments; exit with its status."""
    signal.signal(signal.SIGINT, _on_interrupt)
    import threading

    status: list[int] = []
    worker = threading.Thread(target=_run_command, args=(status,), name="e2b", daemon=True)
    worker.start()
    worker.join()
    _exit(status[0] if status else 1)


def _exit(status: int) -> None:
    """End the process once what it wrote is flushed.

    os._exit skips the interpreter's teardown (every module's namespace, the
    HTTP stack's runtime threads), which costs a command against the API
    some 20 ms for nothing: the command is over and its output is out.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # stdout closed early: main() has chosen the status already
    os._exit(status)
