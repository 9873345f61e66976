"""`e2b_local_api.http.body_limit`: oversized bodies get a 413 `Error`, over a real socket, and nothing is stored."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from e2b_local_api import create_app
from e2b_local_api.http.body_limit import DEFAULT_MAX_BODY_BYTES
from e2b_local_api.http.http_protocol import server_config

from ..conftest import LiveServer, serving
from ..raw_http import connect, host, read_response

TEN_MB = 10 * 1024 * 1024


def _head(live: LiveServer, path: str, extra: str) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\n{host(live.url)}X-API-Key: {live.api_key}\r\n"
        f"Content-Type: application/json\r\n{extra}\r\n"
    ).encode()


def _assert_413(status: int, body: dict[str, object]) -> None:
    assert status == 413
    assert body == {"code": 413, "message": f"request body too large: the limit is {DEFAULT_MAX_BODY_BYTES} bytes"}


def test_a_declared_10_mb_body_is_refused_before_it_is_sent(live: LiveServer) -> None:
    with connect(live.url) as sock:
        sock.sendall(_head(live, "/sandboxes", f"Content-Length: {TEN_MB}\r\n") + b'{"templateID": "')
        response = read_response(sock)
    _assert_413(response.status, response.json())
    assert live.control.get("/_local/sandboxes").json() == []


def test_a_chunked_body_is_refused_when_it_crosses_the_limit(live: LiveServer) -> None:
    chunk = b"x" * (64 * 1024)
    chunks = DEFAULT_MAX_BODY_BYTES // len(chunk) + 1
    with connect(live.url) as sock:
        sock.sendall(_head(live, "/sandboxes", "Transfer-Encoding: chunked\r\n"))
        sock.sendall(b'7\r\n{"a": "\r\n')
        for _ in range(chunks):
            sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        response = read_response(sock)
    _assert_413(response.status, response.json())
    assert live.control.get("/_local/sandboxes").json() == []


def test_the_control_surface_is_capped_too(live: LiveServer) -> None:
    with connect(live.url) as sock:
        sock.sendall(_head(live, "/_local/settings", f"Content-Length: {TEN_MB}\r\n").replace(b"POST", b"PATCH", 1))
        response = read_response(sock)
    _assert_413(response.status, response.json())


def test_a_body_under_the_limit_is_handed_on_whole(live: LiveServer) -> None:
    label = "t" * 1000
    with live.api() as api:
        created = api.post("/sandboxes", json={"templateID": "base", "metadata": {"label": label}})
        assert created.status_code == 201
        # Still answering normally after the refusals above.
        assert [s["metadata"] for s in api.get("/v2/sandboxes").json()] == [{"label": label}]


BODY_TIMEOUT = 1.0


@pytest.fixture(scope="module")
def impatient_url() -> Iterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    with serving(server_config(create_app(body_timeout=BODY_TIMEOUT), log_level="critical"), sock):
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_a_trickling_body_gets_a_408(impatient_url: str) -> None:
    head = (
        f"POST /sandboxes HTTP/1.1\r\n{host(impatient_url)}X-API-Key: e2b_local_dev_key\r\n"
        "Content-Type: application/json\r\nContent-Length: 40\r\n\r\n"
    )
    started = time.monotonic()
    with connect(impatient_url) as sock:
        sock.sendall(head.encode() + b'{"templ')  # then nothing more
        response = read_response(sock)
    assert response.status == 408
    assert response.json() == {"code": 408, "message": f"request body not received within {BODY_TIMEOUT:g} s"}
    assert BODY_TIMEOUT <= time.monotonic() - started < BODY_TIMEOUT + 3
    answer = httpx.get(f"{impatient_url}/v2/sandboxes", headers={"X-API-Key": "e2b_local_dev_key"}, timeout=5)
    assert answer.status_code == 200 and answer.json() == []
