"""The one place that builds the HTTP stack under the generated API client.

Every request goes through the retrying transport (`e2b._transport`): by
default over pyqwest, or over a transport injected with the `transport`
option, which the SDK wraps but never closes, since its owner may reuse it.

`sync_call`/`async_call` give one SDK call its client: a status it does not
expect is raised as the SDK's exception before the generated parser sees the
body (that parser fails on a malformed error body), and a timeout is raised
as `e2b.TimeoutException`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Collection, Iterator
from contextlib import asynccontextmanager, contextmanager

import httpx

from e2b._config import ConnectionConfig
from e2b._exceptions import (
    AuthenticationException,
    TimeoutException,
    handle_api_exception,
    is_json_media_type,
)
from e2b._transport import AsyncRetryableTransport, RetryableTransport
from e2b.api.client.client import AuthenticatedClient

__all__ = [
    "async_api_client",
    "async_call",
    "async_retry_sleep",
    "checked",
    "retry_sleep",
    "sync_api_client",
    "sync_call",
]


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
    """The whole call's budget, in every phase.

    The retrying transport takes the longest phase as the deadline for the
    call, retries included (e2b._transport._deadline.overall_timeout). No
    shorter read timeout: the answer to a healthy call (a pause of a large
    sandbox) may take most of the budget to begin, and only the peek at a
    503 body has a budget of its own, which the transport enforces.
    """
    return httpx.Timeout(config.request_timeout)


def _sync_transport(config: ConnectionConfig) -> httpx.BaseTransport:
    # A module global is looked up per call, so a test's replacement takes effect.
    inner, sleep = config.transport, retry_sleep
    if inner is None:
        from e2b._transport import _factory  # pyqwest is imported on the first call

        # No pyqwest `read_timeout`: it is an idle timeout on every read, the
        # wait for the answer included; the time left bounds each exchange.
        return _factory.default_transport(sleep=sleep, connect_timeout=config.request_timeout)
    if not isinstance(inner, httpx.BaseTransport):
        raise TypeError("Sandbox needs a sync httpx transport; use AsyncSandbox for async ones")
    return RetryableTransport(_Borrowed(inner), sleep=sleep)


def _async_transport(config: ConnectionConfig) -> httpx.AsyncBaseTransport:
    inner, sleep = config.transport, async_retry_sleep
    if inner is None:
        from e2b._transport import _factory

        return _factory.default_async_transport(sleep=sleep, connect_timeout=config.request_timeout)
    if not isinstance(inner, httpx.AsyncBaseTransport):
        raise TypeError("AsyncSandbox needs an async httpx transport; use Sandbox for sync ones")
    return AsyncRetryableTransport(_AsyncBorrowed(inner), sleep=sleep)


def _headers(config: ConnectionConfig) -> dict[str, str]:
    if not config.api_key and not config.debug:
        raise AuthenticationException("no API key: pass api_key=... or set the E2B_API_KEY environment variable")
    return {**config.headers, "X-API-Key": config.api_key or ""}


def _generated_client(config: ConnectionConfig) -> AuthenticatedClient:
    # raise_on_unexpected_status stays off: the SDK checks the status itself
    # (`checked`) before the generated parser sees a body.
    return AuthenticatedClient(base_url=config.api_url, token=config.api_key or "")


def sync_api_client(config: ConnectionConfig, expected: Collection[int] | None = None) -> AuthenticatedClient:
    """A generated client over a fresh `httpx.Client`; close it after the call.

    With `expected`, every response is `checked` against it.
    """

    def check(response: httpx.Response) -> None:
        response.read()  # hooks run before httpx reads the body
        checked(response, expected or ())

    return _generated_client(config).set_httpx_client(
        httpx.Client(
            base_url=config.api_url,
            headers=_headers(config),
            timeout=_timeout(config),
            transport=_sync_transport(config),
            event_hooks={} if expected is None else {"response": [check]},
        )
    )


def async_api_client(config: ConnectionConfig, expected: Collection[int] | None = None) -> AuthenticatedClient:
    """A generated client over a fresh `httpx.AsyncClient`; close it after the call.

    With `expected`, every response is `checked` against it.
    """

    async def check(response: httpx.Response) -> None:
        await response.aread()
        checked(response, expected or ())

    return _generated_client(config).set_async_httpx_client(
        httpx.AsyncClient(
            base_url=config.api_url,
            headers=_headers(config),
            timeout=_timeout(config),
            transport=_async_transport(config),
            event_hooks={} if expected is None else {"response": [check]},
        )
    )


def checked(response: httpx.Response, expected: Collection[int]) -> httpx.Response:
    """The response if its status is one the call site handles, else its exception.

    The generated parser assumes every documented error body is a well-formed
    `Error` and fails on anything else, so it only ever sees these statuses.
    """
    # An expected status with a body that is not JSON is a proxy, captive
    # portal or wrong URL answering with a web page: say so, instead of
    # letting the JSON parser fail on it.
    if response.status_code not in expected or (
        response.content and not is_json_media_type(response.headers.get("content-type"))
    ):
        raise handle_api_exception(response)
    return response


def _timeout_exception(error: httpx.TimeoutException) -> TimeoutException:
    return TimeoutException(f"no answer from the API in time: {error}")


@contextmanager
def sync_call(config: ConnectionConfig, expected: Collection[int]) -> Iterator[AuthenticatedClient]:
    """The client for one call whose answer must have one of the `expected` statuses."""
    try:
        with sync_api_client(config, expected) as client:
            yield client
    except httpx.TimeoutException as error:
        raise _timeout_exception(error) from error


@asynccontextmanager
async def async_call(config: ConnectionConfig, expected: Collection[int]) -> AsyncIterator[AuthenticatedClient]:
    """The client for one call whose answer must have one of the `expected` statuses."""
    try:
        async with async_api_client(config, expected) as client:
            yield client
    except httpx.TimeoutException as error:
        raise _timeout_exception(error) from error
