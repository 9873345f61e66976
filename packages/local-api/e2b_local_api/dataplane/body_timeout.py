"""envd's body timeout: a stalled request body gets the app's own error instead of holding its connection.

The control plane reads a body whole within the timeout (packages/local-api/e2b_local_api/http/body_limit.py).
envd's bodies differ, so `receive` is bounded until the body's last chunk, each app answering in its protocol:
- a Connect call sending one message (unary, server streams): the whole body within `timeout`, else
  `deadline_exceeded` (HTTP 504 for a unary call, the end message of a stream);
- a client stream (StreamInput) is not bounded: its messages may be minutes apart (the released SDK's
  keepalive is every 50 s, and its sync flavour sends what the caller's iterable yields, when it yields);
- the HTTP endpoints (`/files` uploads of hundreds of MiB): `timeout` without a byte, else `408`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from connectrpc.code import Code
from connectrpc.errors import ConnectError

from ..http.asgi import Receive
from ..wire.envd.filesystem import filesystem_pb
from ..wire.envd.process import process_pb
from .files_http import HttpError

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]

# The paths of envd's methods whose client sends a stream of messages, from the services' descriptors.
CLIENT_STREAMS = frozenset(
    f"/{service.type_name}/{method.name}"
    for module in (process_pb, filesystem_pb)
    for service in module.desc().services
    for method in service.methods
    if method.method_kind in ("client_streaming", "bidi_streaming")
)


class _BoundedReceive:
    """`receive` with a deadline until the body's last chunk; after it (disconnect listeners) unbounded.

    `idle`: the deadline restarts at each wait (no byte for `timeout`); else it is `timeout` from the start.
    """

    def __init__(self, receive: Receive, timeout: float, *, idle: bool, late: Callable[[], Exception]) -> None:
        self._receive = receive
        self._timeout = timeout
        self._idle = idle
        self._late = late
        self._deadline = asyncio.get_running_loop().time() + timeout
        self._body_done = False

    async def __call__(self) -> MutableMapping[str, Any]:
        if self._body_done:
            return await self._receive()
        if self._idle:
            self._deadline = asyncio.get_running_loop().time() + self._timeout
        try:
            async with asyncio.timeout_at(self._deadline):
                message = await self._receive()
        except TimeoutError:
            self._idle = False  # a caller asking again is refused at once, not after another wait
            raise self._late() from None
        if message["type"] != "http.request" or not message.get("more_body", False):
            self._body_done = True
        return message


def connect_body_timeout(app: ASGIApp, timeout: float) -> ASGIApp:
    """A Connect app whose one-message calls must send their body within `timeout` (`deadline_exceeded`)."""

    def late() -> Exception:
        return ConnectError(Code.DEADLINE_EXCEEDED, f"request body not received within {timeout:g} s")

    async def bounded(scope: Any, receive: Receive, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path") in CLIENT_STREAMS:
            await app(scope, receive, send)
            return
        await app(scope, _BoundedReceive(receive, timeout, idle=False, late=late), send)

    return bounded


def http_body_timeout(app: ASGIApp, timeout: float) -> ASGIApp:
    """envd's HTTP app, whose request bodies must not stall for `timeout` (`408`); a moving upload is never cut."""

    def late() -> Exception:
        return HttpError(408, f"request body stalled: no bytes received for {timeout:g} s")

    async def bounded(scope: Any, receive: Receive, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        await app(scope, _BoundedReceive(receive, timeout, idle=True, late=late), send)

    return bounded
