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

from e2b._transport import _exit_guard
from e2b._transport._async import AsyncRetryableTransport
from e2b._transport._deadline import operation_timeout
from e2b._transport._plan import Clock, Random
from e2b._transport._retry_rules import RetryPolicy
from e2b._transport._sync import RetryableTransport

# How long the pool keeps an idle connection: less than servers do. A
# request written into a connection as the server closes it for idleness
# meets the close instead of an answer, and the retrying transport does not
# re-send it: it cannot tell that the server never read it (a pause must not
# run twice). pyqwest's 90 s outlasts most servers' idle close (uvicorn and
# Node.js: 5 s, load balancers: often 60 s), so a retry after a wait that long
# raced the close. 4 s, as Node's undici, leaves a second for the server's
# close to reach the client (docs/users/retries.md, "Idle connections").
POOL_IDLE_TIMEOUT = 4.0


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


def _pyqwest_options(options: dict[str, Any]) -> dict[str, Any]:
    """The caller's pyqwest options over the SDK's defaults."""
    return {"follow_redirects": False, "pool_idle_timeout": POOL_IDLE_TIMEOUT, **options}


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
    httpx unless ``follow_redirects`` says otherwise, and an idle connection
    is dropped after ``POOL_IDLE_TIMEOUT`` (4 s) unless ``pool_idle_timeout``
    says otherwise. pyqwest's ``read_timeout`` is an idle timeout on every
    read, the wait for the answer included: the SDK leaves it unset, as a
    healthy answer (a pause) may take most of the request's timeout. The peek
    at a 503 body keeps its own budget without it: its reads run in a worker
    the transport stops waiting for (``_sync._Inner``).
    """
    inner = _OwnedPyqwestTransport(pyqwest.SyncHTTPTransport(**_pyqwest_options(pyqwest_options)))
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
    _exit_guard.install()
    inner = _OwnedAsyncPyqwestTransport(pyqwest.HTTPTransport(**_pyqwest_options(pyqwest_options)))
    return AsyncRetryableTransport(inner, _policy(policy, retries), clock=clock, sleep=sleep, random=random)
