"""The transports over real sockets against the local test server.

Every scenario runs through the default pyqwest transport and through
httpx's own, sync and async. Budgets and timeouts are tiny so the suite is
fast; the server really trickles, stalls, drops and gzips.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import os
import time
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn
from e2b._transport import (
    AsyncRetryableTransport,
    RetryableTransport,
    RetryPolicy,
    default_async_transport,
    default_transport,
)
from e2b_local_api import DEV_API_KEY, create_app
from e2b_local_api.http.http_protocol import server_config

from tests.local_api.conftest import control_client, free_socket, serving, url_of

from ._server import BOMB, BOMB_SIZE, BUSY, DEEP, REFUSAL, TestServer

pytestmark = pytest.mark.anyio

POLICY = RetryPolicy(retries=2, backoff_base=0.01, backoff_cap=0.05, min_peek_budget=0.1)
READ = 0.3
TIMEOUT = httpx.Timeout(2.0, read=READ)  # deadline: the longest phase, 2 s
# Where a wrong wait would be long: the right call ends in a second or two, a wrong one waits out FAR's
# deadline or a 60 s stall; BOUND lies far from both, so no load on the machine makes one look like the other.
FAR = httpx.Timeout(30.0, read=READ)
BOUND = 10.0
KINDS = ["sync-pyqwest", "sync-httpx", "async-pyqwest", "async-httpx"]


@pytest.fixture(scope="module")
def server() -> Iterator[TestServer]:
    srv = TestServer()
    yield srv
    srv.close()


@dataclass
class Client:
    """One face over sync and async httpx clients for the scenarios."""

    kind: str
    transport: RetryableTransport | AsyncRetryableTransport
    client: httpx.Client | httpx.AsyncClient

    async def get(self, url: str, **kwargs: Any) -> httpx.Response:
        if isinstance(self.client, httpx.AsyncClient):
            return await self.client.request(kwargs.pop("method", "GET"), url, **kwargs)
        return self.client.request(kwargs.pop("method", "GET"), url, **kwargs)

    async def raw(self, url: str) -> tuple[httpx.Response, bytes]:
        if isinstance(self.client, httpx.AsyncClient):
            async with self.client.stream("GET", url) as r:
                return r, b"".join([c async for c in r.aiter_raw()])
        with self.client.stream("GET", url) as r:
            return r, b"".join(r.iter_raw())

    def pool_size(self) -> int | None:
        inner = self.transport.inner
        pool = getattr(inner, "_pool", None)
        return None if pool is None else len(pool.connections)

    async def close(self) -> None:
        if isinstance(self.client, httpx.AsyncClient):
            await self.client.aclose()
        else:
            self.client.close()


def make_client(
    kind: str, policy: RetryPolicy = POLICY, one_connection: bool = False, timeout: httpx.Timeout = TIMEOUT
) -> Client:
    limits = httpx.Limits(max_connections=1) if one_connection else httpx.Limits()
    extra: dict[str, Any] = {"max_connections_per_address": 1} if one_connection else {}
    transport: RetryableTransport | AsyncRetryableTransport
    if kind == "sync-pyqwest":
        transport = default_transport(policy=policy, read_timeout=timeout.read, **extra)
    elif kind == "async-pyqwest":
        transport = default_async_transport(policy=policy, read_timeout=timeout.read, **extra)
    elif kind == "sync-httpx":
        transport = RetryableTransport(httpx.HTTPTransport(limits=limits), policy)
    else:
        transport = AsyncRetryableTransport(httpx.AsyncHTTPTransport(limits=limits), policy)
    client: httpx.Client | httpx.AsyncClient
    if isinstance(transport, AsyncRetryableTransport):
        client = httpx.AsyncClient(transport=transport, timeout=timeout)
    else:
        client = httpx.Client(transport=transport, timeout=timeout)
    return Client(kind, transport, client)


@pytest.fixture(params=KINDS)
async def client(request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    c = make_client(request.param)
    yield c
    await c.close()


def hits(server: TestServer, path: str, before: int) -> int:
    return server.hits[path] - before


async def test_refusal_one_request_body_byte_for_byte(server: TestServer, client: Client) -> None:
    before = server.hits["/refusal"]
    response = await client.get(server.url + "/refusal")
    assert (response.status_code, response.content) == (503, REFUSAL)
    response, raw = await client.raw(server.url + "/refusal")
    assert raw == REFUSAL
    assert hits(server, "/refusal", before) == 2  # one request each


async def test_gzipped_refusal(server: TestServer, client: Client) -> None:
    before = server.hits["/refusal-gzip"]
    response, raw = await client.raw(server.url + "/refusal-gzip")
    # Either the peek or pyqwest decoded it; the caller gets the JSON either way.
    decoded = gzip.decompress(raw) if response.headers.get("content-encoding") else raw
    assert decoded == REFUSAL
    assert (await client.get(server.url + "/refusal-gzip")).content == REFUSAL
    assert hits(server, "/refusal-gzip", before) == 2


async def test_other_503_json_retried(server: TestServer, client: Client) -> None:
    before = server.hits["/busy"]
    response = await client.get(server.url + "/busy")
    assert (response.status_code, response.content) == (503, BUSY)
    assert hits(server, "/busy", before) == 3
    response = await client.get(server.url + f"/flaky?key={client.kind}&n=2")
    assert response.status_code == 200


async def test_non_json_503_retried_without_peek(server: TestServer, client: Client) -> None:
    before = server.hits["/plain503"]
    response = await client.get(server.url + "/plain503")
    assert response.content == REFUSAL
    assert hits(server, "/plain503", before) == 3


async def test_over_cap_handed_on_whole(server: TestServer, client: Client) -> None:
    before = server.hits["/big"]
    _response, raw = await client.raw(server.url + "/big?size=200000")
    assert raw == b"x" * 200_000
    assert hits(server, "/big", before) == 3


BROKEN_BODIES = {
    "stalled": "/stall?stall=60",  # 10 bytes, then nothing
    "trickling": "/trickle?delay=0.004",  # one byte every 4 ms: past the 0.1 s budget
    "cut-off": "/drop",  # 20 bytes, then the connection closes
}


@pytest.mark.parametrize("body", list(BROKEN_BODIES))
async def test_broken_503_body_retried_each_attempt_one_read_timeout(
    server: TestServer, client: Client, body: str
) -> None:
    path = BROKEN_BODIES[body]
    before = server.hits[path.split("?")[0]]
    started = time.monotonic()
    if body == "trickling":
        # The last body comes at the server's pace, 100 bytes 4 ms apart (seconds on a busy machine): a
        # deadline far past it, so that only the peeks' 0.1 s budgets cut the first two attempts.
        patient = make_client(client.kind, timeout=httpx.Timeout(60.0, read=10.0))
        try:
            response, raw = await patient.raw(server.url + path)
        finally:
            await patient.close()
        assert (response.status_code, raw) == (503, REFUSAL)  # the last one, handed on whole
    else:
        error = httpx.TimeoutException if body == "stalled" else httpx.TransportError
        with pytest.raises(error):
            await client.get(server.url + path, timeout=FAR)
    elapsed = time.monotonic() - started
    attempts = hits(server, path.split("?")[0], before)
    assert attempts == 3
    if body == "trickling":
        # The last body is read whole at the server's own pace: no bound on our side to time (the
        # peek's cut is test_deadline.py's test_peek_read_bound).
        return
    # A stall costs one read timeout per attempt (about a second in all), not FAR's 30 s deadline.
    assert elapsed < BOUND


@pytest.mark.parametrize("body", ["stalled", "trickling"])
async def test_broken_503_body_ends_by_the_deadline(server: TestServer, client: Client, body: str) -> None:
    path = BROKEN_BODIES[body].replace("delay=0.004", "delay=0.05")
    before = server.hits[path.split("?")[0]]
    # Retries enough to outlast BOUND (at least 0.1 s each) if the deadline did not end them.
    many = RetryPolicy(retries=100, backoff_base=0.01, backoff_cap=0.05, min_peek_budget=0.1)
    c = make_client(client.kind, many)
    started = time.monotonic()
    try:
        with pytest.raises(httpx.TimeoutException):
            await c.get(server.url + path, timeout=httpx.Timeout(0.5, read=READ))
        elapsed = time.monotonic() - started  # the request's own time: closing the client is not part of it
    finally:
        await c.close()
    assert hits(server, path.split("?")[0], before) >= 2  # retried while the budget lasted
    assert elapsed < BOUND  # the 0.5 s deadline, where the retries alone would take over 10 s


@pytest.mark.parametrize("kind", KINDS)
async def test_a_stalled_peek_costs_its_budget_without_any_read_timeout(server: TestServer, kind: str) -> None:
    """The SDK's configuration: no read timeout shorter than the deadline, on any stack."""
    budget = 0.3
    policy = RetryPolicy(retries=0, min_peek_budget=budget)
    transport: RetryableTransport | AsyncRetryableTransport
    if kind == "sync-pyqwest":
        transport = default_transport(policy=policy)
    elif kind == "async-pyqwest":
        transport = default_async_transport(policy=policy)
    elif kind == "sync-httpx":
        transport = RetryableTransport(httpx.HTTPTransport(), policy)
    else:
        transport = AsyncRetryableTransport(httpx.AsyncHTTPTransport(), policy)
    # The server stalls 30 s inside a 60 s deadline: handing on after the budget and waiting for either differ by
    # tens of seconds, so no load on the machine makes one look like the other.
    request = httpx.Request(
        "GET", server.url + "/stall?stall=30", extensions={"timeout": httpx.Timeout(60.0).as_dict()}
    )
    started = time.monotonic()
    if isinstance(transport, AsyncRetryableTransport):
        response = await transport.handle_async_request(request)
        elapsed = time.monotonic() - started
        await response.aclose()
        await transport.aclose()
    else:
        response = transport.handle_request(request)
        elapsed = time.monotonic() - started
        response.close()
        transport.close()
    # Handed on after the peek's budget (the body stays unread), not after the stall or the deadline.
    assert response.status_code == 503
    assert budget * 0.9 <= elapsed < 10.0


