"""e2b._http: the HTTP stack under the generated client."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import pytest
from e2b import (
    AsyncSandbox,
    AuthenticationException,
    ConnectionConfig,
    InvalidArgumentException,
    Sandbox,
    SandboxException,
    SandboxNotFoundException,
    TimeoutException,
)
from e2b._http import async_api_client, checked, sync_api_client, sync_call
from e2b._transport import AsyncRetryableTransport, RetryableTransport

from .transport._server import TestServer, _whole

pytestmark = pytest.mark.usefixtures("clean_env")


class Recording(httpx.MockTransport):
    closed = False

    def close(self) -> None:
        self.closed = True


def transport_of(client: httpx.Client | httpx.AsyncClient) -> object:
    return client._transport


def test_injected_transport_is_wrapped_in_retries_and_never_closed() -> None:
    inner = Recording(lambda request: httpx.Response(204))
    client = sync_api_client(ConnectionConfig(api_key="k", transport=inner))
    assert isinstance(transport_of(client.get_httpx_client()), RetryableTransport)
    with client:
        client.get_httpx_client().get("/ping")
    assert not inner.closed


@pytest.mark.anyio
async def test_async_injected_transport_is_wrapped_in_retries() -> None:
    client = async_api_client(
        ConnectionConfig(api_key="k", transport=httpx.MockTransport(lambda r: httpx.Response(204)))
    )
    assert isinstance(transport_of(client.get_async_httpx_client()), AsyncRetryableTransport)
    async with client:
        response = await client.get_async_httpx_client().get("/ping")
    assert response.status_code == 204


def test_default_stack_is_the_retrying_transport() -> None:
    client = sync_api_client(ConnectionConfig(api_key="k"))
    with client:
        assert isinstance(transport_of(client.get_httpx_client()), RetryableTransport)


def test_missing_api_key_is_an_authentication_error() -> None:
    with pytest.raises(AuthenticationException, match="E2B_API_KEY") as caught:
        sync_api_client(ConnectionConfig())
    assert caught.value.status_code is None


def test_debug_defaults_to_a_local_api_and_still_sends_the_key() -> None:
    config = ConnectionConfig(debug=True, api_key="k", transport=httpx.MockTransport(lambda r: httpx.Response(204)))
    http = sync_api_client(config).get_httpx_client()
    assert (str(http.base_url), http.headers["X-API-Key"]) == ("http://localhost:3000", "k")


def test_no_key_is_refused_before_any_request_in_debug_mode_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("E2B_API_KEY", raising=False)
    with pytest.raises(AuthenticationException, match="no API key"):
        sync_api_client(ConnectionConfig(debug=True, transport=httpx.MockTransport(lambda r: httpx.Response(204))))


def test_wrong_flavour_transport_is_refused() -> None:
    class AsyncOnly(httpx.AsyncBaseTransport):
        pass

    with pytest.raises(InvalidArgumentException, match="AsyncSandbox"):
        sync_api_client(ConnectionConfig(api_key="k", transport=AsyncOnly()))


def test_headers_and_timeout_reach_the_httpx_client() -> None:
    config = ConnectionConfig(
        api_key="k", headers={"X-Extra": "1"}, request_timeout=7, transport=Recording(lambda r: httpx.Response(204))
    )
    http = sync_api_client(config).get_httpx_client()
    assert (http.headers["X-Extra"], http.headers["X-API-Key"]) == ("1", "k")
    # The whole call's budget in every phase: the wait for the answer may use all of it.
    assert http.timeout == httpx.Timeout(7)


def test_checked_refuses_a_non_json_success_answer() -> None:
    page = httpx.Response(200, content=b"<html>login</html>", headers={"content-type": "text/html"})
    with pytest.raises(SandboxException) as raised:
        checked(page, {200})
    assert raised.value.status_code == 200
    assert str(raised.value).startswith("the API answered 200 with text/html, not JSON")
    empty = httpx.Response(204)
    assert checked(empty, {204}) is empty
    ok = httpx.Response(200, json=[])
    assert checked(ok, {200}) is ok


def test_a_call_checks_the_status_before_anyone_reads_the_body() -> None:
    config = ConnectionConfig(api_key="k", transport=httpx.MockTransport(lambda r: httpx.Response(404, json={})))
    with pytest.raises(SandboxNotFoundException), sync_call(config, {200}) as client:
        client.get_httpx_client().get("/sandboxes/x")
    ok = ConnectionConfig(api_key="k", transport=httpx.MockTransport(lambda r: httpx.Response(200, json=[1])))
    with sync_call(ok, {200}) as client:
        assert client.get_httpx_client().get("/v2/sandboxes").json() == [1]


def test_a_call_raises_timeouts_as_the_sdks() -> None:
    def stall(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("stalled", request=request)

    config = ConnectionConfig(api_key="k", transport=httpx.MockTransport(stall))
    with pytest.raises(TimeoutException, match="no answer from the API in time: stalled") as raised:
        with sync_call(config, {200}) as client:
            client.get_httpx_client().get("/sandboxes/x")
    assert isinstance(raised.value.__cause__, httpx.ReadTimeout)


@pytest.fixture(scope="module")
def server() -> Iterator[TestServer]:
    srv = TestServer()
    _warm_up(srv)
    yield srv
    srv.close()


def _warm_up(srv: TestServer) -> None:
    """One untimed call on each stack, so that the SDK's lazy imports are not part of a timed call."""
    srv.routes["/sandboxes/warm-up"] = _whole(404, b'{"code": 404, "message": "no such sandbox"}')
    opts = {"api_key": "k", "api_url": srv.url}
    with pytest.raises(SandboxNotFoundException):
        Sandbox.get_info("warm-up", **opts)  # type: ignore[arg-type]

    async def call() -> None:
        with pytest.raises(SandboxNotFoundException):
            await AsyncSandbox.get_info("warm-up", **opts)  # type: ignore[arg-type]

    asyncio.run(call())


