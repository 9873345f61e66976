"""How the async flavour waits: the twin of `e2b.sandbox._flavour_sync.steps`, both written by hand.

`Routine[P, T]` returns an awaitable of `T`; `call_handler` awaits a callback that is a coroutine
function; `Pump` drains a stream into callbacks in a task from the start, as 2.x's async handles do,
and an `async for` follows it; `first_item` waits for a stream's first event within
`request_timeout`; `items` ends a stream at its `timeout` (a timer on each read: the reads of one
stream are made by more than one task). `call`, `items` and `http_client` are the plain await,
iteration and `httpx.AsyncClient`: the sync twin makes them interruptible by Ctrl-C.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, ParamSpec, TypeAlias, TypeVar

import httpx

from e2b._exceptions import TimeoutException
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
Routine: TypeAlias = Callable[P, Awaitable[T]]
# How many items a follower (`async for` over a handle) may lag behind before the reading waits for it.
FOLLOWER_QUEUE = 64


async def call(function: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
    """`function(*args, **kwargs)`, awaited."""
    return await function(*args, **kwargs)


def stream_options(timeout_ms: int | None) -> dict[str, Any]:
    """None here: connectrpc's `timeout_ms` is a timer of the task that opens the stream, and a handle
    reads its stream from another (its pump), where it never fires. `items` keeps the deadline."""
    return {}


async def items(stream: AsyncIterator[T], deadline: float | None = None) -> AsyncIterator[T]:
    """The items of `stream`, as they come; past `deadline` (time.monotonic()) a read is cancelled.

    The timer is set for each read, not once around the loop: the first read is made by the caller's
    task, the others by the handle's pump, and a timer cancels the task that set it.
    """
    if deadline is None:
        async for item in stream:
            yield item
        return
    loop = asyncio.get_running_loop()
    at = loop.time() + (deadline - time.monotonic())
    while True:
        try:
            async with asyncio.timeout_at(at):
                item = await anext(stream)
        except StopAsyncIteration:
            return
        yield item


def http_client(**options: Any) -> httpx.AsyncClient:
    """The HTTP client for envd's /files and /health."""
    return httpx.AsyncClient(**options)


async def bounded(step: Callable[[], Awaitable[T]], timeout: float | None, what: str) -> T:
    """`step()`, or `TimeoutException` when it takes longer than `timeout` seconds (None or 0: no bound)."""
    if not timeout:
        return await step()
    try:
        return await asyncio.wait_for(step(), timeout)
    except TimeoutError:
        raise TimeoutException(f"{what}: nothing arrived for {timeout:g} s") from None


async def call_handler(handler: Callable[[T], object] | None, value: T) -> None:
    if handler is None:
        return
    result = handler(value)
    if inspect.isawaitable(result):
        await result


class _Follower:
    """One loop's items not yet taken: at most FOLLOWER_QUEUE while the loop keeps up, more once a
    `wait()` needs the stream read to its end (a loop left half-way must not hold the reading)."""

    def __init__(self) -> None:
        self.items: deque[tuple[bool, Any]] = deque()
        self.ready = asyncio.Event()  # set while `items` holds something
        self.room = asyncio.Event()  # set while the pump may add (or must, for a wait)
        self.room.set()

    def put(self, entry: tuple[bool, Any]) -> None:
        self.items.append(entry)
        self.ready.set()
        if len(self.items) >= FOLLOWER_QUEUE:
            self.room.clear()

    async def get(self) -> tuple[bool, Any]:
        while not self.items:
            self.ready.clear()
            await self.ready.wait()
        entry = self.items.popleft()
        if len(self.items) < FOLLOWER_QUEUE:
            self.room.set()
        return entry


class Pump(Generic[E]):
    """Drains `source()` into `sink` in a task started now, as e2b 2.x's async handles read their stream.

    `items()` follows the same items as they pass, from the moment it is called (the handle's
    `async for`); its queue is bounded, so a slow loop slows the reading instead of filling memory,
    except while `run()` (the handle's `wait()`) waits: then the reading goes on, and a loop that
    lags (or was left half-way without being closed) keeps what it has not taken yet.
    """

    def __init__(self, source: Callable[[], AsyncIterator[E]], sink: Callable[[E], Awaitable[None]]) -> None:
        self._source = source
        self._sink = sink
        self._followers: list[_Follower] = []
        self._error: Exception | None = None
        self._waiting = 0  # how many run() wait: while one does, no follower holds the reading
        self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        try:
            async for item in self._source():
                await self._sink(item)
                for follower in list(self._followers):
                    while not follower.room.is_set() and not self._waiting:
                        await follower.room.wait()
                    follower.put((True, item))
        except asyncio.CancelledError:
            raise
        except Exception as error:
            # Kept for `run()`: a failure nobody waits for is no "exception never retrieved" warning.
            self._error = error
            for follower in list(self._followers):
                follower.put((False, error))
            return
        for follower in list(self._followers):
            follower.put((False, None))

    def items(self) -> AsyncIterator[E]:
        # Registered now, not at the first step: nothing passes between the call and the loop.
        follower = _Follower()
        self._followers.append(follower)
        if self._task.done():
            follower.put((False, self._error))
        return self._follow(follower)

    async def _follow(self, follower: _Follower) -> AsyncIterator[E]:
        try:
            while True:
                more, value = await follower.get()
                if not more:
                    if value is not None:
                        raise value
                    return
                yield value
        finally:
            self._followers.remove(follower)
            follower.room.set()  # a pump waiting on this loop goes on

    async def run(self, *, callbacks: bool = True) -> None:
        """Until the source is drained; its exception, if any, is raised here.

        `callbacks=False` says the sink calls none of the user's code: the sync twin then drains in
        one step on its worker; here the task drains as ever.
        """
        self._waiting += 1
        for follower in self._followers:
            follower.room.set()  # the pump, if it waits for a loop, goes on
        try:
            await asyncio.shield(self._task)
        finally:
            self._waiting -= 1
        if self._error is not None:
            raise self._error

    async def stop(self) -> None:
        if not self._task.done():
            self._task.cancel()
            await asyncio.wait([self._task])


async def first_item(stream: AsyncIterator[T], timeout: float | None, what: str) -> T:
    """The first item of `stream`; `TimeoutException` when it takes longer than `timeout` seconds."""
    try:
        return await _first(stream, timeout, what)
    except StopAsyncIteration:
        raise ended_before_start(what) from None


async def _first(stream: AsyncIterator[T], timeout: float | None, what: str) -> T:
    step: Awaitable[T] = anext(stream)
    if not timeout:
        return await step
    task = asyncio.current_task()
    cancelling = task.cancelling() if task is not None else 0
    try:
        return await asyncio.wait_for(step, timeout)
    except TimeoutError:
        raise start_too_late(what, timeout) from None
    except BaseException as error:
        # connectrpc turns the cancellation wait_for makes at the deadline into its own error; a
        # cancellation of the caller's task (more `cancelling()` than before) stays one.
        cause = error.__cause__
        if isinstance(cause, asyncio.CancelledError) and (task is None or task.cancelling() == cancelling):
            raise start_too_late(what, timeout) from None
        raise