@pytest.mark.parametrize("kind", ["sync-pyqwest", "async-pyqwest"])
async def test_pyqwest_ends_a_body_it_hands_on_by_the_total_not_read_plus_write(server: TestServer, kind: str) -> None:
    c = make_client(kind)
    started = time.monotonic()
    try:
        with pytest.raises(httpx.TimeoutException):
            # A 200 is handed on untouched; each byte comes inside the read timeout, the body takes 10 s.
            await c.get(server.url + "/trickle?status=200&delay=0.1", timeout=httpx.Timeout(4.0, read=3.9))
        elapsed = time.monotonic() - started
    finally:
        await c.close()
    assert elapsed < 4.0 + 2.0  # read + write would be 7.9 s


async def test_silent_server_ends_by_the_deadline(server: TestServer, client: Client) -> None:
    started = time.monotonic()
    with pytest.raises(httpx.TimeoutException):
        await client.get(server.url + "/silent?stall=60", timeout=httpx.Timeout(0.5))
    assert time.monotonic() - started < BOUND


async def test_deeply_nested(server: TestServer, client: Client) -> None:
    before = server.hits["/deep"]
    response = await client.get(server.url + "/deep")
    assert response.content == DEEP
    assert hits(server, "/deep", before) == 3


# The bomb test measures memory, not time: tracemalloc slows every allocation several times over,
# so its three peeks get budgets and a deadline no busy machine reaches (2 s was, at a load of 9).
UNHURRIED = RetryPolicy(retries=2, backoff_base=0.01, backoff_cap=0.05, min_peek_budget=60.0)


