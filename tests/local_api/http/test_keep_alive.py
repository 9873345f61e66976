"""Idle kept-alive connections, over real sockets: why the control client never reuses one.

The server closes a kept-alive connection idle for `keep_alive_timeout`
seconds. A client that writes its next request into such a connection, as a
pooling client does when the server's close and its reuse cross, gets no
answer: the conformance test once failed that way at the `live` fixture's
reset, on a loaded machine (uvicorn's 5 s idle timeout equalled httpx's 5 s
pool expiry). The timeouts here are short through configuration; every wait
is for an event (the server's close), never a race with a timer.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from e2b_local_api import create_app
from e2b_local_api.http.http_protocol import DEFAULT_KEEP_ALIVE_TIMEOUT, server_config

from ..conftest import control_client, free_socket, serving, url_of
from ..raw_http import connect, host, read_response

KEEP_ALIVE_TIMEOUT = 1.0
HEADER_TIMEOUT = 0.3


def _server(keep_alive_timeout: float) -> Iterator[tuple[str, uvicorn.Server]]:
    sock = free_socket()
    config = server_config(
        create_app(), keep_alive_timeout=keep_alive_timeout, header_timeout=HEADER_TIMEOUT, log_level="critical"
    )
    with serving(config, sock) as server:
        yield url_of(sock), server


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, uvicorn.Server]]:
    """Closes connections idle for 1 s."""
    yield from _server(KEEP_ALIVE_TIMEOUT)


@pytest.fixture(scope="module")
def patient() -> Iterator[tuple[str, uvicorn.Server]]:
    """Keeps idle connections longer than any test runs: only the header deadline acts."""
    yield from _server(600)


def _health(url: str) -> bytes:
    return f"GET /_local/health HTTP/1.1\r\n{host(url)}\r\n".encode()


def _wait_until_no_connection(server: uvicorn.Server) -> None:
    deadline = time.monotonic() + 30
    while server.server_state.connections:
        assert time.monotonic() < deadline, "the server kept a connection open"
        time.sleep(0.02)


def test_a_connection_idle_past_the_keep_alive_timeout_is_closed_and_cannot_be_reused(
    served: tuple[str, uvicorn.Server],
) -> None:
    url, _ = served
    with connect(url) as sock:
        sock.sendall(_health(url))
        response = read_response(sock)
        assert response.status == 200 and "connection" not in response.headers  # kept alive
        assert sock.recv(1) == b""  # the server closed it, idle
        # What the failing test's client did: write the next request into it.
        with pytest.raises(ConnectionError):
            sock.sendall(_health(url))
            read_response(sock)


def test_the_control_client_never_reuses_a_connection(served: tuple[str, uvicorn.Server]) -> None:
    url, server = served
    with control_client(url) as control:
        for _ in range(3):
            answered = control.post("/_local/reset")
            assert answered.status_code == 204
            # Neither side keeps the connection: there is nothing to reuse.
            assert answered.headers["connection"] == "close"
            _wait_until_no_connection(server)  # idle past any timeout: nothing left open to reuse
        assert control.get("/_local/health").headers["connection"] == "close"


def test_a_kept_alive_connection_may_idle_longer_than_the_header_timeout(patient: tuple[str, uvicorn.Server]) -> None:
    url, _ = patient
    with connect(url) as sock:
        sock.sendall(_health(url))
        assert read_response(sock).status == 200
        # The header deadline starts at the next request's first byte, so an
        # idle wait past it (and within the keep-alive timeout) is fine.
        time.sleep(HEADER_TIMEOUT * 2)
        sock.sendall(_health(url))
        assert read_response(sock).status == 200


def test_the_next_head_on_a_kept_alive_connection_has_its_deadline(patient: tuple[str, uvicorn.Server]) -> None:
    url, _ = patient
    with connect(url) as sock:
        sock.sendall(_health(url))
        assert read_response(sock).status == 200
        sock.sendall(_health(url)[:10])  # then nothing
        response = read_response(sock)
    assert response.status == 408
    assert response.json() == {"code": 408, "message": f"request headers not received within {HEADER_TIMEOUT:g} s"}


def test_the_default_outlasts_httpx_pool_expiry() -> None:
    # A pooled httpx connection expires (5 s) long before the server closes it.
    keepalive_expiry = httpx.Limits().keepalive_expiry
    assert keepalive_expiry is not None
    config = server_config(create_app())
    assert config.timeout_keep_alive == DEFAULT_KEEP_ALIVE_TIMEOUT >= 3 * keepalive_expiry
