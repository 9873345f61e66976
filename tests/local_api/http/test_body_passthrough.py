"""`e2b_local_api.http.http_protocol`: a `Content-Length` body handed to the app past h11, whole and in order.

The middle of such a body skips h11's buffer (the server's upload speed); h11 must still end
the message, refuse a short one, and serve the next request on the connection. Each case runs
on a real 127.0.0.1 socket against an ASGI app that reports what it received.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import h11
import pytest
import uvicorn
from e2b_local_api.http.http_protocol import BODY_READ_SIZE, _fixed_length_left, _read_past, server_config

from ..conftest import free_socket, serving, url_of
from ..raw_http import connect, read_response

MIB = 1 << 20


def _head(length: int, path: str = "/upload", extra: str = "") -> bytes:
    return f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n{extra}\r\n".encode()


# h11's private reader, read and moved by the protocol: a new h11 that changed it must fail here,
# not quietly send every body the slow way.


def test_the_reader_counts_what_was_read_past_it() -> None:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(_head(10) + b"abc")
    assert isinstance(conn.next_event(), h11.Request)
    assert conn.next_event() == h11.Data(data=b"abc")
    assert conn.next_event() is h11.NEED_DATA
    assert _fixed_length_left(conn) == 7
    _read_past(conn, 4)
    assert _fixed_length_left(conn) == 3
    conn.receive_data(b"xyz")
    assert conn.next_event() == h11.Data(data=b"xyz")
    assert isinstance(conn.next_event(), h11.EndOfMessage)
    assert conn.their_state is h11.DONE
    assert _fixed_length_left(conn) is None


def test_a_short_body_is_still_refused_at_eof() -> None:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(_head(10))
    assert isinstance(conn.next_event(), h11.Request)
    assert conn.next_event() is h11.NEED_DATA
    _read_past(conn, 6)
    conn.receive_data(b"")
    with pytest.raises(h11.RemoteProtocolError, match=r"received 6 bytes, expected 10"):
        conn.next_event()


@pytest.mark.parametrize(
    "head",
    [
        b"POST /u HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",  # no length to count down
        b"GET /u HTTP/1.1\r\nHost: x\r\n\r\n",  # no body
    ],
)
def test_other_bodies_are_left_to_h11(head: bytes) -> None:
    conn = h11.Connection(h11.SERVER)
    assert _fixed_length_left(conn) is None  # no request yet
    conn.receive_data(head)
    assert isinstance(conn.next_event(), h11.Request)
    conn.next_event()
    assert _fixed_length_left(conn) is None


def test_a_body_still_buffered_in_h11_is_left_to_h11() -> None:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(_head(10))
    assert isinstance(conn.next_event(), h11.Request)
    conn.receive_data(b"abc")  # not yet taken out by next_event
    assert _fixed_length_left(conn) is None


# Through a server.


class Recorder:
    """An app that reads the whole body and answers its size and digest; early=True answers before reading."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, int]] = []
        self.finished = threading.Event()  # the last request's handling is over
        self.go = threading.Event()  # /slow waits for it after its body's first piece

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.finished.clear()
        try:
            await self._serve(scope, receive, send)
        finally:
            self.finished.set()

    async def _serve(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        digest = hashlib.sha256()
        size = 0
        if scope["path"] != "/early":
            while True:
                if scope["path"] == "/slow" and len(self.messages) == 1:
                    await asyncio.to_thread(self.go.wait)  # once the body is flowing
                message = await receive()
                body = message.get("body", b"")
                self.messages.append((message["type"], len(body)))
                if message["type"] != "http.request":
                    return
                digest.update(body)
                size += len(body)
                if not message.get("more_body", False):
                    break
        answer = json.dumps({"size": size, "sha256": digest.hexdigest()}).encode()
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(answer))]}
        )
        await send({"type": "http.response.body", "body": answer})


@contextmanager
def recording_server(**settings: float) -> Iterator[tuple[str, Recorder]]:
    """A `Recorder` behind the hardened protocol with `settings` (server_config's), on a free port."""
    app = Recorder()
    sock = free_socket()
    with serving(server_config(app, log_level="critical", **settings), sock):  # type: ignore[arg-type]
        yield url_of(sock), app


