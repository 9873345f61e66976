"""uvicorn's h11 protocol, with bounds on headers and idle connections, a lingering close, fast bodies.

A header deadline (`408`), a header cap measured however the head arrives (`431`), a refusal of
both `Content-Length` and `Transfer-Encoding` (`400`, connection closed), idle keep-alive
connections closed after `keep_alive_timeout`, and a lingering close after an early answer; every
refusal carries the spec's `Error` body. A `Content-Length` body's middle reaches the app past h11;
an app may send a file by the kernel (packages/local-api/e2b_local_api/http/zero_copy.py).

How it works, and why: docs/maintainers/packages.md, "packages/local-api/e2b_local_api/http/http_protocol.py".
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
import uvicorn
from h11._readers import ContentLengthReader
from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
from uvicorn.protocols.http.h11_impl import H11Protocol

from e2b_local_api.http.zero_copy import with_zero_copy
from e2b_local_api.wire.models import Error

__all__ = [
    "AMBIGUOUS_FRAMING",
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_KEEP_ALIVE_TIMEOUT",
    "LINGER_MAX_BYTES",
    "LINGER_TIMEOUT",
    "MAX_HEADER_BYTES",
    "HardenedH11Protocol",
    "server_config",
]

DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_KEEP_ALIVE_TIMEOUT = 15.0
# Request line plus headers: well above what the SDK, curl or a browser send,
# and enough for a 10,000-character sandbox id in the path.
MAX_HEADER_BYTES = 32 * 1024
# Enough for a client to finish writing a body many times the 1 MiB cap
# before it reads the 413; loopback drains that in well under a second.
LINGER_TIMEOUT = 5.0
LINGER_MAX_BYTES = 64 * 1024 * 1024
# While at least this much of a body is still to come, the socket is read this much at a time instead
# of asyncio's 256 KiB: a quarter of the per-read work, a 100 MiB upload 5 to 16 % faster.
BODY_READ_SIZE = 1 << 20

_REASONS = {400: "Bad Request", 408: "Request Timeout", 431: "Request Header Fields Too Large"}
AMBIGUOUS_FRAMING = "a request may not have both Content-Length and Transfer-Encoding"


def _raw_error(status: int, message: str) -> bytes:
    body = json.dumps(Error(code=status, message=message).model_dump(exclude_none=True)).encode()
    head = (
        f"HTTP/1.1 {status} {_REASONS[status]}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class _HeadCappedConnection(h11.Connection):
    """h11's server side, with `max_head_bytes` applied to complete heads too; keeps its last refusal."""

    def __init__(self, max_head_bytes: int) -> None:
        # h11 refuses (431) an incomplete head once its buffer passes this size.
        super().__init__(h11.SERVER, max_incomplete_event_size=max_head_bytes)
        self.max_head_bytes = max_head_bytes
        self.refusal: h11.RemoteProtocolError | None = None

    def next_event(self) -> Any:
        try:
            if self.their_state is not h11.IDLE:
                return super().next_event()
            # Waiting for a head: everything buffered starts with it, so what a
            # parsed Request took off the buffer is the head's exact size.
            buffered = len(self.trailing_data[0])
            event = super().next_event()
            if isinstance(event, h11.Request):
                if buffered - len(self.trailing_data[0]) > self.max_head_bytes:
                    raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
                names = {name for name, _ in event.headers}
                if b"content-length" in names and b"transfer-encoding" in names:
                    raise h11.RemoteProtocolError(AMBIGUOUS_FRAMING, error_status_hint=400)
            return event
        except h11.RemoteProtocolError as exc:
            self.refusal = exc
            raise


def _fixed_length_left(conn: h11.Connection) -> int | None:
    """The bytes a `Content-Length` body still lacks when h11 holds none of them; None otherwise.

    h11 has no public way to read a body past it: its reader and buffer are private, so this is
    checked against their types, and anything unexpected (another h11) leaves the body to h11.
    """
    reader = getattr(conn, "_reader", None)
    if conn.their_state is not h11.SEND_BODY or type(reader) is not ContentLengthReader:
        return None
    buffered = getattr(conn, "_receive_buffer", None)
    if buffered is None or len(buffered):
        return None
    left = getattr(reader, "_remaining", None)
    return left if type(left) is int else None


