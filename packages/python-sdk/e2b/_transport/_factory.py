"""The transports the SDK's clients use by default: pyqwest wrapped in retries."""

from __future__ import annotations

import asyncio
import random as _random
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import httpx
import pyqwest
from pyqwest.httpx import AsyncPyqwestTransport, PyqwestTransport

from e2b._transport._async import AsyncRetryableTransport
from e2b._transport._deadline import operation_timeout
from e2b._transport._plan import Clock, Random
from e2b._transport._retry_rules import RetryPolicy
from e2b._transport._sync import RetryableTransport


def _with_operation_timeout(request: httpx.Request) -> httpx.Request:
    """The request as pyqwest must see it for its operation timeout to be the total."""
    timeout = operation_timeout(request.extensions)
    if timeout is None:
        return request
    # A shallow clone sharing headers and stream: building an httpx.Request
    # afresh costs about 20 us, 3 % of a keep-alive exchange, and copy.copy
    # drops the stream (httpx's pickling hooks).
    clone = object.__new__(httpx.Request)
    clone.__dict__.update(request.__dict__)
    clone.extensions = {**request.extensions, "timeout": timeout}
    return clone


class _OwnedPyqwestTransport(PyqwestTransport):
    """Closes the pyqwest transport it created, which httpx's close() skips,
    and bounds each exchange by the request's total timeout, not read + write.
    """

    def __init__(self, transport: pyqwest.SyncHTTPTransport) -> None:
        super().__init__(transport)
        self._owned = transport

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return super().handle_request(_with_operation_timeout(request))

    def close(self) -> None:
        self._owned.close()


class _OwnedAsyncPyqwestTransport(AsyncPyqwestTransport):
    def __init__(self, transport: pyqwest.HTTPTransport) -> None:
        super().__init__(transport)
        self._owned = transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await super().handle_async_request(_with_operation_timeout(request))

    async def aclose(self) -> None:
        await self._owned.aclose()


def _policy(policy: RetryPolicy | None, retries: int | None) -> RetryPolicy:
    policy = policy or RetryPolicy()
    return policy if retries is None else replace(policy, retries=retries)


def default_transport(
    *,
    retries: int | None = None,
    policy: RetryPolicy | None = None,
    clock: Clock = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    random: Random = _random.random,
    **pyqwest_options: Any,
) -> RetryableTransport:
    """A retrying transport over a fresh ``pyqwest.SyncHTTPTransport``.

    ``pyqwest_options`` go to ``SyncHTTPTransport``; redirects are left to
    httpx unless ``follow_redirects`` says otherwise. pyqwest's
    ``read_timeout`` is an idle timeout on every read, the wait for the
    answer included: the SDK leaves it unset, as a healthy answer (a pause)
    may take most of the request's timeout. The peek at a 503 body keeps its
    own budget without it: its reads run in a worker the transport stops
    waiting for (``_sync._Inner``).
    """
    pyqwest_options.setdefault("follow_redirects", False)
    inner = _OwnedPyqwestTransport(pyqwest.SyncHTTPTransport(**pyqwest_options))
    return RetryableTransport(inner, _policy(policy, retries), clock=clock, sleep=sleep, random=random)


def default_async_transport(
    *,
    retries: int | None = None,
    policy: RetryPolicy | None = None,
    clock: Clock = time.monotonic,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    random: Random = _random.random,
    **pyqwest_options: Any,
) -> AsyncRetryableTransport:
    """A retrying transport over a fresh ``pyqwest.HTTPTransport``."""
    pyqwest_options.setdefault("follow_redirects", False)
    inner = _OwnedAsyncPyqwestTransport(pyqwest.HTTPTransport(**pyqwest_options))
    return AsyncRetryableTransport(inner, _policy(policy, retries), clock=clock, sleep=sleep, random=random)
