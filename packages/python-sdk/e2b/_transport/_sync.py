"""Blocking flavour: reading, closing and sleeping around the decisions in ``_plan``."""

from __future__ import annotations

import random as _random
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field

import httpx

from e2b._transport._peek import BudgetSpent, PeekState, replayed_response
from e2b._transport._plan import Action, Clock, Random, RequestContext
from e2b._transport._retry_rules import RetryPolicy, is_replayable, never_retried


def _next_into(iterator: Iterator[bytes], future: Future[bytes | object]) -> None:
    try:
        future.set_result(next(iterator, _EOF))
    except BaseException as error:  # handed to the waiting thread, which raises it
        future.set_exception(error)


_EOF = object()


class _Inner:
    """Owns one inner response; closes it (and its iterator) exactly once.

    A blocking read cannot be interrupted from the thread that waits in it,
    so a read that must end with a peek's budget runs in a worker thread
    while the caller waits on it with a deadline. When the wait ends first,
    the read stays pending: a partial replay picks its chunk up, and closing
    the response cancels it (pyqwest ends a read at once when its response
    is closed from another thread; httpx's own transport ends it at its read
    timeout at the latest).
    """

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._iterator: Iterator[bytes] | None = None
        self._pending: Future[bytes | object] | None = None
        self._closed = False

    def iterator(self) -> Iterator[bytes]:
        if self._iterator is None:
            stream = self.response.stream
            assert isinstance(stream, httpx.SyncByteStream)
            self._iterator = iter(stream)
        return self._iterator

    def read(self, ctx: RequestContext, budget_end: float | None = None) -> bytes:
        """One chunk, bounded by the request's deadline and by a peek's `budget_end`.

        Raises StopIteration at the end of the body, `BudgetSpent` when the
        budget ends the wait. Without a budget or a pending read, the read
        runs here: the inner transport bounds it (httpx by the read timeout,
        pyqwest by the time left, see `RequestContext.attempt_request`).
        """
        if ctx.past_deadline():
            raise ctx.read_timeout_error()
        if budget_end is None and self._pending is None:
            return next(self.iterator())
        by_budget = False
        if budget_end is None:
            bound = ctx.read_bound()
        else:
            bound, by_budget = ctx.peek_read_bound(budget_end)
        if self._pending is None:
            self._pending = Future()
            worker = threading.Thread(target=_next_into, args=(self.iterator(), self._pending), daemon=True)
            worker.start()
        try:
            chunk = self._pending.result(timeout=bound)
        except FutureTimeout:
            raise BudgetSpent() if by_budget else ctx.read_timeout_error() from None
        finally:
            if self._pending.done():
                self._pending = None
        if chunk is _EOF:
            raise StopIteration
        assert isinstance(chunk, bytes)
        return chunk

    def close_quietly(self) -> None:
        """Close on the way out of an interruption, which must not be masked."""
        try:
            self.close()
        except Exception:  # the interruption is what matters
            pass

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        pending = self._pending
        if pending is not None and not pending.done():
            # The iterator is running in the worker and cannot be closed from
            # here: closing the response ends its read, then the worker closes it.
            try:
                self.response.close()
            finally:
                pending.add_done_callback(lambda _: self._close_iterator_quietly())
            return
        try:
            self._close_iterator()
        finally:
            self.response.close()

    def _close_iterator(self) -> None:
        close_iterator = getattr(self._iterator, "close", None)
        if close_iterator is not None:
            close_iterator()

    def _close_iterator_quietly(self) -> None:
        try:
            self._close_iterator()
        except Exception:  # the response is closed already; nobody waits for this
            pass


class _ReplayStream(httpx.SyncByteStream):
    """What the peek read, then the rest of the inner stream, within the deadline."""

    def __init__(self, chunks: list[bytes], inner: _Inner, ctx: RequestContext) -> None:
        self._chunks = chunks
        self._inner = inner
        self._ctx = ctx

    def __iter__(self) -> Iterator[bytes]:
        chunks, self._chunks = self._chunks, []
        yield from chunks
        while True:
            if self._ctx.past_deadline():
                self._inner.close()
                raise self._ctx.read_timeout_error()
            try:
                chunk = self._inner.read(self._ctx)
            except StopIteration:
                return
            except BaseException:
                self._inner.close_quietly()
                raise
            yield chunk

    def close(self) -> None:
        self._inner.close()


def _peek(inner: _Inner, state: PeekState, ctx: RequestContext) -> None:
    try:
        while state.wants_more(ctx.clock()):
            try:
                chunk = inner.read(ctx, state.budget_end)
            except StopIteration:
                state.eof()
            except BudgetSpent:
                state.out_of_budget()
            except Exception as error:  # any failed read decides "not a refusal"
                state.fail(error)
            else:
                state.add(chunk)
    except BaseException:
        # KeyboardInterrupt and the like must not strand the connection.
        inner.close_quietly()
        raise


@dataclass(eq=False)
class RetryableTransport(httpx.BaseTransport):
    """Retries busy responses of ``inner``; returns a refused pause at once."""

    inner: httpx.BaseTransport
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    clock: Clock = field(default=time.monotonic, kw_only=True)
    sleep: Callable[[float], None] = field(default=time.sleep, kw_only=True)
    random: Random = field(default=_random.random, kw_only=True)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        started = self.clock()
        replayable = is_replayable(request)
        response = self.inner.handle_request(request)
        if never_retried(response.status_code):
            return response
        ctx = RequestContext.start(request, self.policy, self.clock, self.random, started, replayable)
        attempt = 0
        while True:
            plan = ctx.plan(response, attempt)
            if plan is None:
                return response
            inner = _Inner(response)
            state = ctx.new_peek(plan) if plan.peek else None
            if state is not None:
                _peek(inner, state, ctx)
            outcome = ctx.decide(plan, state, response)
            if outcome.action is Action.RETURN:
                return response
            if outcome.action is Action.PARTIAL:
                assert state is not None
                return replayed_response(response, request, _ReplayStream(state.chunks, inner, ctx))
            inner.close()
            if outcome.action is not Action.RETRY:
                return ctx.final_response(outcome, response)
            ctx.announce_retry(response.status_code, outcome.sleep, attempt)
            self.sleep(outcome.sleep)
            attempt += 1
            response = self.inner.handle_request(ctx.attempt_request(attempt))

    def close(self) -> None:
        self.inner.close()
