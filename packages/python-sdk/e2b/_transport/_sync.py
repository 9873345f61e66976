"""Blocking flavour: the I/O loops around the shared decisions in ``_core``."""

from __future__ import annotations

import random as _random
import time
from collections.abc import Callable, Iterator

import httpx

from e2b._transport import _core
from e2b._transport._policy import RetryPolicy, never_retried


class _Inner:
    """Owns one inner response; closes it (and its iterator) exactly once."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._iterator: Iterator[bytes] | None = None
        self._closed = False

    def iterator(self) -> Iterator[bytes]:
        if self._iterator is None:
            stream = self.response.stream
            assert isinstance(stream, httpx.SyncByteStream)
            self._iterator = iter(stream)
        return self._iterator

    def read(self, ctx: _core.RequestContext) -> bytes:
        """One chunk; the inner transport bounds the wait.

        A blocking read cannot be interrupted from here. httpx bounds each
        read by the request's read timeout, pyqwest by its transport's
        ``read_timeout`` (and the exchange by the time left, see
        ``RequestContext.attempt_request``), so a stalled peek costs one read
        timeout at most.
        """
        if ctx.past_deadline():
            raise ctx.read_timeout_error()
        return next(self.iterator())

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
        try:
            close_iterator = getattr(self._iterator, "close", None)
            if close_iterator is not None:
                close_iterator()
        finally:
            self.response.close()


class _ReplayStream(httpx.SyncByteStream):
    """What the peek read, then the rest of the inner stream, within the deadline."""

    def __init__(self, chunks: list[bytes], inner: _Inner, ctx: _core.RequestContext) -> None:
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


def _peek(inner: _Inner, state: _core.PeekState, ctx: _core.RequestContext) -> None:
    try:
        while state.wants_more(ctx.clock()):
            try:
                chunk = inner.read(ctx)
            except StopIteration:
                state.eof()
            except Exception as error:  # any failed read decides "not a refusal"
                state.fail(error)
            else:
                state.add(chunk)
    except BaseException:
        # KeyboardInterrupt and the like must not strand the connection.
        inner.close_quietly()
        raise


class RetryableTransport(httpx.BaseTransport):
    """Retries busy responses of ``inner``; returns a refused pause at once."""

    def __init__(
        self,
        inner: httpx.BaseTransport,
        policy: RetryPolicy | None = None,
        *,
        clock: _core.Clock = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        random: _core.Random = _random.random,
    ) -> None:
        self.inner = inner
        self.policy = policy or RetryPolicy()
        self._clock = clock
        self._sleep = sleep
        self._random = random

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        started = self._clock()
        replayable = _core.is_replayable(request)
        response = self.inner.handle_request(request)
        if never_retried(response.status_code):
            return response
        ctx = _core.RequestContext.start(request, self.policy, self._clock, self._random, started, replayable)
        attempt = 0
        while True:
            plan = ctx.plan(response, attempt)
            if plan is None:
                return response
            if not plan.peek:
                outcome = ctx.without_peek(plan)
                if outcome.action is _core.Action.RETURN:
                    return response
                response.close()
            else:
                inner = _Inner(response)
                state = ctx.new_peek(plan)
                _peek(inner, state, ctx)
                outcome = ctx.after_peek(plan, state, response)
                if outcome.action is _core.Action.PARTIAL:
                    return _core.replayed_response(response, request, _ReplayStream(state.chunks, inner, ctx))
                inner.close()
                if outcome.action is _core.Action.REFUSAL:
                    assert outcome.decoded is not None
                    return _core.refusal_response(response, request, outcome.decoded)
                if outcome.action is _core.Action.COMPLETE:
                    return _core.replayed_response(response, request, httpx.ByteStream(state.raw))
                if outcome.action is _core.Action.RAISE:
                    assert state.error is not None
                    raise state.error
            ctx.announce_retry(response.status_code, outcome.sleep, attempt)
            self._sleep(outcome.sleep)
            attempt += 1
            response = self.inner.handle_request(ctx.attempt_request(attempt))

    def close(self) -> None:
        self.inner.close()
