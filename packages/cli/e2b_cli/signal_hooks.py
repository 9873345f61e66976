"""What a command undoes before a signal ends the `e2b` process, and what it does on a window resize.

Signals reach the console script's main thread only (`e2b_cli.launcher`), while the command runs in a
worker: the command registers its hooks here, and the launcher runs them. A module of its own, below
both, so that a command's modules never import the launcher that imports them.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["EXIT_HOOKS", "RESIZE_HOOKS", "serving", "set_serving"]

# Run (newest first) before a signal ends the process: e.g. put a terminal back out of raw mode.
EXIT_HOOKS: list[Callable[[], object]] = []
# Run when the terminal window changes size (SIGWINCH): the signal reaches the main thread only.
RESIZE_HOOKS: list[Callable[[], object]] = []
_serving = [False]


def serving() -> bool:
    """Whether this process runs the command in the launcher's worker thread (hooks are then honoured)."""
    return _serving[0]


def set_serving(value: bool) -> None:
    _serving[0] = value
