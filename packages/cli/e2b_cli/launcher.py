"""The `e2b` console script: Ctrl-C ends the command at any moment, with one line.

It imports nothing heavy: the handler is in place before `import click`, and the command runs in a
worker thread while the main thread waits, so a Ctrl-C during a request in native code (pyqwest)
ends the process at once (status 130, then os._exit). Signals reach the main thread only: a command
that must undo something first (a terminal in raw mode) adds to `e2b_cli.signal_hooks`' hooks,
which also run around a stop (SIGTSTP) and its continue.

How it works, and why: docs/maintainers/packages.md, "packages/cli/e2b_cli/launcher.py".
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

from e2b_cli.signal_hooks import EXIT_HOOKS, RESIZE_HOOKS, run_hooks, serving, set_serving, stop_self
from e2b_cli.stdio import guard_stdio

__all__ = ["EXIT_HOOKS", "INTERRUPTED", "RESIZE_HOOKS", "run", "serving"]

INTERRUPTED = 130  # e2b_cli.errors.ExitStatus.INTERRUPTED, without importing it

# The signals the main thread handles for the worker (SIGWINCH's default is to ignore it; so does no hook).
_ENDING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
_RESIZE = getattr(signal, "SIGWINCH", None)
_STOP = getattr(signal, "SIGTSTP", None)


def _run_exit_hooks() -> None:
    run_hooks(reversed(EXIT_HOOKS))


def _on_interrupt(_signum: int, _frame: FrameType | None) -> None:
    _run_exit_hooks()
    # No flush of stdout: the worker may hold its lock, blocked on a full pipe.
    # On a terminal, the newline ends the line where the shell echoed ^C.
    lead = b"\n" if os.isatty(2) else b""
    os.write(2, lead + b"Interrupted.\n")
    # os._exit: the worker may be blocked in native code; do not wait for it.
    os._exit(INTERRUPTED)


def _on_ending(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM/SIGHUP: undo what the hooks undo, then die of the signal as if it had not been caught."""
    _run_exit_hooks()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _on_resize(_signum: int, _frame: FrameType | None) -> None:
    run_hooks(RESIZE_HOOKS)


def _run_command(status: list[int]) -> None:
    # Ctrl-C must reach the main thread: only there does it interrupt the wait for this worker.
    # A process's signal goes to any thread that does not block it, and one that lands on this
    # thread, or on a thread it starts (pyqwest's runtime inherits this mask), would leave the
    # main thread waiting until the request ended (2 in 25 runs on a busy machine).
    # SIGTERM, SIGHUP, SIGWINCH and SIGTSTP likewise: their handlers run on the main thread.
    if hasattr(signal, "pthread_sigmask"):  # not on Windows, where only the main thread gets it
        blocked = {signal.SIGINT, *_ENDING} | {s for s in (_RESIZE, _STOP) if s is not None}
        signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        from e2b_cli.main import main

        status.append(main())
    except SystemExit as exit_:
        status.append(exit_.code if isinstance(exit_.code, int) else 1)


def run() -> None:
    """Run `e2b` with the process's arguments; exit with its status."""
    guard_stdio()  # a closed stdout or stderr (`>&-`) fails the writes to it, as a full disk would
    signal.signal(signal.SIGINT, _on_interrupt)
    for ending in _ENDING:
        if signal.getsignal(ending) is signal.SIG_DFL:  # an ignored SIGHUP (nohup) stays ignored
            signal.signal(ending, _on_ending)
    if _RESIZE is not None:
        signal.signal(_RESIZE, _on_resize)
    # A stop lets hooks undo raw mode first; an ignored SIGTSTP stays ignored, as SIGHUP does.
    if _STOP is not None and signal.getsignal(_STOP) is signal.SIG_DFL:
        signal.signal(_STOP, stop_self)
    import threading

    set_serving(True)

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
            if stream is not None:  # None: closed at start, where guard_stdio did not run (an embedding)
                stream.flush()
        except (OSError, ValueError):
            pass  # stdout closed early or failing: main() has chosen the status already
    os._exit(status)