@pytest.fixture
def recorder() -> Iterator[tuple[str, Recorder]]:
    with recording_server() as served:
        yield served


def _answers(sock: socket.socket, count: int) -> list[Any]:
    """The JSON bodies of the next `count` responses (each with a Content-Length), however they share reads."""
    buffered = b""
    answers: list[Any] = []
    while len(answers) < count:
        head, found, rest = buffered.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0]) if found else -1
        if found and len(rest) >= length:
            answers.append(json.loads(rest[:length]))
            buffered = rest[length:]
            continue
        data = sock.recv(65536)
        if not data:
            raise ConnectionError(f"closed after {len(answers)} of {count} answers")
        buffered += data
    return answers


def _digest(data: bytes) -> dict[str, Any]:
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


@pytest.mark.parametrize(
    ("piece", "size"),
    [(7, 100_003), (1000, 3 * MIB + 17), (64 * 1024 + 1, 3 * MIB), (300 * 1024, 3 * MIB), (4 * MIB, MIB)],
)
def test_a_body_sent_in_pieces_arrives_whole_and_the_connection_serves_the_next(
    recorder: tuple[str, Recorder], piece: int, size: int
) -> None:
    url, _ = recorder
    body = os.urandom(size)
    with connect(url) as sock:
        sock.sendall(_head(len(body)))
        for start in range(0, len(body), piece):
            sock.sendall(body[start : start + piece])
        assert read_response(sock).json() == _digest(body)
        # The same connection, a second upload: h11 ended the first message where it ended.
        sock.sendall(_head(5) + b"hello")
        assert read_response(sock).json() == _digest(b"hello")