@pytest.mark.parametrize("kind", KINDS)
async def test_gzip_bomb_bounded(server: TestServer, kind: str) -> None:
    client = make_client(kind, UNHURRIED, timeout=httpx.Timeout(120.0))
    try:
        await _bomb_bounded(server, client)
    finally:
        await client.close()


async def _bomb_bounded(server: TestServer, client: Client) -> None:
    before = server.hits["/bomb"]
    tracemalloc.start()
    try:
        if isinstance(client.client, httpx.AsyncClient):
            cm: Any = client.client.stream("GET", server.url + "/bomb")
            response = await cm.__aenter__()
        else:
            cm = client.client.stream("GET", server.url + "/bomb")
            response = cm.__enter__()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000  # three peeks of a 8 MB bomb, nowhere near decoded
    if isinstance(client.client, httpx.AsyncClient):
        raw = b"".join([c async for c in response.aiter_raw()])
        await cm.__aexit__(None, None, None)
    else:
        raw = b"".join(response.iter_raw())
        cm.__exit__(None, None, None)
    assert raw == BOMB if response.headers.get("content-encoding") else len(raw) == BOMB_SIZE
    assert hits(server, "/bomb", before) == 3


async def test_generator_body_not_resent(server: TestServer, client: Client) -> None:
    before = server.hits["/busy"]
    if isinstance(client.client, httpx.AsyncClient):

        async def agen() -> AsyncIterator[bytes]:
            yield b"stream"
            yield b"ed-body"

        response = await client.get(server.url + "/busy", method="POST", content=agen())
    else:

        def gen() -> Iterator[bytes]:
            yield b"stream"
            yield b"ed-body"

        response = await client.get(server.url + "/busy", method="POST", content=gen())
    assert (response.status_code, response.content) == (503, BUSY)
    assert hits(server, "/busy", before) == 1
    assert server.bodies[-1] == b"streamed-body"


