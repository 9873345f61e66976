"""`e2b_local_api.dataplane.body_timeout`: envd's stalled bodies are answered; moving uploads and idle client streams
are not cut.

The server's body timeout is short here; each test waits for the server's answer (bounded generously by the
socket's timeout), never for a clock of its own to beat the server's.
"""

from __future__ import annotations

import base64
import json
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.local_api.raw_http import connect, host, read_response
from tests.local_api.sandboxes import Envd, envelope, read_envelopes, real_server

BODY_TIMEOUT = 2.0


@pytest.fixture(scope="module")
def envd() -> Iterator[Envd]:
    with real_server(body_timeout=BODY_TIMEOUT) as server:
        yield server.envd(server.create(timeout=600))  # the default 15 s would end it mid-module


def _head(envd: Envd, target: str, content_type: str, length: int) -> bytes:
    headers = "".join(f"{name}: {value}\r\n" for name, value in envd.headers().items())
    return (
        f"POST {target} HTTP/1.1\r\n{host(envd.url)}{headers}Content-Type: {content_type}\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def _chunked_answer(sock: socket.socket) -> tuple[int, bytes]:
    """Status and content of an answer sent chunked (connectrpc's errors have no Content-Length), read to its last
    chunk: the server keeps the connection open for a while (the lingering close), so reading to its end would wait."""
    data = b""
    while not data.endswith(b"\r\n0\r\n\r\n"):
        chunk = sock.recv(65536)
        assert chunk, f"closed before the answer's end: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.lower(), head
    content = b""
    while True:
        size, _, body = body.partition(b"\r\n")
        if int(size, 16) == 0:
            return int(head.split()[1]), content
        content, body = content + body[: int(size, 16)], body[int(size, 16) + 2 :]


@pytest.mark.parametrize("path", ["/filesystem.Filesystem/Stat", "/process.Process/List"])
def test_a_stalled_unary_call_is_deadline_exceeded(envd: Envd, path: str) -> None:
    started = time.monotonic()
    with connect(envd.url, timeout=30) as sock:
        sock.sendall(_head(envd, path, "application/json", 100) + b"{")  # then nothing more
        status, content = _chunked_answer(sock)
    assert time.monotonic() - started >= BODY_TIMEOUT
    # Connect's status for deadline_exceeded; the SDK reads the code (a TimeoutException).
    assert status == 504
    assert json.loads(content) == {
        "code": "deadline_exceeded",
        "message": f"request body not received within {BODY_TIMEOUT:g} s",
    }


def test_a_stalled_upload_is_a_408_and_the_server_answers_on(envd: Envd) -> None:
    with connect(envd.url, timeout=30) as sock:
        sock.sendall(_head(envd, "/files?path=/tmp/stalled", "application/octet-stream", 100) + b"x")
        response = read_response(sock)
    assert response.status == 408
    assert response.json() == {
        "code": 408,
        "message": f"request body stalled: no bytes received for {BODY_TIMEOUT:g} s",
    }
    assert envd.call("List", {}) == {}  # no processes, and still answering


def test_an_upload_that_keeps_moving_is_not_cut_however_long_it_takes(envd: Envd) -> None:
    pieces = [bytes([65 + i]) * 1000 for i in range(12)]

    def slowly() -> Iterator[bytes]:
        for piece in pieces:
            yield piece
            time.sleep(BODY_TIMEOUT / 8)  # 12 pauses: longer than the timeout in all, each far shorter

    headers = envd.headers(**{"Content-Type": "application/octet-stream"})
    uploaded = httpx.post(f"{envd.url}/files?path=/tmp/slow", content=slowly(), headers=headers, timeout=30)
    assert uploaded.status_code == 200, uploaded.text
    downloaded = httpx.get(f"{envd.url}/files?path=/tmp/slow", headers=envd.headers(), timeout=30)
    assert downloaded.content == b"".join(pieces)


def test_a_client_stream_may_pause_longer_than_the_body_timeout(envd: Envd) -> None:
    start = {"process": {"cmd": "/bin/bash", "args": ["-c", "head -c 5"]}, "stdin": True}
    with envd.stream("Start", start) as events:
        pid = next(events)["start"]["pid"]

        def with_a_pause() -> Iterator[bytes]:
            yield envelope({"start": {"process": {"pid": pid}}})
            time.sleep(BODY_TIMEOUT * 1.5)  # as an SDK user's input iterable may
            yield envelope({"data": {"input": {"stdin": base64.b64encode(b"hello").decode()}}})

        headers = envd.headers(**{"Content-Type": "application/connect+json"})
        url = f"{envd.url}/process.Process/StreamInput"
        response = httpx.post(url, content=with_a_pause(), headers=headers, timeout=30)
        assert response.status_code == 200
        assert list(read_envelopes(iter([response.content]))) == [(0, {}), (2, {})]  # the answer, the end: no error
        out = b""
        for event in events:
            out += base64.b64decode(event.get("data", {}).get("stdout", ""))
            if "end" in event:
                break
    assert out == b"hello", json.dumps(event)