# The default stack (pyqwest) over a real socket, as `Sandbox` builds it. A
# call ends within its request_timeout plus this much (closing, scheduling on
# a busy machine); generous, so only a wait of a whole timeout fails it.
SLACK = 0.5


@pytest.mark.anyio
@pytest.mark.parametrize("flavour", ["sync", "async"])
async def test_stalled_503_is_retried_and_the_call_ends_by_its_timeout(server: TestServer, flavour: str) -> None:
    opts = {"api_key": "k", "api_url": server.url, "request_timeout": 2.0}
    before = server.hits["/sandboxes/stalled/pause"]
    started = time.monotonic()
    with pytest.raises(TimeoutException):
        if flavour == "sync":
            Sandbox.pause("stalled", **opts)  # type: ignore[arg-type]
        else:
            await AsyncSandbox.pause("stalled", **opts)  # type: ignore[arg-type]
    elapsed = time.monotonic() - started
    # The first stall costs the peek's own budget (1 s, the floor); the retry gets the rest.
    assert server.hits["/sandboxes/stalled/pause"] - before == 2
    assert elapsed < 2.0 + SLACK


@pytest.mark.anyio
@pytest.mark.parametrize("flavour", ["sync", "async"])
async def test_silent_api_ends_by_the_timeout_not_twice_it(server: TestServer, flavour: str) -> None:
    opts = {"api_key": "k", "api_url": server.url, "request_timeout": 1.0}
    started = time.monotonic()
    with pytest.raises(TimeoutException):
        if flavour == "sync":
            Sandbox.get_info("silent", **opts)  # type: ignore[arg-type]
        else:
            await AsyncSandbox.get_info("silent", **opts)  # type: ignore[arg-type]
    assert time.monotonic() - started < 1.0 + SLACK