@pytest.mark.parametrize("kind", ["async-pyqwest", "async-httpx"])
async def test_cancellation_during_peek_twice_then_pool_serves(server: TestServer, kind: str) -> None:
    policy = RetryPolicy(retries=2, min_peek_budget=5.0)
    c = make_client(kind, policy, one_connection=True)
    assert isinstance(c.client, httpx.AsyncClient)
    try:
        for _ in range(2):
            server.partial_sent.clear()
            task = asyncio.ensure_future(c.client.get(server.url + "/stall?stall=3", timeout=httpx.Timeout(5.0)))
            while not server.partial_sent.is_set():
                await asyncio.sleep(0.005)
            await asyncio.sleep(0.05)  # now inside the peek
            task.cancel()
            await asyncio.sleep(0)
            task.cancel()  # a second cancellation while closing
            with pytest.raises(asyncio.CancelledError):
                await task
        response = await asyncio.wait_for(c.client.get(server.url + "/ok"), 3.0)
        assert response.status_code == 200
    finally:
        await c.close()


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
async def test_no_leaks_over_1000_requests(server: TestServer, kind: str) -> None:
    policy = RetryPolicy(retries=2, backoff_base=0.0002, backoff_cap=0.0005, min_peek_budget=0.05)
    paths = ["/refusal", "/busy", "/flaky?key={i}&n=1", "/big?size=20000", "/drop", "/plain503",
             "/refusal-gzip", "/ok"]  # fmt: skip
    # Leaks are the subject, not timeouts: the module's 0.3 s read timeout failed a `/busy` here once
    # in a loaded CI run (a read timeout is a TransportError too), so no timeout comes near a healthy run.
    c = make_client(kind, policy, timeout=httpx.Timeout(30.0))
    try:
        for path in paths:  # warm up: the pool now holds its idle connection
            with contextlib.suppress(httpx.TransportError):
                await c.get(server.url + path.format(i=f"warm-{kind}"))
        server.wait_live(at_most=1)
        fds, live, pool = _fds(), server.live, c.pool_size()
        for i in range(1000):
            path = paths[i % len(paths)].format(i=f"{kind}-{i}")
            try:
                response = await c.get(server.url + path)
                assert response.status_code in (200, 503)
            except httpx.TransportError:
                assert path == "/drop"
        # A dropped connection is closed by both ends a moment after its error is raised, and
        # on this loop: wait without blocking it (a time.sleep here held the very close it waited
        # for), until nothing is left over or a deadline no healthy run comes near.
        deadline = time.monotonic() + 10
        while (server.live > live or _fds() > fds) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert server.live <= live and _fds() <= fds, (server.live, live, _fds(), fds)
        assert c.pool_size() == pool  # None for pyqwest: the server's count stands in
    finally:
        await c.close()


@pytest.fixture(scope="module")
def idle_closing_api() -> Iterator[tuple[str, uvicorn.Server]]:
    """The local API server, closing connections idle for 0.5 s."""
    sock = free_socket()
    with serving(server_config(create_app(), keep_alive_timeout=0.5, log_level="critical"), sock) as api:
        yield url_of(sock), api


def _wait_until_closed(api: uvicorn.Server, control: httpx.Client) -> None:
    """Until the server has closed every connection, the client's idle one included.

    uvicorn drops a connection from its count just before asyncio closes the
    socket, in the same loop callback: the answer to a later request (a fresh
    connection of the control client) comes after the close.
    """
    deadline = time.monotonic() + 10
    while api.server_state.connections:
        assert time.monotonic() < deadline, "the server kept the idle connection"
        time.sleep(0.01)
    assert control.get("/_local/health").status_code == 200


@pytest.mark.parametrize("kind", KINDS)
async def test_a_pause_after_the_server_closed_the_idle_connection_is_sent_once(
    idle_closing_api: tuple[str, uvicorn.Server], kind: str
) -> None:
    url, api = idle_closing_api
    key = {"X-API-Key": DEV_API_KEY}
    c = make_client(kind)
    with control_client(url) as control:
        sandbox_id = control.post("/sandboxes", json={"templateID": "base"}, headers=key).json()["sandboxID"]
        pauses = control.get("/_local/stats").json()["received"].get("pauseSandbox", 0)
        try:
            assert (await c.get(f"{url}/sandboxes/{sandbox_id}", headers=key)).status_code == 200
            _wait_until_closed(api, control)  # the pooled connection is closed: idle past the keep-alive
            response = await c.get(f"{url}/sandboxes/{sandbox_id}/pause", method="POST", json={}, headers=key)
        finally:
            await c.close()
        assert response.status_code == 200, response.text
        # Over a new connection, and exactly once: the closed one took nothing.
        assert control.get("/_local/stats").json()["received"]["pauseSandbox"] == pauses + 1
