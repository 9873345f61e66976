"""The local side of an interactive terminal: raw mode, its undoing, and window resizes.

`raw_terminal` puts the terminal in raw mode (every key goes to the sandbox,
Ctrl-C and Ctrl-D included) and puts it back however the block ends: a
return, an exception, or a signal (SIGINT, SIGTERM, SIGHUP); a stop (SIGTSTP)
puts it back too, and the continue (SIGCONT) makes it raw again, as ssh does.
The launcher's hooks do it when the command runs in its worker thread. A
resize calls `on_resize` from the thread that got SIGWINCH: it only takes note.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from e2b_cli import signal_hooks

__all__ = ["can_attach", "on_fatal_signal", "raw_terminal", "sdk_name", "window_size"]

# Signals after which the process ends: the terminal is restored first.
_ENDING = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def sdk_name(name: str) -> Any:
    """A data-plane name of `e2b` (`PtySize`, `CommandExitException`), looked up when a session needs it.

    Typed Any, as the sandboxes these sessions use are: the CLI is written
    against the released SDK's sync data-plane API, which this repository's
    SDK types as its twins are derived (issue 43).
    """
    import e2b

    return getattr(e2b, name)


def can_attach() -> bool:
    """Whether stdin and stdout are a terminal, so that a remote terminal can be shown on it."""
    try:
        return os.isatty(sys.stdin.fileno()) and os.isatty(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # replaced streams (tests, embedding) have no descriptor
        return False


def window_size(fd: int) -> tuple[int, int]:
    """(rows, columns) of the terminal on `fd`; 24x80 when it does not say (a size of 0)."""
    try:
        columns, rows = os.get_terminal_size(fd)
    except OSError:
        return 24, 80
    return rows or 24, columns or 80


class _Mode:
    """Raw mode on `fd`, left and taken again around a stop, and left for good at the end.

    The lock is re-entrant: in a host's main thread a signal's handler may run
    inside a change of mode, which it then finishes first.
    """

    def __init__(self, fd: int) -> None:
        import termios

        self.fd = fd
        self.saved = termios.tcgetattr(fd)
        self.raw = False
        self.over = False
        self.lock = threading.RLock()

    def enter(self) -> None:
        import termios
        import tty

        with self.lock:
            if not self.over and not self.raw:
                # As the shell gave the terminal back after a stop: the settings to restore at the end.
                self.saved = termios.tcgetattr(self.fd)
                tty.setraw(self.fd, termios.TCSANOW)
                self.raw = True

    def leave(self) -> None:
        import termios

        with self.lock:
            if self.raw:
                self.raw = False
                # TCSAFLUSH: keys typed after the session are not left for the shell to run.
                termios.tcsetattr(self.fd, termios.TCSAFLUSH, self.saved)

    def end(self) -> None:
        with self.lock:
            self.over = True
            self.leave()


@contextmanager
def raw_terminal(fd: int, on_resize: Callable[[], object]) -> Iterator[None]:
    """Raw mode on the terminal `fd` for the block; its settings are restored on every way out, and over a stop."""
    mode = _Mode(fd)

    def resume() -> None:  # after a stop: raw again, and the window may have changed meanwhile
        mode.enter()
        on_resize()

    with _signals(mode.end, mode.leave, resume, on_resize):
        mode.enter()
        try:
            yield
        finally:
            mode.end()


@contextmanager
def _signals(
    restore: Callable[[], None],
    stop: Callable[[], None],
    resume: Callable[[], None],
    on_resize: Callable[[], object],
) -> Iterator[None]:
    """`restore` before a signal ends the process; `stop` and `resume` around a stop; `on_resize` on SIGWINCH.

    Handlers can only be set from the main thread: the `e2b` console script
    runs commands in a worker thread, and its main thread runs these as hooks.
    """
    hooks = (
        (signal_hooks.EXIT_HOOKS, restore),
        (signal_hooks.STOP_HOOKS, stop),
        (signal_hooks.CONTINUE_HOOKS, resume),
        (signal_hooks.RESIZE_HOOKS, on_resize),
    )
    main = threading.current_thread() is threading.main_thread()
    if not main and not signal_hooks.serving():
        yield  # a host program's thread: its own handlers stay; the block still restores on exit
        return
    for hook_list, hook in hooks:
        hook_list.append(hook)
    try:
        if main:
            with _handlers(restore, on_resize):
                yield
        else:
            yield
    finally:
        for hook_list, hook in hooks:
            hook_list.remove(hook)


@contextmanager
def _handlers(restore: Callable[[], None], on_resize: Callable[[], object]) -> Iterator[None]:
    """In the main thread, the handlers the launcher would otherwise set: ending signals, SIGWINCH, SIGTSTP."""
    previous: dict[int, Any] = {}

    def ending(signum: int, frame: FrameType | None) -> None:
        restore()
        handler = previous.get(signum)
        if callable(handler):
            handler(signum, frame)
        else:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    for signum in _ENDING:
        previous[signum] = signal.signal(signum, ending)
    winch = getattr(signal, "SIGWINCH", None)
    if winch is not None:
        previous[winch] = signal.signal(winch, lambda _signum, _frame: on_resize())
    stop = getattr(signal, "SIGTSTP", None)
    if stop is not None and signal.getsignal(stop) is signal.SIG_DFL:  # an ignored one stays ignored
        previous[stop] = signal.signal(stop, signal_hooks.stop_self)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


@contextmanager
def on_fatal_signal(undo: Callable[[], object], seconds: float = 5) -> Iterator[None]:
    """Run `undo` (e.g. kill the remote process) if a signal ends the `e2b` command during the block.

    It runs on a thread of its own for at most `seconds`: the process ends
    even if the sandbox does not answer. Only the console script's launcher
    runs such hooks; a host program keeps its own handling of signals.
    """

    def bounded() -> None:
        worker = threading.Thread(target=undo, daemon=True)
        worker.start()
        worker.join(seconds)

    if not signal_hooks.serving():
        yield
        return
    signal_hooks.EXIT_HOOKS.append(bounded)
    try:
        yield
    finally:
        signal_hooks.EXIT_HOOKS.remove(bounded)
