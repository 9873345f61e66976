"""`stream_input` and its handle, async: written by hand in both flavours, since their APIs differ (as in 2.x).

The async flavour opens one StreamInput call and returns a handle to `send()`
chunks into it, in order, until `close()`; a keep-alive goes out when the
caller is quiet. The sync flavour (`e2b.sandbox._flavour_sync.
command_input_handle`) sends an iterable of chunks in one call. `Commands`
and `Pty` get `stream_input` from this module's `AsyncStreamingInput`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from e2b._exceptions import SandboxException
from e2b.envd.process import process_pb
from e2b.sandbox import arguments
from e2b.sandbox.commands.stream_input import (
    STREAM_INPUT_TIMEOUT,
    InputKind,
    data_request,
    keepalive_request,
    start_request,
)
from e2b.sandbox.envd_endpoint import KEEPALIVE_PING_INTERVAL

if TYPE_CHECKING:
    from e2b.sandbox_async.envd_client import EnvdClient

__all__ = ["AsyncCommandInputHandle", "AsyncStreamingInput"]

_CLOSE = object()


class AsyncCommandInputHandle:
    """An open input stream to a process: `send()` chunks in order, then `close()` (or use `async with`)."""

    def __init__(
        self,
        envd: EnvdClient,
        pid: int,
        kind: InputKind,
        timeout: float | None,
        keepalive: float = KEEPALIVE_PING_INTERVAL,
    ) -> None:
        self._envd = envd
        self._pid = pid
        self._kind = kind
        self._keepalive = keepalive
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._closing = False
        self._failure: BaseException | None = None
        self._task = asyncio.get_running_loop().create_task(self._run(timeout))

    async def send(self, data: str | bytes) -> None:
        """Queue `data` (str is sent as UTF-8) after what was sent before."""
        if self._failure is not None:
            raise self._failure
        if self._closing or self._task.done():
            raise SandboxException("the input stream is closed: open another with stream_input(pid)")
        self._queue.put_nowait(data_request(self._kind, data))

    async def close(self) -> None:
        """Send what is queued, end the stream, and raise what made it fail, if anything did."""
        if not self._closing:
            self._closing = True
            self._queue.put_nowait(_CLOSE)
        await asyncio.shield(self._task)
        if self._failure is not None:
            raise self._failure

    async def __aenter__(self) -> AsyncCommandInputHandle:
        """The handle itself, closed when the block ends."""
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close the handle, however the block ended."""
        await self.close()

    async def _run(self, timeout: float | None) -> None:
        try:
            await self._envd.process.stream_input(
                self._requests(),
                headers=self._envd.stream_headers(stream_timeout=timeout),
            )
        except Exception as error:
            self._failure = await self._envd.failure(error)

    async def _requests(self) -> AsyncIterator[process_pb.StreamInputRequest]:
        yield start_request(self._pid)
        while True:
            try:
                item = await asyncio.wait_for(self._queue.get(), self._keepalive)
            except TimeoutError:
                yield keepalive_request()
                continue
            if item is _CLOSE:
                return
            assert isinstance(item, process_pb.StreamInputRequest)
            yield item


class AsyncStreamingInput:
    """What `Commands` (stdin) and `Pty` (the terminal) inherit to stream input to a process."""

    _envd: EnvdClient
    _input_kind: InputKind

    def stream_input(self, pid: int, *, timeout: float | None = STREAM_INPUT_TIMEOUT) -> AsyncCommandInputHandle:
        """An input stream to the process `pid`, open up to `timeout` seconds (0 or None: no limit).

        Chunks arrive in the order sent, which separate `send_stdin` calls do not promise.
        """
        stream_timeout = arguments.stream_timeout("timeout", timeout)
        return AsyncCommandInputHandle(self._envd, arguments.pid(pid), self._input_kind, stream_timeout)
