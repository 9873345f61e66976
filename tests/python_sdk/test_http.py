"""e2b._http: the HTTP stack under the generated client."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from e2b import (
    AsyncSandbox,
    AuthenticationException,
    ConnectionConfig,
    InvalidArgumentException,
    Sandbox,
    SandboxNotFoundException,
    ServiceBusyException,
    TimeoutException,
    UnexpectedResponseException,
)
from e2b._http import MAX_ANSWER_BYTES, async_api_client, async_call, checked, sync_api_client, sync_call
from e2b._transport import AsyncRetryableTransport, RetryableTransport

from .transport._server import TestServer, _whole

# The API's own answer about a missing sandbox: a 404 without its error_code is not the API's.
NOT_FOUND = {"code": 404, "message": "no such sandbox", "error_code": "sandbox_not_found"}

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
    with pytest.raises(UnexpectedResponseException) as raised:
        checked(page, {200})
    assert raised.value.status_code == 200
    assert str(raised.value).startswith("the answer is not the API's: the API answered 200 with text/html, not JSON")
    empty = httpx.Response(204)
    assert checked(empty, {204}) is empty
    ok = httpx.Response(200, json=[])
    assert checked(ok, {200}) is ok


def test_a_call_checks_the_status_before_anyone_reads_the_body() -> None:
    config = ConnectionConfig(api_key="k", transport=httpx.MockTransport(lambda r: httpx.Response(404, json=NOT_FOUND)))
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
    srv.routes["/sandboxes/warm-up"] = _whole(404, json.dumps(NOT_FOUND).encode())
    opts = {"api_key": "k", "api_url": srv.url}
    with pytest.raises(SandboxNotFoundException):
        Sandbox.get_info("warm-up", **opts)  # type: ignore[arg-type]

    async def call() -> None:
        with pytest.raises(SandboxNotFoundException):
            await AsyncSandbox.get_info("warm-up", **opts)  # type: ignore[arg-type]

    asyncio.run(call())


# The default stack (pyqwest) over a real socket, as `Sandbox` builds it. A
# call ends within its request_timeout plus this much (closing, scheduling on
# a busy machine); each wrong wait is at least a whole timeout (2 s or more)
# longer, and the stalls 60 s.
SLACK = 1.5


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
    assert elapsed < 2.0 + SLACK  # each attempt given the whole timeout: 4 s; the stall: 60


@pytest.mark.anyio
@pytest.mark.parametrize("flavour", ["sync", "async"])
async def test_silent_api_ends_by_the_timeout_not_twice_it(server: TestServer, flavour: str) -> None:
    opts = {"api_key": "k", "api_url": server.url, "request_timeout": 4.0}
    started = time.monotonic()
    with pytest.raises(TimeoutException):
        if flavour == "sync":
            Sandbox.get_info("silent", **opts)  # type: ignore[arg-type]
        else:
            await AsyncSandbox.get_info("silent", **opts)  # type: ignore[arg-type]
    assert time.monotonic() - started < 4.0 + SLACK  # twice the timeout: 8 s


# --- answers too large to read: e2b._http.MAX_ANSWER_BYTES ------------------------------------

OVER = MAX_ANSWER_BYTES + 1


def _declared_oversize(sock: socket.socket, _q: dict[str, list[str]]) -> bool:
    """A head that declares more than the cap, then no body: a client that waited for it would time out."""
    sock.sendall(f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {OVER}\r\n\r\n".encode())
    sock.settimeout(30)
    try:
        sock.recv(1)  # until the client closes the connection
    except OSError:
        pass
    return False


class _Endless:
    """A chunked JSON body of up to `limit` bytes; `sent` says how much went out before the client hung up."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.sent = 0
        self.done = threading.Event()

    def __call__(self, sock: socket.socket, _q: dict[str, list[str]]) -> bool:
        piece = b"[" + b" " * (64 * 1024 - 2) + b"]"
        try:
            sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
            while self.sent < self.limit:
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.sent += len(piece)
            sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # the client closed the connection: what it should do past the cap
        finally:
            self.done.set()
        return False


@pytest.mark.anyio
@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("stack", ["pyqwest", "httpx"])
async def test_a_declared_oversize_body_is_refused_before_it_is_read(
    server: TestServer, flavour: str, stack: str
) -> None:
    server.routes["/sandboxes/declared-oversize"] = _declared_oversize
    transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None = None
    if stack == "httpx":
        transport = httpx.HTTPTransport() if flavour == "sync" else httpx.AsyncHTTPTransport()
    # The body never comes: reading it would end in a TimeoutException, 30 s later.
    opts = {"api_key": "k", "api_url": server.url, "request_timeout": 30, "transport": transport}
    with pytest.raises(UnexpectedResponseException) as raised:
        if flavour == "sync":
            Sandbox.get_info("declared-oversize", **opts)  # type: ignore[arg-type]
        else:
            await AsyncSandbox.get_info("declared-oversize", **opts)  # type: ignore[arg-type]
    assert raised.value.status_code == 200
    assert str(raised.value) == (
        f"the answer is not the API's: its body declares {OVER} bytes, "
        f"over the {MAX_ANSWER_BYTES} bytes the SDK reads (e2b._http.MAX_ANSWER_BYTES)"
    )