def _read_past(conn: h11.Connection, size: int) -> None:
    """Tell h11's body reader that `size` bytes of its body were read without it."""
    conn._reader._remaining -= size  # type: ignore[union-attr]


class _LingeringTransport(asyncio.Transport):
    """The connection's transport as uvicorn sees it: its `close()` is the protocol's `close_connection()`."""

    def __init__(self, transport: asyncio.Transport, protocol: HardenedH11Protocol) -> None:
        super().__init__()
        self._transport = transport
        self._protocol = protocol

    def close(self) -> None:
        self._protocol.close_connection()

    def is_closing(self) -> bool:
        # A lingering connection is closed as far as HTTP goes: nothing more is written.
        return self._protocol.lingering or self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._transport.write(data)

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def write_eof(self) -> None:
        self._transport.write_eof()

    def abort(self) -> None:
        self._transport.abort()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()


class HardenedH11Protocol(H11Protocol):
    """`H11Protocol` with the header deadline and cap and the lingering close; settings per server."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    linger_timeout: float = LINGER_TIMEOUT
    linger_max_bytes: int = LINGER_MAX_BYTES

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.app = with_zero_copy(self.app, lambda: self._raw_transport)
        self._capped = _HeadCappedConnection(MAX_HEADER_BYTES)
        self.conn = self._capped
        self._raw_transport: asyncio.Transport | None = None
        self._read_size: int | None = None  # asyncio's own, where its transport has one
        self._header_deadline: asyncio.TimerHandle | None = None
        self._awaiting_head = True  # no request in progress: the next bytes start a head
        self._head_started = False
        self.lingering = False
        self._linger_end: asyncio.TimerHandle | None = None
        self._drained = 0
        self._lost = False
        self._shutting_down = False

    # The header deadline.

    def _arm_header_deadline(self) -> None:
        self._cancel_header_deadline()
        self._header_deadline = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _cancel_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._raw_transport = transport
        size = getattr(transport, "max_size", None)  # asyncio's selector transport reads this much at once
        self._read_size = size if type(size) is int else None
        super().connection_made(_LingeringTransport(transport, self))
        self._arm_header_deadline()  # a new connection: idle time counts too

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self._cancel_header_deadline()
        self._end_linger()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.lingering:
            self._drain(data)
            return
        # After an early answer the rest of its request's body may still come: not a head.
        if self._awaiting_head and data and self.conn.their_state is h11.IDLE:
            self._head_started = True
            if self._header_deadline is None:  # a kept-alive connection: the clock starts now
                self._arm_header_deadline()
        if self._passed_through(data):
            return
        cycle = self.cycle
        super().data_received(data)
        if self.cycle is not cycle:  # the head is complete: a new request cycle began
            self._head_complete()
        elif self._awaiting_head and self._header_deadline is None and self.conn.their_state is h11.IDLE:
            self._body_drained()

    def _body_drained(self) -> None:
        """An early answer's unread body has ended: the connection waits for a head from now on."""
        if self.conn.trailing_data[0]:  # the next head began in the body's last read
            self._head_started = True
            self._arm_header_deadline()
        elif self.timeout_keep_alive_task is None:  # the body's bytes stopped uvicorn's idle timer
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )

    # A body's bytes straight to the request.

    def _passed_through(self, data: bytes) -> bool:
        """Hand a piece of a `Content-Length` body to the request as it came, past h11; False: h11 reads it.

        Through h11 and uvicorn, each piece of a body is copied four times (h11's buffer, its slice,
        uvicorn's body buffer, the bytes the app receives), which held an upload at a sixth of a
        local copy's speed. A piece that neither starts nor ends the body is the bytes the socket
        gave, so it goes to the request as they are, and h11 is told it was read. The body's last
        piece goes through h11, which then ends the message as usual.
        """
        left = _fixed_length_left(self.conn)
        if left is None or len(data) >= left:
            self._read_in(self._read_size)
            return False
        self._read_in(BODY_READ_SIZE if left - len(data) >= BODY_READ_SIZE else self._read_size)
        self._unset_keepalive_if_required()
        _read_past(self.conn, len(data))
        if self.conn.our_state is h11.DONE:
            return True  # answered already: uvicorn drops the rest of the body too
        cycle = self.cycle
        pending = cycle.body
        # uvicorn's receive() hands over bytes(cycle.body): the very object when it is bytes.
        cycle.body = pending + data if pending else data  # type: ignore[assignment]
        # uvicorn stops reading at every piece over 64 KiB until the app takes it, and starts again
        # (two epoll_ctl calls a piece, a fifth of an upload's time); here only once a piece finds
        # the last one not taken yet: two reads (BODY_READ_SIZE each at most) wait at most.
        if pending and len(cycle.body) > HIGH_WATER_LIMIT:
            self.flow.pause_reading()
        cycle.message_event.set()
        return True

    def _head_complete(self) -> None:
        self._cancel_header_deadline()
        self._awaiting_head = False
        self._head_started = False

    def on_response_complete(self) -> None:
        cycle = self.cycle
        self._awaiting_head = True
        super().on_response_complete()
        if self.cycle is not cycle:  # a pipelined request was already waiting
            self._head_complete()
        elif not self.transport.is_closing() and self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
            self._head_started = True  # part of the next head is already in
            self._arm_header_deadline()

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        if self.transport.is_closing():
            return
        if self._head_started and self.conn.their_state is h11.IDLE:
            self.transport.write(_raw_error(408, f"request headers not received within {self.header_timeout:g} s"))
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        # h11 refused the request: malformed, or its head over MAX_HEADER_BYTES.
        refusal = self._capped.refusal
        if refusal is not None and refusal.error_status_hint == 431:
            answer = _raw_error(431, f"request headers exceed {MAX_HEADER_BYTES} bytes")
        elif refusal is not None and str(refusal) == AMBIGUOUS_FRAMING:
            answer = _raw_error(400, AMBIGUOUS_FRAMING)
        else:
            answer = _raw_error(400, "malformed HTTP request")
        self.transport.write(answer)
        self.transport.close()

    def _read_in(self, size: int | None) -> None:
        """Have the transport read the socket `size` bytes at a time (None: leave it as it is)."""
        if size is not None and self._read_size is not None and self._raw_transport is not None:
            self._raw_transport.max_size = size  # type: ignore[attr-defined]

    # The lingering close.

    def close_connection(self) -> None:
        """Close, lingering first if the client may still be sending (uvicorn's `transport.close()`).

        The linger ends at the client's EOF (uvicorn's `eof_received` lets
        asyncio close the transport), past `linger_max_bytes` or after
        `linger_timeout`.
        """
        raw = self._raw_transport
        if raw is None or self.lingering:
            return  # a lingering connection closes itself: client EOF, byte cap or time limit
        if self._lost or self._shutting_down or raw.is_closing() or not self._client_may_be_sending():
            raw.close()
            return
        self.lingering = True
        self._cancel_header_deadline()
        self._unset_keepalive_if_required()
        if raw.can_write_eof():
            raw.write_eof()  # after what is buffered: the answer goes out whole, then our FIN
        raw.resume_reading()
        self._linger_end = self.loop.call_later(self.linger_timeout, self._end_linger)

    def _client_may_be_sending(self) -> bool:
        state = self.conn.their_state
        if state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED):
            return False  # the request was read to its end
        return state is not h11.IDLE or self._head_started

    def _drain(self, data: bytes) -> None:
        self._drained += len(data)
        if self._drained > self.linger_max_bytes:
            self._end_linger()

    def _end_linger(self) -> None:
        if self._linger_end is not None:
            self._linger_end.cancel()
            self._linger_end = None
        if self.lingering and self._raw_transport is not None:
            self._raw_transport.close()

    def shutdown(self) -> None:
        self._shutting_down = True
        if self.lingering:
            self._end_linger()
            return
        super().shutdown()


def server_config(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 3000,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT,
    keep_alive_timeout: float = DEFAULT_KEEP_ALIVE_TIMEOUT,
    linger_timeout: float = LINGER_TIMEOUT,
    linger_max_bytes: int = LINGER_MAX_BYTES,
    log_level: str = "info",
) -> uvicorn.Config:
    """The uvicorn settings the `e2b-local-api` command serves with (tests use them too)."""
    settings = {
        "header_timeout": header_timeout,
        "linger_timeout": linger_timeout,
        "linger_max_bytes": linger_max_bytes,
    }
    protocol = type("HardenedH11Protocol", (HardenedH11Protocol,), settings)
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        timeout_keep_alive=keep_alive_timeout,  # type: ignore[arg-type]
        log_level=log_level,
        lifespan="on",
    )
