"""How the sync flavour waits: the twin of `e2b.sandbox._flavour_async.steps`, both written by hand.

`Routine[P, T]` returns a `T`; `call_handler` calls a callback and drops what it returns; `Pump` reads
the stream into the callbacks at `run()` (the handle's `wait()`) or as the handle is iterated, as 2.x.
A stream's `timeout` is pyqwest's deadline for the whole exchange (`stream_options`), which ends a read
in native code; `first_item` bounds the start by `request_timeout` (`run_interruptibly`'s deadline).
`call`, `items` and `http_client` wait on a worker thread while the main thread waits in short slices
(`e2b._interruptible`): pyqwest never looks at signals, and Ctrl-C must end a call within a second. An
abandoned step goes on in its worker until its stream ends; the command keeps running, as in 2.x.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Generic, ParamSpec, TypeAlias, TypeVar, cast

from e2b._exceptions import SandboxException, TimeoutException
from e2b._interruptible import InterruptibleClient, abandoned, run_interruptibly
from e2b.sandbox.envd_errors import ended_before_start, start_too_late

__all__ = [
    "Pump",
    "Routine",
    "bounded",
    "call",
    "call_handler",
    "first_item",
    "http_client",
    "items",
    "stream_options",
]

T = TypeVar("T")
E = TypeVar("E")
P = ParamSpec("P")
Routine: TypeAlias = Callable[P, T]


def call(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`function(*args, **kwargs)`, on a worker thread when called from the main thread."""
    return run_interruptibly(lambda: function(*args, **kwargs))


def stream_options(timeout_ms: int | None) -> dict[str, Any]:
    """A stream call's deadline: connectrpc's `timeout_ms`, which it sends as `Connect-Timeout-Ms` and
    gives pyqwest as the deadline of the whole exchange, so that a stream the network left silent ends
    at it too, not only one that envd ends."""
    return {} if timeout_ms is None else {"timeout_ms": timeout_ms}


_END = object()


def items(stream: Iterator[T], deadline: float | None = None) -> Iterator[T]:
    """The items of `stream`, each read as `call` runs a call.

    `deadline` is pyqwest's here (`stream_options`), which ends the stream with connectrpc's
    DEADLINE_EXCEEDED.

    Read inside a step the caller abandoned (Ctrl-C during a `call` that drains the stream on the
    worker), it ends before its next read: the stream is closed, not read on for no one.
    """
    while not abandoned():
        item = call(next, stream, _END)
        if item is _END:
            return
        yield cast(T, item)


def http_client(**options: Any) -> InterruptibleClient:
    """The HTTP client for envd's /files and /health: its exchanges are interruptible."""
    return InterruptibleClient(**options)


def bounded(step: Callable[[], T], timeout: float | None, what: str) -> T:
    """`step()`, or `TimeoutException` when it takes longer than `timeout` seconds (None or 0: no bound).

    The step runs on a thread of its own, which the wait abandons at the timeout (its read ends when
    the response is closed or the connection drops).
    """
    if not timeout:
        return call(step)
    outcome: list[tuple[bool, Any]] = []
    done = threading.Event()

    def run() -> None:
        try:
            outcome.append((True, step()))
        except BaseException as error:  # the waiting thread raises it as its own
            outcome.append((False, error))
        finally:
            done.set()

    threading.Thread(target=run, name="e2b-bounded-read", daemon=True).start()
    if not done.wait(timeout):
        raise TimeoutException(f"{what}: nothing arrived for {timeout:g} s")
    ok, value = outcome[0]
    if not ok:
        raise value
    return cast(T, value)


def call_handler(handler: Callable[[T], object] | None, value: T) -> None:
    if handler is not None:
        handler(value)


class Pump(Generic[E]):
    """Drains `source()` into `sink` at the first `run()` (the handle's `wait()`), or as `items()` is iterated."""

    def __init__(self, source: Callable[[], Iterator[E]], sink: Callable[[E], None]) -> None:
        self._source = source
        self._sink = sink
        self._started = False

    def _start(self) -> Iterator[E]:
        if self._started:
            raise SandboxException("the handle's output is already being read (by wait() or another loop)")
        self._started = True
        return self._source()

    def items(self) -> Iterator[E]:
        """The items, each passed to the sink first; `run()` afterwards reads what the loop left.

        A loop that stops early leaves the rest to the next loop, which goes on from there, as 2.x's
        `for ... in handle` does (a terminal read up to one prompt, then up to the next).
        """
        source = getattr(self, "_rest", None) or self._start()
        self._rest = source
        for item in source:
            self._sink(item)
            yield item

    def run(self, *, callbacks: bool = True) -> None:
        """Until the source is drained.

        With `callbacks=False` (the sink calls none of the user's code) the whole drain is one step on
        the worker (`call`) instead of one per item: a command's end and the end of its stream cost
        one hand-over between threads, not one each. Interrupted (Ctrl-C), the drain ends before its
        next read (`items`).
        """
        source = getattr(self, "_rest", None) or self._start()
        self._rest = source
        if callbacks:
            for item in source:
                self._sink(item)
            return

        def drain() -> bool:  # not None: `call` answers with what its function returns
            for item in source:
                self._sink(item)
            return True

        call(drain)

    def stop(self) -> None:
        self._started = True  # a stopped pump reads no more
        self._rest = iter(())


def first_item(stream: Iterator[T], timeout: float | None, what: str) -> T:
    """The first item of `stream`; `TimeoutException` when it takes longer than `timeout` seconds."""
    if timeout:
        deadline = time.monotonic() + timeout
        item = run_interruptibly(lambda: next(stream, _END), deadline, lambda: start_too_late(what, timeout))
    else:
        item = call(next, stream, _END)
    if item is _END:
        raise ended_before_start(what)
    return cast(T, item)