@pytest.mark.anyio
@pytest.mark.parametrize("flavour", ["sync", "async"])
async def test_a_chunked_body_is_read_no_further_than_the_cap(server: TestServer, flavour: str) -> None:
    endless = _Endless(limit=8 * MAX_ANSWER_BYTES)
    server.routes["/sandboxes/chunked-oversize"] = endless
    opts = {"api_key": "k", "api_url": server.url, "request_timeout": 60}
    with pytest.raises(UnexpectedResponseException, match="its body goes on past that, over the 16777216 bytes"):
        if flavour == "sync":
            Sandbox.get_info("chunked-oversize", **opts)  # type: ignore[arg-type]
        else:
            await AsyncSandbox.get_info("chunked-oversize", **opts)  # type: ignore[arg-type]
    # The client hung up past the cap: the server's writes failed long before the whole body.
    assert endless.done.wait(30)
    assert MAX_ANSWER_BYTES < endless.sent < endless.limit


def _scripted_body(chunks: Iterator[bytes], headers: dict[str, str] | None = None) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "application/json", **(headers or {})}, content=chunks)

    return httpx.MockTransport(handle)


def test_the_cap_counts_decoded_bytes_and_stops_pulling_chunks() -> None:
    pulled: list[int] = []

    def chunks() -> Iterator[bytes]:
        for n in range(10_000):  # 640 MB, were it all pulled
            pulled.append(n)
            yield b" " * (64 * 1024)

    config = ConnectionConfig(api_key="k", transport=_scripted_body(chunks()))
    with pytest.raises(UnexpectedResponseException), sync_call(config, {200}) as client:
        client.get_httpx_client().get("/sandboxes/x")
    assert len(pulled) == MAX_ANSWER_BYTES // (64 * 1024) + 1

    # 17 MiB of spaces gzip to some 17 KiB: the cap is on what the body decodes to.
    bomb = gzip.compress(b" " * OVER)
    config = ConnectionConfig(api_key="k", transport=_scripted_body(iter([bomb]), {"content-encoding": "gzip"}))
    with pytest.raises(UnexpectedResponseException, match="goes on past that"), sync_call(config, {200}) as client:
        client.get_httpx_client().get("/sandboxes/x")


def test_a_body_at_the_cap_is_read_whole() -> None:
    body = b'"' + b"x" * (MAX_ANSWER_BYTES - 2) + b'"'
    config = ConnectionConfig(api_key="k", transport=_scripted_body(iter([body[:100], body[100:]])))
    with sync_call(config, {200}) as client:
        response = client.get_httpx_client().get("/sandboxes/x")
    assert len(response.content) == MAX_ANSWER_BYTES
    assert response.json() == body[1:-1].decode()


@pytest.mark.anyio
async def test_the_async_hook_caps_the_body_too() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(10_000):
            yield b" " * (64 * 1024)

    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "application/json"}, content=chunks())

    config = ConnectionConfig(api_key="k", transport=httpx.MockTransport(handle))
    with pytest.raises(UnexpectedResponseException, match="goes on past that"):
        async with async_call(config, {200}) as client:
            await client.get_async_httpx_client().get("/sandboxes/x")


def test_an_error_status_over_the_cap_is_not_read_either() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, headers={"content-type": "application/json", "content-length": str(OVER)})

    config = ConnectionConfig(api_key="k", transport=httpx.MockTransport(handle))
    with pytest.raises(UnexpectedResponseException) as raised, sync_call(config, {200}) as client:
        client.get_httpx_client().get("/sandboxes/x")
    assert raised.value.status_code == 404


def _far_retry_after(sock: socket.socket, _q: dict[str, list[str]]) -> bool:
    """A busy 503 asking for a retry in 1e308 s, its body split so that the peek waits for the rest."""
    body = b'{"code": 503, "message": "busy for ages", "error_code": "busy"}'
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        f"retry-after: 1e308\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    sock.sendall(head.encode() + body[:10])
    time.sleep(0.2)  # not a race: however the peek is waiting then, the call must end the same way
    sock.sendall(body[10:])
    return True


@pytest.mark.anyio
@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("stack", ["pyqwest", "httpx"])
async def test_retry_after_1e308_without_a_deadline_ends_the_retries(
    server: TestServer, flavour: str, stack: str
) -> None:
    """It used to raise OverflowError: the peek waited up to the delay, and no lock takes 1e308 s."""
    path = f"/sandboxes/far-{flavour}-{stack}"
    server.routes[path] = _far_retry_after
    transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None = None
    if stack == "httpx":
        transport = httpx.HTTPTransport() if flavour == "sync" else httpx.AsyncHTTPTransport()
    opts = {"api_key": "k", "api_url": server.url, "request_timeout": 0, "transport": transport}
    with pytest.raises(ServiceBusyException, match="busy for ages"):
        if flavour == "sync":
            Sandbox.get_info(path.rsplit("/", 1)[1], **opts)  # type: ignore[arg-type]
        else:
            await AsyncSandbox.get_info(path.rsplit("/", 1)[1], **opts)  # type: ignore[arg-type]
    assert server.hits[path] == 1  # above max_retry_after: returned, not retried
