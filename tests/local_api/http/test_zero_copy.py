"""`e2b_local_api.http.zero_copy`: a file sent by the kernel, whole, with the connection fit for the next request.

Each case runs the hardened protocol on a real 127.0.0.1 socket with an app that answers a real file
by the extension's message, and reads the answers with h11's client side. `os.sendfile` is watched to
tell the kernel's path from the fallback's.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import h11
import pytest
from e2b_local_api.http import zero_copy
from e2b_local_api.http.faults import Fault, FaultMiddleware, FaultQueue
from e2b_local_api.http.http_protocol import server_config
from e2b_local_api.http.zero_copy import SEND_SLICE, ZERO_COPY_SEND, _expecting

from ..conftest import free_socket, serving, url_of
from ..raw_http import connect

MIB = 1 << 20


class FileApp:
    """Answers GET /file?..., the file's bytes from `offset`.

    Query: `offset`, `count`, `declare`, `chunked`, `abort_after` (that many bytes, then `AnswerAborted`).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offered: list[bool] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.offered.append(ZERO_COPY_SEND in scope.get("extensions", {}))
        query = dict(part.split("=") for part in scope["query_string"].decode().split("&") if part)
        offset = int(query.get("offset", 0))
        size = self.path.stat().st_size
        count = int(query["count"]) if "count" in query else None
        declared = int(query.get("declare", (count if count is not None else size - offset)))
        headers = [] if "chunked" in query else [(b"content-length", b"%d" % declared)]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if not self.offered[-1]:  # a middleware in between keeps the body: the bytes go as a message
            end = None if count is None else offset + count
            await send({"type": "http.response.body", "body": self.path.read_bytes()[offset:end]})
            return
        with open(self.path, "rb") as file:
            if "abort_after" in query:  # a part of the file, then the app stops as a paused sandbox's download does
                part = int(query["abort_after"])
                await send({"type": ZERO_COPY_SEND, "file": file, "offset": 0, "count": part, "more_body": True})
                raise zero_copy.AnswerAborted("stopped mid-answer")
            await send({"type": ZERO_COPY_SEND, "file": file, "offset": offset, "count": count})


