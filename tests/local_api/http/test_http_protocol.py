"""`e2b_local_api.http.http_protocol`: the header deadline and `Error` bodies for malformed requests.

Each case runs against its own server on a real 127.0.0.1 socket, with a header
timeout of 1 s so that a slow client is cut off within the test's few seconds.
"""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from e2b_local_api import DEV_API_KEY, create_app
from e2b_local_api.http.http_protocol import AMBIGUOUS_FRAMING, MAX_HEADER_BYTES, server_config

from ..conftest import serving
from ..raw_http import connect, host, read_response, request

HEADER_TIMEOUT = 1.0


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = server_config(create_app(), header_timeout=HEADER_TIMEOUT, log_level="critical")
    with serving(config, sock):
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def _others_are_served(url: str) -> None:
    # verify=False: plain http, and loading the CA bundle per call would eat the timed margin.
    response = httpx.get(f"{url}/v2/sandboxes", headers={"X-API-Key": DEV_API_KEY}, timeout=5, verify=False)
    assert response.status_code == 200


def test_headers_sent_one_byte_at_a_time_get_a_408(url: str) -> None:
    request_bytes = b"GET /v2/sandboxes HTTP/1.1\r\nHost: x\r\nX-API-Key: " + b"k" * 200
    started = time.monotonic()
    with connect(url) as sock:
        for byte in request_bytes:
            sock.sendall(bytes([byte]))
            _others_are_served(url)  # the slow client blocks nobody
            if select.select([sock], [], [], 0.2)[0]:
                break
        else:
            pytest.fail("the server waited for every byte")
        response = read_response(sock)
        assert sock.recv(1) == b""  # and the connection is closed
    elapsed = time.monotonic() - started
    assert response.status == 408
    assert response.json() == {"code": 408, "message": f"request headers not received within {HEADER_TIMEOUT:g} s"}
    assert HEADER_TIMEOUT <= elapsed < HEADER_TIMEOUT + 3


def test_an_idle_connection_is_closed_quietly(url: str) -> None:
    with connect(url) as sock:
        assert sock.recv(1) == b""  # closed after the header timeout, nothing written


def test_the_deadline_restarts_for_each_request_on_a_kept_alive_connection(url: str) -> None:
    with connect(url) as sock:
        # Together the waits outlast one deadline; each is well within its own.
        for _ in range(4):
            sock.sendall(f"GET /_local/health HTTP/1.1\r\n{host(url)}\r\n".encode())
            assert read_response(sock).status == 200
            time.sleep(HEADER_TIMEOUT * 0.4)


def test_malformed_requests_get_a_400_error_body(url: str) -> None:
    response = request(url, b"NONSENSE\r\n\r\n")
    assert response.status == 400
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"code": 400, "message": "malformed HTTP request"}
    _others_are_served(url)


def _head_of_size(url: str, size: int) -> bytes:
    start = f"GET /_local/health HTTP/1.1\r\n{host(url)}X-Pad: ".encode()
    head = start + b"a" * (size - len(start) - 4) + b"\r\n\r\n"
    assert len(head) == size
    return head


def _send_in_pieces(sock: socket.socket, data: bytes, piece: int) -> None:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for start in range(0, len(data), piece):
        sock.sendall(data[start : start + piece])


TOO_LARGE = {"code": 431, "message": f"request headers exceed {MAX_HEADER_BYTES} bytes"}


@pytest.mark.parametrize("piece", [None, 1000], ids=["one-write", "many-writes"])
@pytest.mark.parametrize(("size", "status"), [(MAX_HEADER_BYTES, 200), (MAX_HEADER_BYTES + 1, 431)])
def test_the_header_cap_holds_however_the_headers_arrive(url: str, piece: int | None, size: int, status: int) -> None:
    with connect(url) as sock:
        _send_in_pieces(sock, _head_of_size(url, size), piece or size)
        response = read_response(sock)
    assert response.status == status
    if status == 431:
        assert response.headers["content-type"] == "application/json"
        assert response.json() == TOO_LARGE
    else:
        assert response.json() == {"ok": True}


def test_a_40_kib_head_in_one_write_gets_a_431(url: str) -> None:
    # The case: h11 alone parses a head that arrives whole, at any size.
    response = request(url, _head_of_size(url, 40 * 1024))
    assert (response.status, response.json()) == (431, TOO_LARGE)
    _others_are_served(url)


def test_a_head_over_the_cap_that_never_ends_gets_a_431(url: str) -> None:
    # Never completed: h11 gives up once the unfinished head passes the cap.
    response = request(url, f"GET / HTTP/1.1\r\n{host(url)}X-Big: ".encode() + b"a" * (MAX_HEADER_BYTES + 1))
    assert (response.status, response.json()) == (431, TOO_LARGE)


def test_a_ten_thousand_character_id_is_a_404(url: str) -> None:
    long_id = "a" * 10_000
    headers = {"X-API-Key": DEV_API_KEY}
    response = httpx.get(f"{url}/sandboxes/{long_id}", headers=headers, timeout=5)
    assert response.status_code == 404
    assert response.json()["error_code"] == "sandbox_not_found"
    response = httpx.post(f"{url}/sandboxes/{long_id}/pause", headers=headers, timeout=5)
    assert response.status_code == 404


def _until_eof(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
        b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
        b"content-length: 0\r\nTRANSFER-ENCODING: chunked\r\n",
    ],
    ids=["length-first", "encoding-first", "any-case"],
)
def test_both_content_length_and_transfer_encoding_get_one_400_and_the_connection_closed(
    url: str, framing: bytes
) -> None:
    """Request smuggling: what the chunked framing leaves after the first request must never be answered."""
    first = b"POST /_local/health HTTP/1.1\r\n" + host(url).encode() + framing + b"\r\n0\r\n\r\n"
    smuggled = f"GET /_local/health HTTP/1.1\r\n{host(url)}\r\n".encode()
    with connect(url) as sock:
        sock.sendall(first + smuggled)
        sock.shutdown(socket.SHUT_WR)  # all the client sends: the server's lingering close ends at this EOF
        answer = _until_eof(sock)
    assert answer.count(b"HTTP/1.1 ") == 1, answer
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ") and b"connection: close" in head.lower()
    assert json.loads(body) == {"code": 400, "message": AMBIGUOUS_FRAMING}
    _others_are_served(url)


def test_one_framing_header_alone_is_served_as_before(url: str) -> None:
    chunked = b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    for framing in (b"Content-Length: 0\r\n\r\n", chunked):
        with connect(url) as sock:
            sock.sendall(b"GET /_local/health HTTP/1.1\r\n" + host(url).encode() + framing)
            assert read_response(sock).status == 200
