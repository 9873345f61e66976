"""uvicorn's h11 protocol with a deadline on request headers.

uvicorn times out idle keep-alive connections, but any byte received cancels
that timer, and nothing bounds how long a request's headers may take: a client
sending one byte a second holds its connection (and a slot) for hours, since
the 16 KiB header cap is the only limit. Here every request's headers must be
complete within `header_timeout` seconds of the connection opening or of the
previous response: a client that started sending gets a `408` with the spec's
`Error` body, an idle one is closed quietly. A malformed request's `400` is
an `Error` body too, instead of uvicorn's plain text.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from e2b_local_api.wire.models import Error

__all__ = ["DEFAULT_HEADER_TIMEOUT", "MAX_HEADER_BYTES", "HeaderDeadlineProtocol", "server_config"]

DEFAULT_HEADER_TIMEOUT = 10.0
# Request line plus headers: well above what the SDK, curl or a browser send,
# and enough for a 10,000-character sandbox id in the path.
MAX_HEADER_BYTES = 32 * 1024


def _raw_error(status: int, reason: str, message: str) -> bytes:
    body = json.dumps(Error(code=status, message=message).model_dump(exclude_none=True)).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class HeaderDeadlineProtocol(H11Protocol):
    """`H11Protocol`, plus the header deadline; `header_timeout` is set per server."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_deadline: asyncio.TimerHandle | None = None
        self._started_request = False

    def _arm_header_deadline(self) -> None:
        self._cancel_header_deadline()
        self._started_request = False
        self._header_deadline = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _cancel_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_deadline()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        cycle = self.cycle
        self._started_request = self._started_request or bool(data)
        super().data_received(data)
        if self.cycle is not cycle:  # the headers are complete: a new request cycle began
            self._cancel_header_deadline()

    def on_response_complete(self) -> None:
        cycle = self.cycle
        self._arm_header_deadline()
        super().on_response_complete()
        if self.cycle is not cycle:  # a pipelined request was already waiting
            self._cancel_header_deadline()

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        if self.transport.is_closing():
            return
        if self._started_request and self.conn.their_state is h11.IDLE:
            message = f"request headers not received within {self.header_timeout:g} s"
            self.transport.write(_raw_error(408, "Request Timeout", message))
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        # h11 refused the request (malformed, or headers over MAX_HEADER_BYTES).
        message = f"malformed HTTP request, or its headers exceed {MAX_HEADER_BYTES} bytes"
        self.transport.write(_raw_error(400, "Bad Request", message))
        self.transport.close()


def server_config(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 3000,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT,
    log_level: str = "info",
) -> uvicorn.Config:
    """The uvicorn settings the `e2b-local-api` command serves with (tests use them too)."""
    protocol = type("HeaderDeadlineProtocol", (HeaderDeadlineProtocol,), {"header_timeout": header_timeout})
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        timeout_keep_alive=5,
        log_level=log_level,
        lifespan="on",
    )
