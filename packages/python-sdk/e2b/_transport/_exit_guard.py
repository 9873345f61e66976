"""At exit, let pyqwest's threads finish the Python they are running before the interpreter goes.

A pyqwest thread hands an async result over by calling `call_soon_threadsafe`,
which writes to the loop's socket with the GIL released. If the interpreter
finalizes meanwhile, CPython before 3.14 ends that thread with `pthread_exit`,
which cannot unwind through Rust: SIGABRT (curioswitch/pyqwest#164,
PyO3/pyo3#6084). The atexit hook waits, at most `MOST_WAIT` seconds, while a
thread `threading` did not start runs Python entered in pyqwest or asyncio
(not, say, pytest-xdist's receiver, which stays in Python for good).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from types import FrameType

__all__ = ["foreign_threads_in_python", "install", "reporting_threads", "wait_for_reporting_threads"]

MOST_WAIT = 0.5
# How long the main thread gives up the GIL between two looks.
PAUSE = 0.001


def foreign_threads_in_python() -> dict[int, FrameType]:
    """The threads not started by `threading` that are running Python now: ident to current frame."""
    own = {thread.ident for thread in threading.enumerate() if not isinstance(thread, threading._DummyThread)}
    return {ident: frame for ident, frame in sys._current_frames().items() if ident not in own}


def _called_from(frame: FrameType, folders: tuple[str, ...]) -> bool:
    """Whether the Python that `frame` belongs to was entered in one of `folders` (its outermost frame)."""
    while frame.f_back is not None:
        frame = frame.f_back
    return frame.f_code.co_filename.startswith(folders)


def _pyqwest_folders() -> tuple[str, ...]:
    import asyncio

    import pyqwest

    return tuple(os.path.dirname(module.__file__ or "") + os.sep for module in (pyqwest, asyncio))


def reporting_threads(folders: tuple[str, ...]) -> list[int]:
    """The foreign threads in Python that was entered in `folders` (pyqwest handing over a result)."""
    return [ident for ident, frame in foreign_threads_in_python().items() if _called_from(frame, folders)]


def wait_for_reporting_threads(folders: tuple[str, ...] | None = None) -> None:
    """Until no foreign thread runs Python that pyqwest called, or `MOST_WAIT` seconds."""
    folders = folders or _pyqwest_folders()
    deadline = time.monotonic() + MOST_WAIT
    while reporting_threads(folders) and time.monotonic() < deadline:
        time.sleep(PAUSE)


_installed = False


def install() -> None:
    """Register the hook, once per process."""
    global _installed
    # 3.14 leaves such a thread hanging instead of ending it: the exit is clean.
    if not _installed and sys.version_info < (3, 14):
        _installed = True
        atexit.register(wait_for_reporting_threads)
