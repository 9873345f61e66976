"""The one place that builds the HTTP stack under the generated API client.

Every request goes through the retrying transport (`e2b._transport`): by
default over pyqwest, or over a transport injected with the `transport`
option, which the SDK wraps (unless it already retries) but never closes,
since its owner may reuse it.

`sync_call`/`async_call` give one SDK call its client: a status it does not
expect is raised as the SDK's exception before the generated parser sees the
body (that parser fails on a malformed error body), a timeout is raised as
`e2b.TimeoutException` and any other transport failure as
`e2b.ConnectionException`, so no httpx exception reaches the caller.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Collection, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace

import httpx

from e2b._config import ConnectionConfig
from e2b._exceptions import (
    AuthenticationException,
    ConnectionException,
    InvalidArgumentException,
    SandboxException,
    TimeoutException,
    handle_api_exception,
    is_json_media_type,
)
from e2b._transport import AsyncRetryableTransport, RetryableTransport, RetryPolicy
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


def _policy(config: ConnectionConfig) -> RetryPolicy:
    policy = RetryPolicy()
    return policy if config.retries is None else replace(policy, retries=config.retries)


def _already_retrying(config: ConnectionConfig, retrying: bool) -> bool:
    """A retrying transport passed in keeps its own policy: wrapping it again would multiply the attempts."""
    if retrying and config.retries is not None:
        raise InvalidArgumentException(
            "retries= cannot change the policy of a retrying transport passed as transport=: "
            "pass retries to default_transport(...) instead"
        )
    return retrying


def _sync_transport(config: ConnectionConfig) -> httpx.BaseTransport:
    # A module global is looked up per call, so a test's replacement takes effect.
    inner, sleep = config.transport, retry_sleep
    if inner is None:
        from e2b._transport import _factory  # pyqwest is imported on the first call

        # No pyqwest `read_timeout`: it is an idle timeout on every read, the
        # wait for the answer included; the time left bounds each exchange.
        return _factory.default_transport(sleep=sleep, connect_timeout=config.request_timeout, policy=_policy(config))
    if not isinstance(inner, httpx.BaseTransport):
        raise InvalidArgumentException("Sandbox needs a sync httpx transport; use AsyncSandbox for async ones")
    if _already_retrying(config, isinstance(inner, RetryableTransport)):
        return _Borrowed(inner)
    return RetryableTransport(_Borrowed(inner), _policy(config), sleep=sleep)


def _async_transport(config: ConnectionConfig) -> httpx.AsyncBaseTransport:
    inner, sleep = config.transport, async_retry_sleep
    if inner is None:
        from e2b._transport import _factory

        return _factory.default_async_transport(
            sleep=sleep, connect_timeout=config.request_timeout, policy=_policy(config)
        )
    if not isinstance(inner, httpx.AsyncBaseTransport):
        raise InvalidArgumentException("AsyncSandbox needs an async httpx transport; use Sandbox for sync ones")
    if _already_retrying(config, isinstance(inner, AsyncRetryableTransport)):
        return _AsyncBorrowed(inner)
    return AsyncRetryableTransport(_AsyncBorrowed(inner), _policy(config), sleep=sleep)


def _headers(config: ConnectionConfig, extra: Mapping[str, str]) -> dict[str, str]:
    if not config.api_key:
        raise AuthenticationException("no API key: pass api_key=... or set the E2B_API_KEY environment variable")
    return {**config.headers, **extra, "X-API-Key": config.api_key}


def _log_request(config: ConnectionConfig, request: httpx.Request) -> None:
    if config.logger is not None:
        config.logger.info("e2b request: %s %s", request.method, request.url)


def _log_response(config: ConnectionConfig, response: httpx.Response) -> None:
    if config.logger is not None:
        config.logger.info(
            "e2b response: %s %s -> %d", response.request.method, response.request.url, response.status_code
        )


def _generated_client(config: ConnectionConfig) -> AuthenticatedClient:
    # raise_on_unexpected_status stays off: the SDK checks the status itself
    # (`checked`) before the generated parser sees a body.
    return AuthenticatedClient(base_url=config.api_url, token=config.api_key or "")


def sync_api_client(
    config: ConnectionConfig, expected: Collection[int] | None = None, headers: Mapping[str, str] | None = None
) -> AuthenticatedClient:
    """A generated client over a fresh `httpx.Client`; close it after the call.

    With `expected`, every response is `checked` against it. `headers` are
    sent with every request of the call, its retries included.
    """

    def on_request(request: httpx.Request) -> None:
        _log_request(config, request)

    def on_response(response: httpx.Response) -> None:
        _log_response(config, response)
        if expected is not None:
            response.read()  # hooks run before httpx reads the body
            checked(response, expected)

    return _generated_client(config).set_httpx_client(
        httpx.Client(
            base_url=config.api_url,
            headers=_headers(config, headers or {}),
            timeout=_timeout(config),
            transport=_sync_transport(config),
            event_hooks={"request": [on_request], "response": [on_response]},
        )
    )


def async_api_client(
    config: ConnectionConfig, expected: Collection[int] | None = None, headers: Mapping[str, str] | None = None
) -> AuthenticatedClient:
    """A generated client over a fresh `httpx.AsyncClient`; close it after the call.

    With `expected`, every response is `checked` against it.
    """

    async def on_request(request: httpx.Request) -> None:
        _log_request(config, request)

    async def on_response(response: httpx.Response) -> None:
        _log_response(config, response)
        if expected is not None:
            await response.aread()
            checked(response, expected)

    return _generated_client(config).set_async_httpx_client(
        httpx.AsyncClient(
            base_url=config.api_url,
            headers=_headers(config, headers or {}),
            timeout=_timeout(config),
            transport=_async_transport(config),
            event_hooks={"request": [on_request], "response": [on_response]},
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


def _transport_exception(error: httpx.TransportError, config: ConnectionConfig) -> Exception:
    if isinstance(error, httpx.TimeoutException):
        return TimeoutException(f"no answer from the API in time: {error}")
    detail = str(error) or type(error).__name__
    return ConnectionException(
        f"could not talk to the API at {config.api_url}: {detail}; "
        "check api_url (E2B_API_URL), domain (E2B_DOMAIN) and the network"
    )


# What the generated parser raises on a 2xx body that is not the shape the spec promises
# (a missing field, an unknown enum value): the block of a call holds only that call.
_PARSER_ERRORS = (KeyError, TypeError, ValueError, AttributeError)


def _not_the_api(error: Exception) -> SandboxException:
    return SandboxException(f"the answer is not the API's: {type(error).__name__}: {error}"[:500])


@contextmanager
def sync_call(
    config: ConnectionConfig, expected: Collection[int], headers: Mapping[str, str] | None = None
) -> Iterator[AuthenticatedClient]:
    """The client for one call whose answer must have one of the `expected` statuses."""
    try:
        with sync_api_client(config, expected, headers) as client:
            yield client
    except httpx.TransportError as error:
        raise _transport_exception(error, config) from error
    except _PARSER_ERRORS as error:
        raise _not_the_api(error) from error


@asynccontextmanager
async def async_call(
    config: ConnectionConfig, expected: Collection[int], headers: Mapping[str, str] | None = None
) -> AsyncIterator[AuthenticatedClient]:
    """The client for one call whose answer must have one of the `expected` statuses."""
    try:
        async with async_api_client(config, expected, headers) as client:
            yield client
    except httpx.TransportError as error:
        raise _transport_exception(error, config) from error
    except _PARSER_ERRORS as error:
        raise _not_the_api(error) from error
