"""Asyncio flavour: reading, closing and sleeping around the decisions in ``_plan``."""

from __future__ import annotations

import asyncio
import random as _random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import httpx

from e2b._transport._peek import BudgetSpent, PeekState, replayed_response
from e2b._transport._plan import Action, Clock, Random, RequestContext
from e2b._transport._retry_rules import RetryPolicy, is_replayable, never_retried

# Closes still running after their caller was cancelled; a strong reference
# keeps them from being garbage-collected half-way.
_background: set[asyncio.Future[None]] = set()


def _forget(task: asyncio.Future[None]) -> None:
    _background.discard(task)
    if not task.cancelled():
        task.exception()  # a failed close must not be logged as unretrieved


_EOF = object()


async def _step(iterator: AsyncIterator[bytes]) -> bytes | object:
    try:
        return await iterator.__anext__()
    except StopAsyncIteration:
        return _EOF  # a Future cannot carry StopAsyncIteration cleanly


class _Inner:
    """Owns one inner response; closes it (and its iterator) exactly once.

    Each read runs in its own task. A cancellation of the caller then never
    lands inside the inner stream: httpcore reacts to one by closing the
    connection itself, and a second cancellation arriving during that close
    strands the connection in the pool for good. Instead the caller's
    cancellation is turned into one orderly cancel of the read task, followed
    by a close, both in a task the caller's cancellations cannot reach.
    """

    def __init__(self, response: httpx.Response, close_timeout: float) -> None:
        self.response = response
        self._iterator: AsyncIterator[bytes] | None = None
        self._pending: asyncio.Task[bytes | object] | None = None
        self._close_task: asyncio.Future[None] | None = None
        self._close_timeout = close_timeout

    def _iter(self) -> AsyncIterator[bytes]:
        if self._iterator is None:
            stream = self.response.stream
            assert isinstance(stream, httpx.AsyncByteStream)
            self._iterator = stream.__aiter__()
        return self._iterator

    async def read(self, ctx: RequestContext, budget_end: float | None = None) -> bytes:
        """One chunk, bounded by the read timeout and the deadline, and by a peek's `budget_end`.

        Raises StopAsyncIteration at the end of the body, `BudgetSpent` when
        the budget ends the wait.
        """
        by_budget = False
        if budget_end is None:
            bound = ctx.read_bound()
        else:
            bound, by_budget = ctx.peek_read_bound(budget_end)
        if bound is not None and bound <= 0 and not by_budget:
            raise ctx.read_timeout_error()
        if self._pending is None:
            self._pending = asyncio.ensure_future(_step(self._iter()))
        done, _ = await asyncio.wait({self._pending}, timeout=bound)
        if not done:
            # The read stays pending: a partial replay picks it up, closing cancels it.
            raise BudgetSpent() if by_budget else ctx.read_timeout_error()
        task, self._pending = self._pending, None
        chunk = task.result()
        if chunk is _EOF:
            raise StopAsyncIteration
        assert isinstance(chunk, bytes)
        return chunk

    async def _close_now(self) -> None:
        try:
            pending = self._pending
            if pending is not None:
                if not pending.done():
                    pending.cancel()
                    await asyncio.wait({pending})
                if not pending.cancelled():
                    pending.exception()  # an abandoned read's error is moot
            close_iterator = getattr(self._iterator, "aclose", None)
            if close_iterator is not None:
                await close_iterator()
        finally:
            await self.response.aclose()

    async def aclose(self) -> None:
        # Shielded so that a second cancellation cannot abandon the close
        # half-way; the wait is bounded so a wedged close cannot hold the
        # caller's cancellation hostage (it carries on in the background).
        if self._close_task is None:
            self._close_task = asyncio.ensure_future(self._close_now())
            _background.add(self._close_task)
            self._close_task.add_done_callback(_forget)
        try:
            await asyncio.wait_for(asyncio.shield(self._close_task), self._close_timeout)
        except TimeoutError:
            pass

    async def aclose_quietly(self) -> None:
        """Close on the way out of an interruption, which must not be masked."""
        try:
            await self.aclose()
        except Exception:  # the interruption is what matters
            pass


class _ReplayStream(httpx.AsyncByteStream):
    """What the peek read, then the rest of the inner stream, within the deadline."""

    def __init__(self, chunks: list[bytes], inner: _Inner, ctx: RequestContext) -> None:
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


async def _peek(inner: _Inner, state: PeekState, ctx: RequestContext) -> None:
    try:
        while state.wants_more(ctx.clock()):
            try:
                chunk = await inner.read(ctx, state.budget_end)
            except StopAsyncIteration:
                state.eof()
            except BudgetSpent:
                state.out_of_budget()
            except Exception as error:  # any failed read decides "not a refusal"
                state.fail(error)
            else:
                state.add(chunk)
    except BaseException:
        # Cancellation must not strand the connection; the close is shielded.
        await inner.aclose_quietly()
        raise


@dataclass(eq=False)
class AsyncRetryableTransport(httpx.AsyncBaseTransport):
    """Retries busy responses of ``inner``; returns a refused pause at once."""

    inner: httpx.AsyncBaseTransport
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    clock: Clock = field(default=time.monotonic, kw_only=True)
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, kw_only=True)
    random: Random = field(default=_random.random, kw_only=True)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        started = self.clock()
        replayable = is_replayable(request)
        response = await self.inner.handle_async_request(request)
        if never_retried(response.status_code):
            return response
        ctx = RequestContext.start(request, self.policy, self.clock, self.random, started, replayable)
        attempt = 0
        while True:
            plan = ctx.plan(response, attempt)
            if plan is None:
                return response
            inner = _Inner(response, self.policy.close_timeout)
            state = ctx.new_peek(plan) if plan.peek else None
            if state is not None:
                await _peek(inner, state, ctx)
            outcome = ctx.decide(plan, state, response)
            if outcome.action is Action.RETURN:
                return response
            if outcome.action is Action.PARTIAL:
                assert state is not None
                return replayed_response(response, request, _ReplayStream(state.chunks, inner, ctx))
            await inner.aclose()
            if outcome.action is not Action.RETRY:
                return ctx.final_response(outcome, response)
            ctx.announce_retry(response.status_code, outcome.sleep, attempt)
            await self.sleep(outcome.sleep)
            attempt += 1
            response = await self.inner.handle_async_request(ctx.attempt_request(attempt))

    async def aclose(self) -> None:
        await self.inner.aclose()
