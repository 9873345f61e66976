"""One sandbox's envd: the Connect clients, the HTTP client for /files and /health, and their failures.

Connect goes over pyqwest (connectrpc's transport); /files and /health over
httpx with the SDK's retrying transport (`e2b._http`), as the control plane.
Unary calls that can be sent twice (List, Stat, ListDir, Update) are retried
on a busy or unreachable answer with the control plane's backoff; a stream is
opened exactly once: a second Start would run the command twice. Every
failure goes through `e2b.sandbox.envd_errors`, after a /health probe when
the answer leaves the sandbox's state open.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import Any, TypeVar

import httpx
import pyqwest
from connectrpc.code import Code
from connectrpc.errors import ConnectError

from e2b import _http
from e2b._config import ConnectionConfig
from e2b._exceptions import NotFoundException, TimeoutException
from e2b._transport import _exit_guard
from e2b._transport._retry_rules import RetryPolicy, retry_delay
from e2b.envd.filesystem.filesystem_connect import FilesystemClient
from e2b.envd.process.process_connect import ProcessClient
from e2b.sandbox import envd_errors
from e2b.sandbox._flavour_async import steps as _flavour
from e2b.sandbox.arguments import timeout_ms
from e2b.sandbox.envd_endpoint import HEALTH_ROUTE, KEEPALIVE_PING_HEADER, KEEPALIVE_PING_INTERVAL, SandboxEndpoint

__all__ = ["EnvdClient"]

R = TypeVar("R")
# Codes a proxy or a busy envd answers before doing anything: the same request may go again.
CONNECT_TIMEOUT_HEADER = "Connect-Timeout-Ms"
_RETRYABLE = frozenset({Code.UNAVAILABLE, Code.RESOURCE_EXHAUSTED})


def _may_resend(error: BaseException) -> bool:
    if not isinstance(error, ConnectError) or error.code not in _RETRYABLE:
        return False
    if envd_errors.SANDBOX_NOT_FOUND_MESSAGE in error.message:
        return False  # the sandbox is gone: a retry only delays the answer
    cause = error.__cause__
    # A dropped connection after the request went out is a failure; a refused one sent nothing.
    return cause is None or isinstance(cause, ConnectionRefusedError) or not envd_errors.is_transport_failure(error)


def _uncompressed() -> dict[str, Any]:
    """Neither direction compressed, as e2b 2.x's envd clients: connectrpc's default accepts gzip answers,
    and a server that honours it gzips every message of a stream (a command's start, its end, each piece
    of output), costing both sides CPU for messages of a few bytes."""
    return {"send_compression": None, "accept_compression": ()}


class EnvdClient:
    """The clients of one sandbox's envd, made on first use; `close()` releases them."""

    def __init__(self, endpoint: SandboxEndpoint) -> None:
        self.endpoint = endpoint
        self._pyqwest: pyqwest.Client | None = None
        self._process: ProcessClient | None = None
        self._filesystem: FilesystemClient | None = None
        self._http: httpx.AsyncClient | None = None

    def _connect_client(self) -> pyqwest.Client:
        if self._pyqwest is None:
            _exit_guard.install()
            self._pyqwest = pyqwest.Client(pyqwest.HTTPTransport())
        return self._pyqwest

    @property
    def process(self) -> ProcessClient:
        if self._process is None:
            self._process = ProcessClient(self.endpoint.envd_url, http_client=self._connect_client(), **_uncompressed())
        return self._process

    @property
    def filesystem(self) -> FilesystemClient:
        if self._filesystem is None:
            self._filesystem = FilesystemClient(
                self.endpoint.envd_url, http_client=self._connect_client(), **_uncompressed()
            )
        return self._filesystem

    @property
    def http(self) -> httpx.AsyncClient:
        """The HTTP client for /files and /health, over the SDK's retrying transport."""
        if self._http is None:
            config = self.endpoint.config
            self._http = _flavour.http_client(
                base_url=self.endpoint.envd_url,
                headers=self.endpoint.headers(),
                transport=_http._async_transport(config),
                timeout=httpx.Timeout(config.request_timeout),
            )
        return self._http

    def headers(self, user: str | None = None, *, user_given: bool = False) -> dict[str, str]:
        """A Connect call's headers: routing and token, and the user's credentials when the call takes a user."""
        headers = self.endpoint.headers()
        if user_given:
            headers.update(self.endpoint.user_headers(user))
        return headers

    def stream_headers(
        self, user: str | None = None, *, user_given: bool = False, stream_timeout: float | None
    ) -> dict[str, str]:
        """A stream's headers: a call's, its keep-alive, and its deadline (`Connect-Timeout-Ms`).

        The deadline goes as the header, for envd to end the stream at, not as connectrpc's
        `timeout_ms`: that one is a timer of the task that opened the stream, and a handle reads
        its stream from another task (its pump), where that timer never fires.
        """
        headers = self.headers(user, user_given=user_given)
        headers[KEEPALIVE_PING_HEADER] = str(KEEPALIVE_PING_INTERVAL)
        milliseconds = timeout_ms(stream_timeout)
        if milliseconds is not None:
            headers[CONNECT_TIMEOUT_HEADER] = str(milliseconds)
        return headers

    def stream_options(self, stream_timeout: float | None) -> dict[str, Any]:
        """A stream call's options: the deadline as the flavour's client keeps it (`_flavour.stream_options`)."""
        return _flavour.stream_options(timeout_ms(stream_timeout))

    def request_timeout(self, request_timeout: float | None) -> float | None:
        """A call's `request_timeout`: the one given (0: no limit), else the connection's."""
        if request_timeout is None:
            return self.endpoint.config.request_timeout
        return ConnectionConfig._timeout(request_timeout)

    async def unary(
        self,
        call: _flavour.Routine[..., R],
        request: Any,
        *,
        headers: dict[str, str],
        request_timeout: float | None,
        idempotent: bool,
        not_found: type[NotFoundException] = NotFoundException,
        answers: Mapping[Code, Any] | None = None,
    ) -> R:
        """`call(request)`, retried when `idempotent` and the answer was busy; failures mapped.

        An error whose code is in `answers` is not one: the call returns what `answers` gives it.
        """
        timeout = self.request_timeout(request_timeout)
        config = self.endpoint.config
        policy = RetryPolicy() if config.retries is None else replace(RetryPolicy(), retries=config.retries)
        deadline = None if timeout is None else time.monotonic() + timeout
        attempt = 0
        while True:
            left = None if deadline is None else max(0.001, deadline - time.monotonic())
            try:
                return await _flavour.call(call, request, headers=headers, timeout_ms=timeout_ms(left))
            except ConnectError as error:
                if answers and error.code in answers:
                    return answers[error.code]  # type: ignore[no-any-return]
                delay = retry_delay(policy, attempt, None, random.random())
                fits = deadline is None or time.monotonic() + delay < deadline
                if idempotent and attempt < policy.retries and fits and _may_resend(error):
                    attempt += 1
                    await _http.async_retry_sleep(delay)  # tests replace it, as the control plane's
                    continue
                raise await self.failure(error, not_found) from None

    async def failure(
        self, error: BaseException, not_found: type[NotFoundException] = NotFoundException
    ) -> BaseException:
        """The exception for a failed call, after a /health probe when the answer leaves the state open."""
        running: bool | None = None
        if envd_errors.needs_probe(error):
            try:
                running = await self.health(envd_errors.HEALTH_PROBE_TIMEOUT, retries=False)
            except Exception as probe_error:
                return envd_errors.unreachable(error, probe_error)
        return envd_errors.rpc_exception(error, sandbox_running=running, not_found=not_found)

    async def http_failure(self, error: httpx.TransportError) -> BaseException:
        """The exception for a /files request that got no answer: a timeout, or a probe decides."""
        if isinstance(error, httpx.TimeoutException):
            return TimeoutException(f"no answer from the sandbox in time: {error}; pass a longer request_timeout")
        try:
            running = await self.health(envd_errors.HEALTH_PROBE_TIMEOUT, retries=False)
        except Exception as probe_error:
            return envd_errors.unreachable(error, probe_error)
        return envd_errors.transport_exception(error, running)

    async def is_running(self, request_timeout: float | None) -> bool:
        """`is_running()`: envd answers /health; False when the proxy answers 502 for it."""
        try:
            response = await self.http.get(HEALTH_ROUTE, timeout=self.request_timeout(request_timeout))
        except httpx.TransportError as error:
            raise await self.http_failure(error) from None
        if response.status_code == 502:
            return False
        if not 200 <= response.status_code < 300:
            raise envd_errors.http_exception(response.status_code, response.content)
        return True

    async def health(self, timeout: float | None, *, retries: bool = True) -> bool | None:
        """What envd's /health says: True running, False gone, None unknown."""
        client = (
            self.http
            if retries
            else httpx.AsyncClient(base_url=self.endpoint.envd_url, headers=self.endpoint.headers())
        )
        try:
            response = await client.get(HEALTH_ROUTE, timeout=timeout)
        finally:
            if client is not self._http:
                await client.aclose()
        return envd_errors.health_state(response.status_code, response.content)

    async def stream_items(
        self,
        stream: AsyncIterator[R],
        not_found: type[NotFoundException] = NotFoundException,
        *,
        stream_timeout: float | None = None,
    ) -> AsyncIterator[R]:
        """The items of an open stream; a failure is raised as the SDK's exception.

        `stream_timeout` (seconds, None or 0: no limit) is the stream's `timeout`, counted from now,
        which the client enforces itself: envd ends the stream at `Connect-Timeout-Ms`, but a network
        that goes silent (a proxy that stops forwarding) leaves no end to read.
        """
        deadline = time.monotonic() + stream_timeout if stream_timeout else None
        try:
            async for item in _flavour.items(stream, deadline):
                yield item
        except (ConnectError, TimeoutError) as error:
            # The deadline's end: pyqwest's DEADLINE_EXCEEDED (its timer may fire a hair before this
            # clock says the deadline passed), or the read cancelled at it (the async flavour).
            expired = isinstance(error, TimeoutError) or error.code is Code.DEADLINE_EXCEEDED
            if deadline is not None and (expired or time.monotonic() >= deadline):
                raise _stream_late(stream_timeout) from None
            if not isinstance(error, ConnectError):
                raise
            raise await self.failure(error, not_found) from None
        finally:
            # Closing this generator (a handle's disconnect) must end the HTTP stream under it.
            aclose = getattr(stream, "aclose", None)
            # Still running, it cannot be closed: the sync flavour's step abandoned to Ctrl-C goes
            # on in its worker (e2b.sandbox._flavour_sync.steps) until the stream ends.
            if aclose is not None:
                with contextlib.suppress(RuntimeError, ValueError):
                    await aclose()

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        self._process = self._filesystem = None
        self._pyqwest = None


def _stream_late(stream_timeout: float | None) -> TimeoutException:
    return TimeoutException(
        f"the stream outlasted its timeout ({stream_timeout:g} s) and the SDK ended it; "
        "pass a longer `timeout`, or 0 for no limit"
    )
