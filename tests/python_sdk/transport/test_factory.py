"""Tests for the default transports built over pyqwest (``_factory``)."""

from __future__ import annotations

import asyncio
import atexit
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
import uvicorn
from e2b._transport import (
    AsyncRetryableTransport,
    RetryableTransport,
    RetryPolicy,
    _exit_guard,
    _factory,
    default_async_transport,
    default_transport,
)
from pyqwest.httpx import AsyncPyqwestTransport, PyqwestTransport

from ._server import TestServer


def test_default_transport_wraps_pyqwest() -> None:
    transport = default_transport(retries=5, policy=RetryPolicy(backoff_base=0.1))
    assert isinstance(transport, RetryableTransport)
    assert isinstance(transport.inner, PyqwestTransport)
    assert transport.policy.retries == 5
    assert transport.policy.backoff_base == 0.1
    transport.close()


def test_default_transport_keeps_policy_retries_when_not_overridden() -> None:
    transport = default_transport(policy=RetryPolicy(retries=1))
    assert transport.policy.retries == 1
    assert default_transport().policy == RetryPolicy()
    transport.close()


@pytest.mark.anyio
async def test_default_async_transport_wraps_pyqwest() -> None:
    transport = default_async_transport(retries=0)
    assert isinstance(transport, AsyncRetryableTransport)
    assert isinstance(transport.inner, AsyncPyqwestTransport)
    assert transport.policy.retries == 0
    async with httpx.AsyncClient(transport=transport):
        pass
    # Closing the client closed the pyqwest transport the factory made.
    with pytest.raises(RuntimeError, match="closed transport"):
        await transport.handle_async_request(httpx.Request("GET", "http://127.0.0.1:9/"))


def test_closing_the_client_closes_the_owned_pyqwest_transport() -> None:
    transport = default_transport(retries=0)
    with httpx.Client(transport=transport):
        pass
    with pytest.raises(RuntimeError, match="closed transport"):
        transport.handle_request(httpx.Request("GET", "http://127.0.0.1:9/"))


# Idle connections. A request written into a pooled connection as the server
# closes it for idleness meets the close instead of an answer. `TestServer`'s
# `idle_close` makes that crossing certain: the server closes, unanswered, a
# request on a connection idle that long, and sends no close beforehand that
# the client could notice. The pool must have let the connection go first.
IDLE = 0.1


async def _post_twice(
    transport: RetryableTransport | AsyncRetryableTransport, url: str, between: Callable[[], None]
) -> httpx.Response:
    """POST, `between()` (blocking; the async flavour runs it in a thread), POST again on the same client:
    the second answer."""
    if isinstance(transport, AsyncRetryableTransport):
        async with httpx.AsyncClient(transport=transport) as client:
            assert (await client.post(url, json={})).status_code == 200
            await asyncio.to_thread(between)
            return await client.post(url, json={})
    with httpx.Client(transport=transport) as client:
        assert client.post(url, json={}).status_code == 200
        between()
        return client.post(url, json={})


def _until_the_client_closed_it(server: TestServer) -> Callable[[], None]:
    """Until the pool has let its idle connection go, which the server sees as the client's close: the
    pool's own timer, observed instead of outwaited (a sleep past it failed under a profiler at 3x)."""

    def wait() -> None:
        assert server.wait_live(at_most=0, timeout=30) == 0, "the pool kept its idle connection"

    return wait


def _past_the_server_s_idle_close() -> None:
    time.sleep(2 * IDLE)  # a sleep is never shorter than asked: the next request always crosses the close


@pytest.fixture
def closing_server() -> Iterator[TestServer]:
    server = TestServer()
    server.idle_close = IDLE  # as soon as the client may have dropped the connection
    yield server
    server.close()


FACTORIES: dict[str, Callable[..., RetryableTransport | AsyncRetryableTransport]] = {
    "sync": default_transport,
    "async": default_async_transport,
}


@pytest.mark.anyio
@pytest.mark.parametrize("flavour", FACTORIES)
async def test_a_connection_idle_past_the_pool_idle_timeout_is_not_reused(
    closing_server: TestServer, flavour: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_factory, "POOL_IDLE_TIMEOUT", IDLE)  # the SDK's default, shortened
    transport = FACTORIES[flavour](retries=0)
    response = await _post_twice(transport, closing_server.url + "/ok", _until_the_client_closed_it(closing_server))
    assert response.status_code == 200
    # A new connection carried the second request; the idle one never did.
    assert (closing_server.accepted, closing_server.crossed, closing_server.hits["/ok"]) == (2, 0, 2)


@pytest.mark.anyio
@pytest.mark.parametrize("flavour", FACTORIES)
async def test_a_pool_keeping_idle_connections_longer_than_the_server_meets_its_close(
    closing_server: TestServer, flavour: str
) -> None:
    # pyqwest's own default (90 s), overriding the SDK's through pyqwest_options.
    transport = FACTORIES[flavour](retries=0, pool_idle_timeout=90.0)
    # The close itself, not any transport error: a timeout (a starved server) would say nothing of the pool.
    with pytest.raises(httpx.RemoteProtocolError, match="connection closed before message completed"):
        await _post_twice(transport, closing_server.url + "/ok", _past_the_server_s_idle_close)
    # The POST reached the server but not its handler: nothing re-sent it.
    assert (closing_server.accepted, closing_server.crossed, closing_server.hits["/ok"]) == (1, 1, 1)


def test_the_pool_lets_a_connection_go_before_common_servers_close_it() -> None:
    # uvicorn's default idle close, as Node.js's and Apache's; with a second
    # for the server's close to reach the client.
    assert _factory.POOL_IDLE_TIMEOUT <= uvicorn.Config("unloaded:app").timeout_keep_alive - 1


def test_an_async_transport_lets_pyqwest_threads_finish_before_the_interpreter_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registered: list[object] = []
    monkeypatch.setattr(atexit, "register", registered.append)  # the module _exit_guard registers with
    monkeypatch.setattr(_exit_guard, "_installed", False)
    default_transport().close()  # the sync transport reports on the calling thread: nothing to wait for
    assert registered == []
    for _ in range(2):
        asyncio.run(default_async_transport().aclose())
    assert registered == [_exit_guard.wait_for_reporting_threads]  # once per process


@pytest.mark.anyio
@pytest.mark.parametrize("timeout", [float("inf"), 1e308])
async def test_a_client_timeout_no_duration_holds_does_not_panic_pyqwest(timeout: float) -> None:
    """pyqwest panicked ("cannot convert float seconds to Duration") on the timeout it was handed."""
    server = TestServer()
    try:
        with httpx.Client(transport=default_transport(retries=0), timeout=timeout) as client:
            assert client.get(server.url + "/ok").text == "ok"
        async with httpx.AsyncClient(transport=default_async_transport(retries=0), timeout=timeout) as aclient:
            assert (await aclient.get(server.url + "/ok")).text == "ok"
    finally:
        server.close()
