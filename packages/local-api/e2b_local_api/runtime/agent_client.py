"""The server's side of the agent's socket: requests with fds out, answers and exits in.

One SOCK_SEQPACKET socket per sandbox, read by the event loop (`add_reader`):
an answer completes its request's future, an exit is handed to `on_exit`, the
socket's end (the sandbox died) fails every pending request. Requests go out
one at a time, in order of arrival, while the socket is full (`_send`).
"""

from __future__ import annotations

import array
import asyncio
import itertools
import json
import os
import socket
from collections.abc import Callable, Sequence
from typing import Any

MAX_MESSAGE = 1 << 16


class AgentGone(Exception):
    """The agent does not answer any more: its sandbox ended."""


class AgentError(Exception):
    """The agent refused a request (its reason is the message)."""


class AgentClient:
    def __init__(self, sock: socket.socket, on_exit: Callable[[int, int], None]) -> None:
        self._sock = sock
        self._sock.setblocking(False)
        self._on_exit = on_exit
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
        future = self._loop.create_future()
        self._pending[request_id] = future
        data = json.dumps({**message, "id": request_id}).encode()
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
        try:
            await self._send(data, ancillary)
            answer = await future
        finally:
            self._pending.pop(request_id, None)
        if "error" in answer:
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

    def close(self) -> None:
        self._close()


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