def test_a_body_and_the_next_head_in_one_write_are_told_apart(recorder: tuple[str, Recorder]) -> None:
    url, _ = recorder
    body = os.urandom(MIB)
    with connect(url) as sock:
        sock.sendall(_head(len(body)))
        sock.sendall(body[: MIB // 2])
        sock.sendall(body[MIB // 2 :] + _head(3) + b"end")  # the body's last piece and a pipelined request
        assert _answers(sock, 2) == [_digest(body), _digest(b"end")]


def test_a_body_answered_before_it_is_read_is_dropped_and_the_connection_goes_on(
    recorder: tuple[str, Recorder],
) -> None:
    url, app = recorder
    body = os.urandom(2 * MIB)
    with connect(url) as sock:
        sock.sendall(_head(len(body), "/early"))
        assert read_response(sock).json() == _digest(b"")
        for start in range(0, len(body), 256 * 1024):
            sock.sendall(body[start : start + 256 * 1024])
        sock.sendall(_head(2) + b"ok")
        assert read_response(sock).json() == _digest(b"ok")
    assert app.messages == [("http.request", 2)]  # none of the dropped body reached the app


def test_a_client_gone_in_the_middle_of_a_body_is_a_disconnect(recorder: tuple[str, Recorder]) -> None:
    url, app = recorder
    with connect(url) as sock:
        sock.sendall(_head(4 * MIB) + os.urandom(MIB))
        sock.shutdown(socket.SHUT_WR)
        assert sock.recv(1) == b""  # the server closes its side: no answer to a short body
    assert app.finished.wait(10)
    assert app.messages[-1] == ("http.disconnect", 0)
    assert sum(size for kind, size in app.messages if kind == "http.request") <= MIB


def test_a_body_the_app_does_not_take_waits_in_the_socket_not_in_the_server(recorder: tuple[str, Recorder]) -> None:
    url, app = recorder
    body = os.urandom(64 * MIB)
    answers: list[Any] = []
    with connect(url, timeout=60) as sock:

        def send() -> None:
            sock.sendall(_head(len(body), "/slow") + body)
            answers.append(1)

        sender = threading.Thread(target=send)
        sender.start()
        # Long enough for a server that kept reading to take all 64 MiB in; a paused one holds
        # two reads (a mebibyte each while a large body streams) at most, whatever the wait.
        time.sleep(1)
        app.go.set()
        sender.join()
        assert read_response(sock).json() == _digest(body)
    assert answers == [1]
    waited = app.messages[1][1]  # what piled up while the app was not reading
    assert waited <= 2 * BODY_READ_SIZE, waited


def test_a_large_body_is_read_a_mebibyte_at_a_time_and_its_end_as_asyncio_reads() -> None:
    sizes: list[tuple[int, int]] = []  # (what of the body was left, the transport's read size) at each message
    protocols: list[Any] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        left = int(dict(scope["headers"])[b"content-length"])
        while True:
            message = await receive()
            left -= len(message["body"])
            sizes.append((left, protocols[0]._raw_transport.max_size))
            if not message.get("more_body", False):
                break
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def scenario() -> None:
        config = server_config(app, log_level="critical")
        config.load()
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair()
        protocol_class: Any = config.http_protocol_class
        protocol = protocol_class(config=config, server_state=uvicorn.server.ServerState(), app_state={})
        protocols.append(protocol)
        transport, _ = await loop.connect_accepted_socket(lambda: protocol, ours)
        default = transport.max_size  # type: ignore[attr-defined]
        body = os.urandom(8 * MIB)
        theirs.setblocking(False)
        await loop.sock_sendall(theirs, _head(len(body)) + body)
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += await loop.sock_recv(theirs, 65536)
        assert answer.startswith(b"HTTP/1.1 204")
        assert transport.max_size == default  # type: ignore[attr-defined]
        transport.close()
        theirs.close()
        assert default == 256 * 1024 and sizes[-1] == (0, default)
        # The head's read holds the body's start (h11's); then a mebibyte a read while one is to come.
        assert sizes[0][1] == default
        assert all(size == BODY_READ_SIZE for left, size in sizes[1:] if left >= BODY_READ_SIZE)
        assert all(size == default for left, size in sizes if left < BODY_READ_SIZE)

    asyncio.run(scenario())


# After an early answer on a kept-alive connection, the rest of its body is drained, not taken for a head.


HEADER_TIMEOUT = 0.5


@pytest.fixture
def quick_deadlines() -> Iterator[tuple[str, Recorder]]:
    """A short header deadline, and an idle timer as short (for the test that waits for it)."""
    with recording_server(header_timeout=HEADER_TIMEOUT, keep_alive_timeout=2 * HEADER_TIMEOUT) as served:
        yield served


@pytest.fixture
def quick_header_deadline() -> Iterator[tuple[str, Recorder]]:
    """A short header deadline, the idle timer uvicorn's own: a client slow to go on after the early
    answer (a busy machine) must not meet the idle close instead of what the test looks at."""
    with recording_server(header_timeout=HEADER_TIMEOUT) as served:
        yield served


def test_an_early_answer_s_body_may_take_longer_than_the_header_deadline(
    quick_header_deadline: tuple[str, Recorder],
) -> None:
    url, _ = quick_header_deadline
    with connect(url) as sock:
        sock.sendall(_head(3 * 100_000, "/early"))
        assert read_response(sock).json() == _digest(b"")
        started = time.monotonic()
        for _ in range(3):  # the body's rest, slowly: three times the header deadline in all
            sock.sendall(os.urandom(100_000))
            time.sleep(HEADER_TIMEOUT)
        assert time.monotonic() - started >= 3 * HEADER_TIMEOUT
        sock.sendall(_head(2) + b"ok")
        assert read_response(sock).json() == _digest(b"ok")


def test_a_connection_idle_after_a_drained_body_is_closed_quietly(quick_deadlines: tuple[str, Recorder]) -> None:
    url, _ = quick_deadlines
    with connect(url) as sock:
        sock.sendall(_head(MIB, "/early"))
        assert read_response(sock).json() == _digest(b"")
        sock.sendall(os.urandom(MIB))
        assert sock.recv(1) == b""  # closed by the idle timer: no 408 for a head nobody began


def test_a_head_begun_with_a_drained_body_s_end_has_the_header_deadline(
    quick_header_deadline: tuple[str, Recorder],
) -> None:
    url, _ = quick_header_deadline
    with connect(url) as sock:
        sock.sendall(_head(1000, "/early"))
        assert read_response(sock).json() == _digest(b"")
        sock.sendall(os.urandom(1000) + b"POST /late HTTP/1.1\r\n")  # and never the rest of that head
        answer = read_response(sock)
        assert answer.status == 408
        assert sock.recv(1) == b""
