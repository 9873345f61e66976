"""The server's side of the agent's socket: requests with fds out, answers and exits in.

One SOCK_SEQPACKET socket per sandbox, read by the event loop (`add_reader`):
an answer completes its request's future, an exit is handed to `on_exit`, the
socket's end (the sandbox died) fails every pending request and calls
`on_gone`. Requests go out one at a time, in order of arrival, while the socket
is full (`_send`); one larger than MAX_REQUEST is refused before it is sent.
"""

from __future__ import annotations

import array
import asyncio
import errno
import itertools
import json
import os
import socket
from collections.abc import Callable, Sequence
from typing import Any

MAX_MESSAGE = 1 << 16
# The largest request sent. A SOCK_SEQPACKET message must fit in its socket's send buffer, which a process can
# raise to twice net.core.wmem_max (208 KiB by default, so 416 KiB); this fits anywhere and under the agent's
# MAX_MESSAGE.
MAX_REQUEST = 200 * 1024


class AgentGone(Exception):
    """The agent does not answer any more: its sandbox ended."""


class AgentError(Exception):
    """The agent refused a request (its reason is the message)."""


class RequestTooLarge(AgentError):
    """A request longer than MAX_REQUEST: it was not sent, and the agent is as it was."""

    def __init__(self, size: int) -> None:
        super().__init__(f"the request takes {size} bytes, more than the {MAX_REQUEST} one message can hold")
        self.size = size


class AgentClient:
    def __init__(
        self, sock: socket.socket, on_exit: Callable[[int, int], None], on_gone: Callable[[], None] = lambda: None
    ) -> None:
        self._sock = sock
        self._sock.setblocking(False)
        # Room for one MAX_REQUEST message whatever net.core.wmem_default is (the kernel doubles what is asked).
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, MAX_REQUEST)
        self._on_exit = on_exit
        self._on_gone = on_gone
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._loop = asyncio.get_running_loop()
        self.ready: asyncio.Future[int] = self._loop.create_future()
        self.gone = False
        # asyncio keeps one writer callback per fd: a second waiter's add_writer would replace the first's (never
        # woken) and each remove_writer would drop the others'. So one request at a time waits for room.
        self._send_turn = asyncio.Lock()
        self._room: asyncio.Future[None] | None = None  # the one request waiting for room, woken by `_close` too
        self._loop.add_reader(sock.fileno(), self._readable)

    async def request(self, message: dict[str, Any], fds: Sequence[int] = ()) -> dict[str, Any]:
        if self.gone:
            raise AgentGone("the sandbox's agent has ended")
        request_id = next(self._ids)
        # The id first: a message the agent gets cut short still names the request its refusal answers.
        data = json.dumps({"id": request_id, **message}).encode()
        if len(data) > MAX_REQUEST:
            raise RequestTooLarge(len(data))
        future = self._loop.create_future()
        self._pending[request_id] = future
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
        try:
            await self._send(data, ancillary)
            answer = await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled() and future.exception() is None:
                for fd in future.result()["fds"]:  # answered just before the cancel: nobody will take them
                    os.close(fd)
            raise
        finally:
            self._pending.pop(request_id, None)
            if future.done() and not future.cancelled():
                future.exception()  # the send's own error was raised instead: this one is not worth a warning
        if "error" in answer:
            for fd in answer["fds"]:  # a refusal passes none; a tampered agent's must not stay open here
                os.close(fd)
            raise AgentError(answer["error"])
        return dict(answer)

    async def _send(self, data: bytes, ancillary: list[Any]) -> None:
        async with self._send_turn:
            while True:
                if self.gone:
                    raise AgentGone("the sandbox's agent has ended")
                try:
                    self._sock.sendmsg([data], ancillary)
                    return
                except BlockingIOError:
                    await self._wait_for_room()
                except OSError as error:
                    if error.errno == errno.EMSGSIZE:
                        # The kernel refused this one message (a smaller buffer than asked): the agent is fine.
                        raise RequestTooLarge(len(data)) from error
                    self._close()
                    raise AgentGone(f"the sandbox's agent has ended ({error.strerror})") from error

    async def _wait_for_room(self) -> None:
        fd = self._sock.fileno()
        room: asyncio.Future[None] = self._loop.create_future()
        self._room = room
        self._loop.add_writer(fd, _settle, room)
        try:
            await room
        finally:
            self._room = None
            if not self.gone:  # else _close unregistered it, before the fd was closed and its number free again
                self._loop.remove_writer(fd)

    def _readable(self) -> None:
        while True:
            fds: list[int] = []
            try:
                data, ancillary, _, _ = self._sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(4 * 4))
            except BlockingIOError:
                return
            except OSError:
                data, ancillary = b"", []
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.extend(array.array("i", payload[: len(payload) - len(payload) % 4]))
            if not data:
                self._close()
                return
            try:
                message = json.loads(data)
                if not isinstance(message, dict):
                    raise TypeError("not an object")
                if "exit" in message:
                    self._on_exit(int(message["exit"]), int(message["status"]))
                    continue
            except (ValueError, KeyError, TypeError, OverflowError):
                # The agent lives inside the sandbox, where root could tamper with it: a message
                # that does not parse ends this sandbox's agent, nothing else.
                for fd in fds:
                    os.close(fd)
                self._close()
                return
            if "ready" in message:
                if not self.ready.done():
                    self.ready.set_result(message["ready"])
            else:
                future = self._pending.get(message.get("id", -1))
                if future is not None and not future.done():
                    future.set_result({**message, "fds": fds})
                else:
                    for fd in fds:
                        os.close(fd)

    def _close(self) -> None:
        if self.gone:
            return
        self.gone = True
        self._loop.remove_reader(self._sock.fileno())
        if self._room is not None:
            # Closing the socket drops it from epoll: its waiter would never be woken, and would hold the turn.
            self._loop.remove_writer(self._sock.fileno())
            _settle(self._room)
        self._sock.close()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(AgentGone("the sandbox's agent has ended"))
        if not self.ready.done():
            self.ready.set_exception(AgentGone("the sandbox's agent did not start"))
        self._on_gone()

    def close(self) -> None:
        self._close()


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
