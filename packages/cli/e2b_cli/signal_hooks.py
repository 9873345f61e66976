"""What a command undoes before a signal ends or stops the `e2b` process, and what it does on a window resize.

Signals reach the console script's main thread only (`e2b_cli.launcher`), while the command runs in a
worker: the command registers its hooks here, and the launcher runs them. A module of its own, below
both, so that a command's modules never import the launcher that imports them.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterable
from types import FrameType
from typing import Any

__all__ = [
    "CONTINUE_HOOKS",
    "EXIT_HOOKS",
    "RESIZE_HOOKS",
    "STOP_HOOKS",
    "run_hooks",
    "serving",
    "set_serving",
    "stop_self",
]

# Run (newest first) before a signal ends the process: e.g. put a terminal back out of raw mode.
EXIT_HOOKS: list[Callable[[], object]] = []
# Run when the terminal window changes size (SIGWINCH): the signal reaches the main thread only.
RESIZE_HOOKS: list[Callable[[], object]] = []
# Run (newest first) before SIGTSTP stops the process, and (in order) once SIGCONT continues it:
# the shell that gets the terminal meanwhile must find it as it lent it; then raw mode is back.
STOP_HOOKS: list[Callable[[], object]] = []
CONTINUE_HOOKS: list[Callable[[], object]] = []
_serving = [False]


def serving() -> bool:
    """Whether this process runs the command in the launcher's worker thread (hooks are then honoured)."""
    return _serving[0]


def set_serving(value: bool) -> None:
    _serving[0] = value


def run_hooks(hooks: Iterable[Callable[[], object]]) -> None:
    """Each hook, in the order given; one that fails does not keep the others from running."""
    for hook in list(hooks):
        try:
            hook()
        except Exception:
            pass


def stop_self(signum: int, _frame: FrameType | None = None) -> None:
    """A handler of SIGTSTP: the stop hooks, the stop itself (the signal's default), then the continue hooks."""
    handler: Any = signal.getsignal(signum)
    run_hooks(reversed(STOP_HOOKS))
    signal.signal(signum, signal.SIG_DFL)
    try:
        os.kill(os.getpid(), signum)  # this thread does not block it: the process stops here until SIGCONT
    finally:
        signal.signal(signum, handler)
    run_hooks(CONTINUE_HOOKS)
