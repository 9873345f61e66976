"""The one place that builds the HTTP stack under the generated API client.

Every request goes through the retrying transport (`e2b._transport`), over pyqwest or an injected
transport (wrapped, never closed). `sync_call`/`async_call` raise the SDK's exceptions, never
httpx's, and read an answer only up to `MAX_ANSWER_BYTES`.

How it works, and why: docs/maintainers/packages.md, "packages/python-sdk/e2b/_http.py".
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Collection, Mapping
from contextlib import asynccontextmanager
from dataclasses import replace
from types import TracebackType

import httpx

from e2b._config import ConnectionConfig
from e2b._exceptions import (
    SHAPE_ERRORS,
    AuthenticationException,
    ConnectionException,
    InvalidArgumentException,
    SandboxException,
    TimeoutException,
    UnexpectedResponseException,
    handle_api_exception,
    is_json_media_type,
    not_json_message,
    not_the_api,
)
from e2b._interruptible import InterruptibleClient
from e2b._transport import AsyncRetryableTransport, RetryableTransport, RetryPolicy
from e2b._transport._peek import declared_length
from e2b.api.client.client import AuthenticatedClient

__all__ = [
    "MAX_ANSWER_BYTES",
    "async_api_client",
    "async_call",
    "async_retry_sleep",
    "checked",
    "retry_sleep",
    "sync_api_client",
    "sync_call",
]


# The most of one answer's body the SDK reads into memory, decoded (gzip undone): the API's
# largest answers, a page of 100 sandboxes with their metadata, are a few hundred KiB. A
# larger body raises UnexpectedResponseException: refused on its Content-Length before any
# of it is read, or once that much of a body without one (chunked) has arrived.
# Documented in docs/users/sdk.md ("Answers that are not the API's").
MAX_ANSWER_BYTES = 16 * 1024 * 1024


def retry_sleep(seconds: float) -> None:
    """How the sync transport waits between retries; tests replace it."""
    time.sleep(seconds)


async def async_retry_sleep(seconds: float) -> None:
    """How the async transport waits between retries; tests replace it."""
    await asyncio.sleep(seconds)


class _Borrowed(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner
        self._closed = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        # Closed with its call's client: a call abandoned by Ctrl-C goes on in a worker
        # (e2b._interruptible), which must not send a retry on its behalf, as the
        # default transport, closed, does not either.
        if self._closed:
            raise RuntimeError("the call this transport served was abandoned")
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._closed = True  # the transport itself belongs to its owner


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
            _read_bounded(response)  # hooks run before httpx reads the body
            checked(response, expected)

    return _generated_client(config).set_httpx_client(
        InterruptibleClient(
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
            await _aread_bounded(response)
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


def _too_large(response: httpx.Response, declared: int | None) -> UnexpectedResponseException:
    size = f"declares {declared} bytes" if declared is not None else "goes on past that"
    return not_the_api(
        f"its body {size}, over the {MAX_ANSWER_BYTES} bytes the SDK reads (e2b._http.MAX_ANSWER_BYTES)",
        status_code=response.status_code,
    )


def _refuse_declared(response: httpx.Response) -> None:
    declared = declared_length(response.headers.get("content-length"))
    if declared is not None and declared > MAX_ANSWER_BYTES:
        raise _too_large(response, declared)


def _read_bounded(response: httpx.Response) -> None:
    """`response.read()`, but never more than `MAX_ANSWER_BYTES` of decoded body.

    A body over the cap raises before it is read (its Content-Length) or as
    soon as the cap is passed (a chunked one); httpx closes the response on the
    way out of the hook, and the connection with it.
    """
    _refuse_declared(response)
    chunks: list[bytes] = []
    size = 0
    body = response.iter_bytes()
    try:
        for chunk in body:
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise _too_large(response, None)
            chunks.append(chunk)
    finally:
        body.close()  # type: ignore[attr-defined]  # a generator: ends the raw read it holds
    # What read() would have stored: the body is the response's from now on (`content`, `json()`).
    response._content = b"".join(chunks)


async def _aread_bounded(response: httpx.Response) -> None:
    """`response.aread()`, bounded as `_read_bounded` is."""
    _refuse_declared(response)
    chunks: list[bytes] = []
    size = 0
    body = response.aiter_bytes()
    try:
        async for chunk in body:
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise _too_large(response, None)
            chunks.append(chunk)
    finally:
        await body.aclose()  # type: ignore[attr-defined]
    response._content = b"".join(chunks)


def checked(response: httpx.Response, expected: Collection[int]) -> httpx.Response:
    """The response if its status is one the call site handles, else its exception.

    The generated parser assumes every documented error body is a well-formed
    `Error` and fails on anything else, so it only ever sees these statuses.
    A success (2xx) that is not JSON, or whose status the call does not
    expect, is not the API's answer: `UnexpectedResponseException`.
    """
    status = response.status_code
    content_type = response.headers.get("content-type")
    not_json = bool(response.content) and not is_json_media_type(content_type)
    if 200 <= status < 300:
        if not_json:
            # A proxy, captive portal or wrong URL answering with a web page: say so,
            # instead of letting the JSON parser fail on it.
            raise not_the_api(not_json_message(status, content_type), status_code=status)
        if status not in expected:
            wanted = " or ".join(map(str, sorted(expected)))
            raise not_the_api(f"the API answered {status} where this call expects {wanted}", status_code=status)
    if status not in expected or not_json:
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


def _not_the_api(error: Exception) -> SandboxException:
    return not_the_api(f"{type(error).__name__}: {error}")


def sync_call(
    config: ConnectionConfig, expected: Collection[int], headers: Mapping[str, str] | None = None
) -> _SyncCall:
    """The client for one call whose answer must have one of the `expected` statuses."""
    return _SyncCall(config, expected, headers)


class _SyncCall:
    """`sync_call`'s context manager: a class, not a generator.

    A KeyboardInterrupt during the call is raised again from `__exit__` with a
    fresh traceback, so that the user's traceback ends at the SDK's method
    instead of running on through contextlib, httpx and the worker's wait
    (`e2b._interruptible`).
    """

    def __init__(
        self, config: ConnectionConfig, expected: Collection[int], headers: Mapping[str, str] | None = None
    ) -> None:
        self._config = config
        self._client = sync_api_client(config, expected, headers)

    def __enter__(self) -> AuthenticatedClient:
        return self._client.__enter__()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._client.__exit__(kind, error, traceback)
        if isinstance(error, KeyboardInterrupt):
            raise error.with_traceback(None) from None
        if isinstance(error, httpx.TransportError):
            raise _transport_exception(error, self._config) from error
        # The generated parser's, on a 2xx body of another shape: the block holds only the call.
        if isinstance(error, SHAPE_ERRORS):
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
    # The generated parser's, on a 2xx body of another shape: the block holds only the call.
    except SHAPE_ERRORS as error:
        raise _not_the_api(error) from error
