"""Signals as the tools take them: SIGTERM raised like Ctrl-C, and a signal a finalizer swallowed raised again.

How it works, and why: docs/maintainers/design.md, "toolkit/signals.py".
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


def interrupt_behind(error: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C or SIGTERM that `error` comes from, if any: the interrupt itself, or one it was raised from.

    The signal handler raises wherever the main thread is, and a few places turn
    what they catch into another exception: `type()` wraps an exception from
    `__set_name__` in a RuntimeError, a library's `except BaseException` may
    re-raise its own.  The interrupt is then still the cause (`__cause__`) or
    what was being handled (`__context__`), and it is what the run must report.
    """
    pending: list[BaseException] = [error]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, KeyboardInterrupt):
            return current
        pending += [e for e in (current.__cause__, current.__context__) if e is not None]
    return None


class Terminated(KeyboardInterrupt):
    """SIGTERM (what CI runners send on cancel), raised like Ctrl-C so that every clean-up runs."""

    signum = signal.SIGTERM


class LostSignal(KeyboardInterrupt):
    """A signal whose handler raised inside a finalizer, which cannot raise: raised again in a main-thread wait."""

    def __init__(self, signum: int) -> None:
        super().__init__()
        self.signum = signum


# Noted by the command line's unraisable hook (codegen.cli), taken by the main thread's waits.
_LOST_SIGNALS: list[int] = []


def note_lost_signal(signum: int) -> None:
    _LOST_SIGNALS.append(signum)


def take_lost_signals() -> list[int]:
    """The signals noted and not raised again, forgotten."""
    taken = list(_LOST_SIGNALS)
    _LOST_SIGNALS.clear()
    return taken


def raise_lost_signal() -> None:
    """In a wait of the main thread: a signal a finalizer swallowed ends the run here.

    A finalizer the signal interrupted may have left a lock held (importlib's module-lock callback,
    the import lock): a helper thread waiting on it never ends, so the wait for it must not be what
    the run waits on forever.
    """
    if _LOST_SIGNALS and threading.current_thread() is threading.main_thread():
        raise LostSignal(_LOST_SIGNALS.pop(0))


@contextmanager
def signals_recorded() -> Iterator[list[int]]:
    """SIGINT and SIGTERM are recorded, not acted on, for the block (main thread only).

    For a step that must not be cut in two: a write and its journal, or a child process and the
    name it is known by (a signal inside `subprocess.Popen` would leave the child running, unowned).
    """
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def record(signum: int, frame: FrameType | None) -> None:
        received.append(signum)

    previous = {sig: signal.signal(sig, record) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
