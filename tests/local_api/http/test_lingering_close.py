"""`e2b_local_api.http.http_protocol`: an early answer survives a client still sending (lingering close), real sockets.

urllib writes a whole body before it reads: if the server closed at once after
its `413`, the unread body would make the kernel reset the connection and
urllib would see `ConnectionResetError` instead of the answer.
"""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
import uvicorn
from e2b_local_api import DEV_API_KEY, create_app
from e2b_local_api.http.body_limit import DEFAULT_MAX_BODY_BYTES
from e2b_local_api.http.http_protocol import MAX_HEADER_BYTES, server_config

from ..conftest import LiveServer, free_socket, serving, url_of
from ..raw_http import connect, host, read_response

TEN_MB = 10 * 1024 * 1024
# No proxy from the environment: the request must reach the server directly.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _urllib_post(url: str, body: bytes, headers: dict[str, str]) -> urllib.error.HTTPError:
    request = urllib.request.Request(f"{url}/sandboxes", data=body, method="POST")
    for name, value in {"X-API-Key": DEV_API_KEY, "Content-Type": "application/json", **headers}.items():
        request.add_header(name, value)
    with pytest.raises(urllib.error.HTTPError) as refused:
        OPENER.open(request, timeout=30)
    return refused.value


def test_urllib_sees_the_413_for_a_10_mb_body(live: LiveServer) -> None:
    refused = _urllib_post(live.url, b"x" * TEN_MB, {})
    assert refused.code == 413
    message = f"request body too large: the limit is {DEFAULT_MAX_BODY_BYTES} bytes"
    assert refused.read() == f'{{"code":413,"message":"{message}"}}'.encode()
    assert live.control.get("/_local/sandboxes").json() == []


def test_urllib_sees_the_431_for_a_40_kib_head_with_a_body(live: LiveServer) -> None:
    refused = _urllib_post(live.url, b"x" * (4 * 1024 * 1024), {"X-Pad": "a" * (40 * 1024)})
    assert refused.code == 431
    assert refused.read() == f'{{"code": 431, "message": "request headers exceed {MAX_HEADER_BYTES} bytes"}}'.encode()


LINGER_MAX_BYTES = 256 * 1024
LINGER_TIMEOUT = 1.0


def _server(linger_timeout: float, linger_max_bytes: int) -> Iterator[tuple[str, uvicorn.Server]]:
    sock = free_socket()
    app = create_app()
    config = server_config(app, linger_timeout=linger_timeout, linger_max_bytes=linger_max_bytes, log_level="critical")
    with serving(config, sock) as server:
        yield url_of(sock), server


@pytest.fixture(scope="module")
def patient() -> Iterator[tuple[str, uvicorn.Server]]:
    """Lingers up to 256 KiB, for longer than any test: only the byte limit ends a linger."""
    yield from _server(600, LINGER_MAX_BYTES)


@pytest.fixture(scope="module")
def brief() -> Iterator[tuple[str, uvicorn.Server]]:
    """Lingers 1 s: the time limit ends a linger."""
    yield from _server(LINGER_TIMEOUT, 64 * 1024 * 1024)


def _holds(server: uvicorn.Server, sock: socket.socket) -> bool:
    """Whether the server still has `sock`'s connection open."""
    return any(getattr(c, "client", None) == sock.getsockname() for c in list(server.server_state.connections))


def _wait_until_released(server: uvicorn.Server, sock: socket.socket) -> None:
    deadline = time.monotonic() + 30
    while _holds(server, sock):
        assert time.monotonic() < deadline, "the server never closed the connection"
        time.sleep(0.02)


def _declare_ten_mb(url: str) -> bytes:
    return (
        f"POST /sandboxes HTTP/1.1\r\n{host(url)}X-API-Key: {DEV_API_KEY}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {TEN_MB}\r\n\r\n"
    ).encode() + b'{"templateID": "'


def _refused_and_half_closed(sock: socket.socket) -> None:
    response = read_response(sock)
    assert response.status == 413
    assert sock.recv(1) == b""  # the server's write side is shut: the answer is all there is


def test_the_linger_ends_after_its_byte_limit(patient: tuple[str, uvicorn.Server]) -> None:
    url, _ = patient
    with connect(url) as sock:
        sock.sendall(_declare_ten_mb(url))
        _refused_and_half_closed(sock)
        sent = 0
        with pytest.raises(OSError):  # reset once the server stops draining and closes
            while sent < 64 * 1024 * 1024:
                sock.sendall(b"x" * 65536)
                sent += 65536
    assert sent >= LINGER_MAX_BYTES - 65536  # it drained up to its limit first


def test_the_linger_ends_after_its_time_limit(brief: tuple[str, uvicorn.Server]) -> None:
    url, server = brief
    with connect(url) as sock:
        started = time.monotonic()
        sock.sendall(_declare_ten_mb(url))
        _refused_and_half_closed(sock)
        _wait_until_released(server, sock)  # though the client never closed
        assert time.monotonic() - started >= LINGER_TIMEOUT


def test_a_request_read_to_its_end_is_closed_without_lingering(patient: tuple[str, uvicorn.Server]) -> None:
    url, server = patient
    with connect(url) as sock:
        sock.sendall(f"GET /_local/health HTTP/1.1\r\n{host(url)}Connection: close\r\n\r\n".encode())
        assert read_response(sock).status == 200
        assert sock.recv(1) == b""
        # Nothing was left unread: closed long before the 600 s linger could end.
        _wait_until_released(server, sock)
