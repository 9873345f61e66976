"""The one place that builds the HTTP stack under the generated API client.

Every request goes through the retrying transport (`e2b._transport`): by
default over pyqwest, or over a transport injected with the `transport`
option, which the SDK wraps but never closes, since its owner may reuse it.
"""

from __future__ import annotations

import asyncio
import time

import httpx

from e2b._config import ConnectionConfig
from e2b._exceptions import AuthenticationException
from e2b._transport import AsyncRetryableTransport, RetryableTransport
from e2b.api.client.client import AuthenticatedClient

__all__ = ["async_api_client", "async_retry_sleep", "retry_sleep", "sync_api_client"]


def retry_sleep(seconds: float) -> None:
    """How the sync transport waits between retries; tests replace it."""
    time.sleep(seconds)


async def async_retry_sleep(seconds: float) -> None:
    """How the async transport waits between retries; tests replace it."""
    await asyncio.sleep(seconds)


class _Borrowed(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._inner.handle_request(request)


class _AsyncBorrowed(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._inner.handle_async_request(request)


def _timeout(config: ConnectionConfig) -> httpx.Timeout:
    """The whole call's budget in every phase but read, which is per read.

    The retrying transport takes the longest phase as the deadline for the
    call, retries included (e2b._transport._policy.overall_timeout).
    """
    return httpx.Timeout(config.request_timeout, read=config.read_timeout)


def _sync_transport(config: ConnectionConfig) -> httpx.BaseTransport:
    inner = config.transport
    # A module global is looked up per call, so a test's replacement takes effect.
    sleep = retry_sleep
    if inner is None:
        # pyqwest is imported on the first call; it fixes its per-read idle
        # timeout per transport, and each client here gets its own.
        from e2b._transport import _factory

        return _factory.default_transport(
            sleep=sleep, read_timeout=config.read_timeout, connect_timeout=config.request_timeout
        )
    if not isinstance(inner, httpx.BaseTransport):
        raise TypeError("Sandbox needs a sync httpx transport; use AsyncSandbox for async ones")
    return RetryableTransport(_Borrowed(inner), sleep=sleep)


def _async_transport(config: ConnectionConfig) -> httpx.AsyncBaseTransport:
    inner = config.transport
    sleep = async_retry_sleep
    if inner is None:
        from e2b._transport import _factory

        return _factory.default_async_transport(
            sleep=sleep, read_timeout=config.read_timeout, connect_timeout=config.request_timeout
        )
    if not isinstance(inner, httpx.AsyncBaseTransport):
        raise TypeError("AsyncSandbox needs an async httpx transport; use Sandbox for sync ones")
    return AsyncRetryableTransport(_AsyncBorrowed(inner), sleep=sleep)


def _headers(config: ConnectionConfig) -> dict[str, str]:
    if not config.api_key and not config.debug:
        raise AuthenticationException("no API key: pass api_key=... or set the E2B_API_KEY environment variable")
    return {**config.headers, "X-API-Key": config.api_key or ""}


def _generated_client(config: ConnectionConfig) -> AuthenticatedClient:
    # raise_on_unexpected_status stays off: the SDK checks the status itself
    # (e2b._exceptions) before the generated parser sees a body.
    return AuthenticatedClient(
        base_url=config.api_url,
        token=config.api_key or "",
        prefix="",
        auth_header_name="X-API-Key",
        raise_on_unexpected_status=False,
    )


def sync_api_client(config: ConnectionConfig) -> AuthenticatedClient:
    """A generated client over a fresh `httpx.Client`; close it after the call."""
    client = _generated_client(config)
    return client.set_httpx_client(
        httpx.Client(
            base_url=config.api_url,
            headers=_headers(config),
            timeout=_timeout(config),
            transport=_sync_transport(config),
        )
    )


def async_api_client(config: ConnectionConfig) -> AuthenticatedClient:
    """A generated client over a fresh `httpx.AsyncClient`; close it after the call."""
    client = _generated_client(config)
    return client.set_async_httpx_client(
        httpx.AsyncClient(
            base_url=config.api_url,
            headers=_headers(config),
            timeout=_timeout(config),
            transport=_async_transport(config),
        )
    )
