"""Asyncio flavour: the I/O loops around the shared decisions in ``_core``."""

from __future__ import annotations

import asyncio
import random as _random
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx

from e2b._transport import _core
from e2b._transport._policy import RetryPolicy

# Closes still running after their caller was cancelled; a strong reference
# keeps them from being garbage-collected half-way.
_background: set[asyncio.Future[None]] = set()


def _forget(task: asyncio.Future[None]) -> None:
    _background.discard(task)
    if not task.cancelled():
        task.exception()  # a failed close must not be logged as unretrieved


async def _anext_within(iterator: AsyncIterator[bytes], bound: float | None) -> bytes:
    if bound is None:
        return await iterator.__anext__()
    # asyncio.timeout, unlike wait_for, reads in this task: an async
    # generator must not be resumed from two tasks.
    async with asyncio.timeout(bound):
        return await iterator.__anext__()


class _Inner:
    """Owns one inner response; closes it (and its iterator) exactly once."""

    def __init__(self, response: httpx.Response, close_timeout: float) -> None:
        self.response = response
        self._iterator: AsyncIterator[bytes] | None = None
        self._close_task: asyncio.Future[None] | None = None
        self._close_timeout = close_timeout

    def iterator(self) -> AsyncIterator[bytes]:
        if self._iterator is None:
            stream = self.response.stream
            assert isinstance(stream, httpx.AsyncByteStream)
            self._iterator = stream.__aiter__()
        return self._iterator

    async def read(self, ctx: _core.RequestContext) -> bytes:
        """One chunk, bounded by the read timeout and the deadline."""
        bound = ctx.read_bound()
        if bound is not None and bound <= 0:
            raise ctx.read_timeout_error()
        try:
            return await _anext_within(self.iterator(), bound)
        except TimeoutError as error:
            raise ctx.read_timeout_error() from error

    async def _close_now(self) -> None:
        try:
            close_iterator = getattr(self._iterator, "aclose", None)
            if close_iterator is not None:
                await close_iterator()
        finally:
            await self.response.aclose()

    async def aclose(self) -> None:
        # The close runs in its own task behind a shield: a second
        # cancellation while closing would otherwise abandon the connection
        # mid-close and leak its pool slot. Waiting for it is bounded so a
        # wedged close cannot hold the caller's cancellation hostage.
        if self._close_task is None:
            self._close_task = asyncio.ensure_future(self._close_now())
            _background.add(self._close_task)
            self._close_task.add_done_callback(_forget)
        try:
            await asyncio.wait_for(asyncio.shield(self._close_task), self._close_timeout)
        except TimeoutError:
            pass  # it carries on in the background

    async def aclose_quietly(self) -> None:
        """Close on the way out of an interruption, which must not be masked."""
        try:
            await self.aclose()
        except Exception:  # the interruption is what matters
            pass


class _ReplayStream(httpx.AsyncByteStream):
    """What the peek read, then the rest of the inner stream, within the deadline."""

    def __init__(self, chunks: list[bytes], inner: _Inner, ctx: _core.RequestContext) -> None:
        self._chunks = chunks
        self._inner = inner
        self._ctx = ctx

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks, self._chunks = self._chunks, []
        for chunk in chunks:
            yield chunk
        while True:
            if self._ctx.past_deadline():
                await self._inner.aclose()
                raise self._ctx.read_timeout_error()
            try:
                chunk = await self._inner.read(self._ctx)
            except StopAsyncIteration:
                return
            except BaseException:
                await self._inner.aclose_quietly()
                raise
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


async def _peek(inner: _Inner, state: _core.PeekState, ctx: _core.RequestContext) -> None:
    try:
        while state.wants_more(ctx.clock()):
            try:
                chunk = await inner.read(ctx)
            except StopAsyncIteration:
                state.eof()
            except Exception as error:  # any failed read decides "not a refusal"
                state.fail(error)
            else:
                state.add(chunk)
    except BaseException:
        # Cancellation must not strand the connection; the close is shielded.
        await inner.aclose_quietly()
        raise


class AsyncRetryableTransport(httpx.AsyncBaseTransport):
    """Retries busy responses of ``inner``; returns a refused pause at once."""

    def __init__(
        self,
        inner: httpx.AsyncBaseTransport,
        policy: RetryPolicy | None = None,
        *,
        clock: _core.Clock = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        random: _core.Random = _random.random,
    ) -> None:
        self.inner = inner
        self.policy = policy or RetryPolicy()
        self._clock = clock
        self._sleep = sleep
        self._random = random

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        ctx = _core.RequestContext.start(request, self.policy, self._clock, self._random)
        attempt = 0
        while True:
            response = await self.inner.handle_async_request(ctx.attempt_request(attempt))
            plan = ctx.plan(response, attempt)
            if plan is None:
                return response
            inner = _Inner(response, self.policy.close_timeout)
            if not plan.peek:
                outcome = ctx.without_peek(plan)
                if outcome.action is _core.Action.RETURN:
                    return response
            else:
                state = ctx.new_peek(plan)
                await _peek(inner, state, ctx)
                outcome = ctx.after_peek(plan, state, response)
                if outcome.action is _core.Action.PARTIAL:
                    return _core.replayed_response(response, request, _ReplayStream(state.chunks, inner, ctx))
                if outcome.action is not _core.Action.RETRY:
                    await inner.aclose()
                if outcome.action is _core.Action.REFUSAL:
                    assert outcome.decoded is not None
                    return _core.refusal_response(response, request, outcome.decoded)
                if outcome.action is _core.Action.COMPLETE:
                    return _core.replayed_response(response, request, httpx.ByteStream(state.raw))
                if outcome.action is _core.Action.RAISE:
                    assert state.error is not None
                    raise state.error
            await inner.aclose()
            await self._sleep(outcome.sleep)
            attempt += 1

    async def aclose(self) -> None:
        await self.inner.aclose()
