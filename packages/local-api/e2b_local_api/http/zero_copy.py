"""Files sent by the kernel: the ASGI zero-copy send extension, for the server's own protocol.

A 100 MiB download through uvicorn passes every byte through Python three times (the file read, h11's
framing, the transport's buffer): 60 ms of the server's CPU. The protocol offers the extension in the
scope (`http.response.zerocopysend`); an app sends a file as one message (`file`, `offset`, `count`,
`more_body`, as the ASGI spec words it) and the bytes go from the page cache to the socket by
`loop.sendfile` (os.sendfile). h11 is told they went out. Where it would not expect them (no
`Content-Length`, a HEAD, a closing connection, another h11) the file goes as ordinary body messages.
An app that must stop mid-answer (its sandbox paused) raises `AnswerAborted`: the connection is dropped.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import IO, Any

import h11
from h11._writers import ContentLengthWriter
from uvicorn.protocols.http.h11_impl import RequestResponseCycle

ZERO_COPY_SEND = "http.response.zerocopysend"
PIECE = 1 << 20  # what goes in one body message when the kernel cannot send the file
SEND_SLICE = 4 << 20  # the most one os.sendfile call is asked to send: the event loop waits in it

App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


class AnswerAborted(Exception):
    """Raised by an app after its answer started, when the rest must not be sent: the connection is dropped.

    A body whose length was declared cannot end early in HTTP/1.1; a client sees the answer cut short.
    """


def with_zero_copy(app: App, raw_transport: Callable[[], asyncio.Transport | None]) -> App:
    """`app` with the extension offered to GET and HEAD requests whose `send` is one of uvicorn's h11 cycles."""

    async def serve(scope: dict[str, Any], receive: Any, send: Any) -> None:
        cycle = getattr(send, "__self__", None)
        # Files are fetched by GET: everything else (Connect's streams among it) goes on with no layer between.
        fetching = scope.get("type") == "http" and scope.get("method") in ("GET", "HEAD")
        if not fetching or not isinstance(cycle, RequestResponseCycle):
            await app(scope, receive, send)
            return
        scope.setdefault("extensions", {})[ZERO_COPY_SEND] = {}

        async def sending(message: dict[str, Any]) -> None:
            if message.get("type") == ZERO_COPY_SEND:
                await _send_file(cycle, raw_transport(), message)
            else:
                await send(message)

        try:
            await app(scope, receive, sending)
        except AnswerAborted:
            # Dropped, not closed: what is still buffered must not reach the client either. Marked
            # disconnected, uvicorn sends nothing more and logs no "returned without completing".
            cycle.disconnected = True
            (raw_transport() or cycle.transport).abort()

    return serve


async def _send_file(cycle: RequestResponseCycle, raw: asyncio.Transport | None, message: dict[str, Any]) -> None:
    file: IO[bytes] = message["file"]
    offset: int = message.get("offset") or 0
    count: int | None = message.get("count")
    if count is None:
        count = max(os.fstat(file.fileno()).st_size - offset, 0)
    if cycle.flow.write_paused and not cycle.disconnected:
        await cycle.flow.drain()
    if cycle.disconnected:
        return  # as uvicorn's send: a client gone away gets nothing more
    if not cycle.response_started:
        raise RuntimeError(f"Expected ASGI message 'http.response.start', but got '{ZERO_COPY_SEND}'.")
    writer = _expecting(cycle.conn, count)
    if cycle.scope["method"] == "HEAD":
        pass  # an answer to HEAD has no body
    elif writer is None or raw is None or cycle.transport.is_closing():
        await _send_in_pieces(cycle, file, offset, count)
    elif count:  # (asyncio refuses a count of 0: an empty file has nothing to send)
        try:
            sent = await _send_by_kernel(raw, file, offset, count)
        except OSError:  # the client went away mid-file (reset, broken pipe)
            cycle.disconnected = True
            raw.abort()
            return
        writer._length -= sent
        if sent < count:  # the file shrank while it was sent: the answer cannot be whole
            raise RuntimeError(f"the file ended {count - sent} bytes before its declared length")
    if not message.get("more_body", False):
        await cycle.send({"type": "http.response.body", "body": b"", "more_body": False})


async def _send_by_kernel(raw: asyncio.Transport, file: IO[bytes], offset: int, count: int) -> int:
    """`count` bytes of `file` from `offset` by `loop.sendfile`, a slice at a time; the bytes sent.

    The event loop waits inside each os.sendfile call, and a fast reader let one call run for 290 MB
    (170 ms in which no other request was served): a slice bounds it. The next slice's pages are asked
    for in a worker while this one goes (POSIX_FADV_WILLNEED), so a file not in the page cache is
    mostly read from disk off the loop.
    """
    loop = asyncio.get_running_loop()
    fd, sent = file.fileno(), 0
    while sent < count:
        size = min(SEND_SLICE, count - sent)
        after = offset + sent + size
        ahead = loop.run_in_executor(None, _read_ahead, fd, after, min(SEND_SLICE, count - sent - size))
        try:
            done = await loop.sendfile(raw, file, offset + sent, size)
        finally:
            await ahead  # never left running on a file the caller is about to close
        sent += done
        if done < size:
            break  # the file ended early
    return sent


def _read_ahead(fd: int, offset: int, size: int) -> None:
    if size > 0 and hasattr(os, "posix_fadvise"):
        try:
            os.posix_fadvise(fd, offset, size, os.POSIX_FADV_WILLNEED)
        except OSError:
            pass  # advice only


def _expecting(conn: h11.Connection, count: int) -> ContentLengthWriter | None:
    """h11's body writer, if it is sending a `Content-Length` body with `count` bytes or more still to come.

    Its writer is private, as its reader is to http_protocol's pass-through: checked against its type,
    and anything unexpected sends the file through h11.
    """
    writer = getattr(conn, "_writer", None)
    if conn.our_state is not h11.SEND_BODY or type(writer) is not ContentLengthWriter:
        return None
    left = getattr(writer, "_length", None)
    return writer if type(left) is int and count <= left else None


async def _send_in_pieces(cycle: RequestResponseCycle, file: IO[bytes], offset: int, count: int) -> None:
    end = offset + count
    while offset < end:
        piece = await asyncio.to_thread(os.pread, file.fileno(), min(PIECE, end - offset), offset)
        if not piece:
            return  # the file shrank: h11 refuses the short body at its end, as for any app
        offset += len(piece)
        await cycle.send({"type": "http.response.body", "body": piece, "more_body": True})
