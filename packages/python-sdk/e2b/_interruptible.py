"""The sync client's wait for an answer, which a signal can end (Ctrl-C within a second).

pyqwest waits in native code that never looks at signals, so a Ctrl-C on the
main thread would only be handled once the request ended (up to its timeout).
On the main thread, the only one where Python runs signal handlers, the
exchange therefore runs on a worker thread (SIGINT blocked there and in the
threads it starts) while the main thread waits in short slices. Whatever a
handler raises there abandons the exchange: its outcome is dropped when it
comes. On other threads the exchange runs in place, as no signal reaches them.
"""

from __future__ import annotations

import _thread
import contextvars
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

__all__ = ["InterruptibleClient", "abandoned", "run_interruptibly"]

T = TypeVar("T")

# The longest the main thread waits between two looks at its signals: a signal the
# kernel gave to another thread (one pyqwest started before this module's first
# worker, which does not block SIGINT) is handled at the end of the slice.
SLICE = 0.1


class _Exchange:
    """One blocking exchange handed to a worker, and its outcome."""

    def __init__(self, run: Callable[[], Any]) -> None:
        # The caller's context variables (tracing spans, for one) hold in the worker too.
        self._context = contextvars.copy_context()
        self._run = run
        self.done = _thread.allocate_lock()
        self.done.acquire()
        self.response: Any = None
        self.error: BaseException | None = None
        # Set when the waiting thread left (a signal handler raised): the steps still to come may stop.
        self.abandoned = False
        # A deadline (time.monotonic()) the waiting thread watches, and the exception it raises past it.
        # Set by the exchange itself too (`run_interruptibly(..., deadline)` on the worker): a command's
        # whole run is one exchange, and only its start is bounded by request_timeout.
        self.deadline: float | None = None
        self.late: Callable[[], BaseException] | None = None

    def run(self) -> None:
        _running.exchange = self
        try:
            self.response = self._context.run(self._run)
        except BaseException as error:  # the waiting thread raises it as its own
            self.error = error
        finally:
            _running.exchange = None


# The exchange each worker thread runs (None between two).
_running = threading.local()


def abandoned() -> bool:
    """Whether this thread runs an exchange whose waiting thread has left (Ctrl-C): its outcome is dropped.

    A step made of many waits (a stream read to its end) asks before each, so that an abandoned one
    stops at the next instead of reading on for no one.
    """
    exchange: _Exchange | None = getattr(_running, "exchange", None)
    return exchange is not None and exchange.abandoned


class _Worker:
    """A daemon thread that runs exchanges one at a time and then waits for the next.

    Reused: starting a thread per call costs about 8 times as much as handing
    an exchange to one that waits (some 170 us against 20 us here).
    """

    def __init__(self) -> None:
        self.exchanges: queue.SimpleQueue[_Exchange] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="e2b-sync-call", daemon=True).start()

    def _serve(self) -> None:
        # A SIGINT the kernel gives this thread, or a thread it starts (pyqwest's
        # runtime), would wake no one: it must go to the main thread, which waits.
        if hasattr(signal, "pthread_sigmask"):  # not on Windows, where only the main thread gets it
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        while True:
            exchange = self.exchanges.get()
            exchange.run()
            # Idle again before the waiting thread wakes, so that its next call finds this worker.
            _idle.append(self)
            exchange.done.release()


# Workers waiting for an exchange. A worker whose exchange was abandoned comes back when
# the exchange ends (by the request's timeout at the latest). list.append and pop are
# atomic: no lock that a fork could leave held.
_idle: list[_Worker] = []
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_idle.clear)  # the workers' threads are not in the child


def _worker() -> _Worker | None:
    """An idle worker, or a new one; None when no thread can start."""
    try:
        return _idle.pop()
    except IndexError:
        pass
    try:
        return _Worker()
    except RuntimeError:
        # From Python 3.12 no thread starts once the interpreter is shutting down, and
        # an atexit handler (`atexit.register(sbx.kill)`) runs then: it waits in place.
        return None


def run_interruptibly(
    run: Callable[[], T], deadline: float | None = None, late: Callable[[], BaseException] | None = None
) -> T:
    """`run()`, on a worker thread when called from the main thread, which then waits for it in slices.

    An exception a signal handler raised during the wait (KeyboardInterrupt)
    is raised at once; the exchange goes on in the worker and its outcome is
    dropped: `run` must leave nothing open behind it (an httpx send that
    reads the body closes the response).

    With a `deadline` (time.monotonic()), `late()` is raised once it passed: pyqwest's wait for an
    answer cannot be cut short from Python, so the wait is left to a worker, from any thread, and
    abandoned as for Ctrl-C (the worker comes back when the stream ends: at its `timeout` at the
    latest). Called on a worker, inside an exchange, the deadline is the exchange's own while `run`
    runs: the thread waiting for it watches it, and no second hand-over is paid.
    """
    current: _Exchange | None = getattr(_running, "exchange", None)
    if current is not None and deadline is not None:
        saved = current.deadline, current.late
        current.deadline, current.late = deadline, late
        try:
            return run()
        finally:
            current.deadline, current.late = saved
    if deadline is None and threading.current_thread() is not threading.main_thread():
        return run()
    worker = _worker()
    if worker is None:
        return run()
    exchange = _Exchange(run)
    exchange.deadline, exchange.late = deadline, late
    try:
        # Inside the try: a Ctrl-C handled just after the hand-over (at the check that follows the call)
        # must abandon the exchange too, or the worker would go on (retry, read a stream) for no one.
        worker.exchanges.put(exchange)
        while not exchange.done.acquire(timeout=SLICE):
            passed = exchange.deadline
            if passed is not None and time.monotonic() >= passed and exchange.late is not None:
                raise exchange.late()
    except BaseException:
        exchange.abandoned = True
        raise
    if exchange.error is not None:
        error, exchange.error = exchange.error, None  # no cycle through this frame
        raise error
    return exchange.response  # type: ignore[no-any-return]


class InterruptibleClient(httpx.Client):
    """An `httpx.Client` whose `send` waits as `run_interruptibly` does.

    The whole exchange runs in the worker: the connection, the retrying
    transport's attempts and sleeps, the response hooks and the reading of
    the body. A streamed response (`stream=True`, which the SDK never asks
    for) is sent in place, since an abandoned one would stay open.
    """

    def send(self, request: httpx.Request, *, stream: bool = False, **kwargs: Any) -> httpx.Response:
        if stream:
            return super().send(request, stream=True, **kwargs)
        return run_interruptibly(lambda: super(InterruptibleClient, self).send(request, **kwargs))