@pytest.fixture
def sendfile_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The bytes of each os.sendfile call asyncio makes while the test runs."""
    calls: list[int] = []
    real = os.sendfile

    def watched(out_fd: int, in_fd: int, offset: int | None, count: int) -> int:
        sent = real(out_fd, in_fd, offset, count)
        calls.append(sent)
        return sent

    monkeypatch.setattr(os, "sendfile", watched)
    return calls


@contextmanager
def file_server(
    path: Path, faults: FaultQueue | None = None, log_level: str = "critical"
) -> Iterator[tuple[str, FileApp]]:
    app = FileApp(path)
    sock = free_socket()
    served = app if faults is None else FaultMiddleware(app, faults)  # type: ignore[arg-type]
    with serving(server_config(served, log_level=log_level), sock):
        yield url_of(sock), app


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _get(target: str, method: str = "GET") -> bytes:
    return f"{method} {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode()


@pytest.fixture
def data_file(tmp_path: Path) -> tuple[Path, bytes]:
    data = os.urandom(3 * MIB + 12345)
    path = tmp_path / "data.bin"
    path.write_bytes(data)
    return path, data


def _pipelined(url: str, *requests: bytes) -> list[tuple[int, bytes]]:
    """Send `requests` at once (each later one waits in the socket), then read the answers in order."""
    answers: list[tuple[int, bytes]] = []
    with connect(url) as sock:
        sock.sendall(b"".join(requests))
        leftover, closed = b"", False
        for request in requests:
            client = h11.Connection(h11.CLIENT)  # one per answer, fed what the last one read past its end
            method, target = request.split(b" ")[:2]
            client.send(h11.Request(method=method, target=target, headers=[("Host", "x")]))
            client.send(h11.EndOfMessage())
            if leftover:
                client.receive_data(leftover)
            if closed:
                client.receive_data(b"")  # h11's EOF
            answer = _answer(client, sock)
            if answer is None:
                break
            answers.append(answer)
            leftover, closed = client.trailing_data
    return answers


def _answer(client: h11.Connection, sock: socket.socket) -> tuple[int, bytes] | None:
    """(status, body) of one answer; None if the connection ended before it was whole."""
    status, body = 0, bytearray()
    try:
        while True:
            event = client.next_event()
            if event is h11.NEED_DATA:
                client.receive_data(sock.recv(MIB))
            elif isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                return status, bytes(body)
            elif isinstance(event, h11.ConnectionClosed):
                return None
    except h11.RemoteProtocolError:
        return None


def test_a_file_goes_by_the_kernel_whole_and_the_next_request_is_served(
    data_file: tuple[Path, bytes], sendfile_calls: list[int]
) -> None:
    path, data = data_file
    with file_server(path) as (url, app):
        answers = _pipelined(url, _get("/file"), _get("/file?offset=100&count=5000"), _get("/file?offset=7"))
    assert answers == [(200, data), (200, data[100:5100]), (200, data[7:])]
    assert app.offered == [True, True, True]
    assert sum(sendfile_calls) == len(data) + 5000 + len(data) - 7  # every byte by the kernel, none by Python


def test_no_call_to_sendfile_is_asked_for_more_than_a_slice(tmp_path: Path, sendfile_calls: list[int]) -> None:
    # The event loop waits inside each call: a fast reader let one run for 290 MB, no other request served.
    data = os.urandom(2 * SEND_SLICE + 5)
    (tmp_path / "big.bin").write_bytes(data)
    with file_server(tmp_path / "big.bin") as (url, _):
        assert _pipelined(url, _get("/file"), _get("/file?count=1")) == [(200, data), (200, data[:1])]
    assert sum(sendfile_calls) == len(data) + 1 and max(sendfile_calls) <= SEND_SLICE


def test_an_empty_file_is_an_empty_answer_and_the_connection_goes_on(tmp_path: Path) -> None:
    (tmp_path / "empty").write_bytes(b"")
    with file_server(tmp_path / "empty") as (url, _):
        assert _pipelined(url, _get("/file"), _get("/file"), _get("/file?chunked=1")) == [(200, b"")] * 3


def test_without_a_content_length_the_file_goes_as_body_messages(
    data_file: tuple[Path, bytes], sendfile_calls: list[int]
) -> None:
    path, data = data_file
    with file_server(path) as (url, _):
        answers = _pipelined(url, _get("/file?chunked=1"), _get("/file?count=10"))
    assert answers == [(200, data), (200, data[:10])]
    assert sendfile_calls == [10]  # the chunked answer's bytes went through h11


def test_a_head_request_gets_no_body_and_the_connection_goes_on(
    data_file: tuple[Path, bytes], sendfile_calls: list[int]
) -> None:
    path, data = data_file
    with file_server(path) as (url, _):
        answers = _pipelined(url, _get("/file", "HEAD"), _get("/file?offset=3"))
    assert answers == [(200, b""), (200, data[3:])]
    assert sum(sendfile_calls) == len(data) - 3


@pytest.mark.parametrize("asked", ["", "count={size}&"])  # the file's own end, or a count past it
def test_a_file_shorter_than_declared_ends_the_connection_not_the_server(
    data_file: tuple[Path, bytes], asked: str
) -> None:
    path, data = data_file
    query = asked.format(size=len(data) + 10) + f"declare={len(data) + 10}"
    with file_server(path) as (url, _):
        with connect(url) as sock:
            sock.sendall(_get(f"/file?{query}") + _get("/file"))
            received = bytearray()
            while chunk := sock.recv(MIB):  # the server closes: the client sees a short body, not a hang
                received += chunk
        assert received.endswith(data) and b"HTTP/1.1 200" not in received[len(received) - len(data) :]
        assert _pipelined(url, _get("/file")) == [(200, data)]


def test_a_client_gone_mid_file_leaves_the_server_serving(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(64 * MIB))
    with file_server(big) as (url, _):
        for _ in range(3):
            with connect(url) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sock.sendall(_get("/file"))
                assert sock.recv(4096).startswith(b"HTTP/1.1 200")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with RST
        assert _pipelined(url, _get("/file?count=100")) == [(200, big.read_bytes()[:100])]


def test_an_answer_aborted_mid_file_drops_the_connection_not_the_server(data_file: tuple[Path, bytes]) -> None:
    path, data = data_file
    errors = _Records()
    with file_server(path, log_level="error") as (url, _):
        logging.getLogger("uvicorn.error").addHandler(errors)
        with connect(url) as sock:
            sock.sendall(_get(f"/file?abort_after={MIB}"))
            received = bytearray()
            while chunk := sock.recv(MIB):  # the connection ends after the part sent: no hang, no more bytes
                received += chunk
        head, _, body = bytes(received).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and f"content-length: {len(data)}".encode() in head.lower()
        assert body == data[:MIB]
        assert _pipelined(url, _get("/file")) == [(200, data)]
    logging.getLogger("uvicorn.error").removeHandler(errors)
    assert [r.getMessage() for r in errors.records] == []  # an abort on purpose, not "Exception in ASGI application"


def test_the_fault_injection_that_keeps_a_body_is_not_offered_the_extension(data_file: tuple[Path, bytes]) -> None:
    path, data = data_file
    faults = FaultQueue()
    faults.arm(Fault("oversize", remaining=1, operation="listSandboxes", size=10))
    with file_server(path, faults) as (url, app):
        answers = _pipelined(url, _get("/v2/sandboxes"), _get("/v2/sandboxes"))
    assert answers == [(200, data + b" " * 10), (200, data)]  # shaped from the whole file, then as it is
    assert app.offered == [False, True]


# h11's private writer, read and moved by the extension: a new h11 that changed it must fail here.


def test_the_writer_is_found_only_for_a_content_length_body() -> None:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(_get("/"))
    assert isinstance(conn.next_event(), h11.Request)
    assert _expecting(conn, 1) is None  # no answer begun
    conn.send(h11.Response(status_code=200, headers=[("Content-Length", "10")]))
    writer = _expecting(conn, 10)
    assert writer is not None and _expecting(conn, 11) is None
    writer._length -= 10
    conn.send(h11.EndOfMessage())  # h11 agrees the body is whole
    chunked = h11.Connection(h11.SERVER)
    chunked.receive_data(_get("/"))
    chunked.next_event()
    chunked.send(h11.Response(status_code=200, headers=[("Transfer-Encoding", "chunked")]))
    assert _expecting(chunked, 1) is None


def test_only_uvicorns_own_cycles_are_offered_the_extension() -> None:
    seen: list[dict[str, Any]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope)

    async def plain_send(message: Any) -> None:
        pass

    async def call() -> None:  # a send that is no uvicorn cycle's: another server's, a test client's
        await zero_copy.with_zero_copy(app, lambda: None)({"type": "http"}, None, plain_send)

    asyncio.run(call())
    assert "extensions" not in seen[0]
