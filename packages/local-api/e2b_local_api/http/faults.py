"""Faults on demand, for testing HTTP transports against a real socket.

A fault is armed through the control surface for the next `count` requests (optionally of one
operation) and spent first armed, first. Kinds: busy (a plain 503), trickle, stall, oversize, drop.

How it works, and why: docs/maintainers/packages.md, "packages/local-api/e2b_local_api/http/faults.py".
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Literal

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from e2b_local_api.http.operations import operation_for
from e2b_local_api.http.zero_copy import ZERO_COPY_SEND

FaultKind = Literal["busy", "trickle", "stall", "oversize", "drop"]


class DroppedConnection(Exception):
    """Raised after a partial body: the ASGI server then closes the socket."""


@dataclass
class Fault:
    kind: FaultKind
    remaining: int
    operation: str | None = None
    delay: float = 0.05
    chunk_size: int = 1
    after_bytes: int = 0
    size: int = 64 * 1024
    retry_after: float | None = None

    def describe(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "remaining": self.remaining,
            "operation": self.operation,
            "delay": self.delay,
            "chunk_size": self.chunk_size,
            "after_bytes": self.after_bytes,
            "size": self.size,
            "retry_after": self.retry_after,
        }


class FaultQueue:
    def __init__(self) -> None:
        self._faults: list[Fault] = []

    def arm(self, fault: Fault) -> None:
        self._faults.append(fault)

    def clear(self) -> None:
        self._faults.clear()

    def pending(self) -> list[Fault]:
        return list(self._faults)

    def take(self, operation: str) -> Fault | None:
        """Spend one use of the first fault that matches; no await, so no race."""
        for fault in self._faults:
            if fault.operation in (None, operation):
                fault.remaining -= 1
                if fault.remaining <= 0:
                    self._faults.remove(fault)
                return fault
        return None


BUSY_BODY = {"code": 503, "message": "the service is busy, retry later"}


class FaultMiddleware:
    def __init__(self, app: ASGIApp, faults: FaultQueue) -> None:
        self.app = app
        self.faults = faults

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        operation = operation_for(scope["method"], scope["path"]) if scope["type"] == "http" else None
        fault = self.faults.take(operation) if operation is not None else None
        if fault is None:
            await self.app(scope, receive, send)
        elif fault.kind == "busy":
            await _send_busy(send, fault)
        else:
            await _send_shaped(fault, await _capture(self.app, scope, receive), send)


async def _send_busy(send: Send, fault: Fault) -> None:
    body = json.dumps(BUSY_BODY).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if fault.retry_after is not None:
        headers.append((b"retry-after", f"{fault.retry_after:g}".encode()))
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@dataclass
class _Captured:
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes


async def _capture(app: ASGIApp, scope: Scope, receive: Receive) -> _Captured:
    """Run the app to completion and keep its response, to re-send it shaped."""
    start: Message = {}
    chunks: list[bytes] = []

    async def keep(message: Message) -> None:
        nonlocal start
        if message["type"] == "http.response.start":
            start = message
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    # A file sent by the kernel would pass by `keep`: the app must send its body as messages here.
    extensions = {k: v for k, v in (scope.get("extensions") or {}).items() if k != ZERO_COPY_SEND}
    await app({**scope, "extensions": extensions}, receive, keep)
    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
    return _Captured(start.get("status", 500), headers, b"".join(chunks))


async def _send_shaped(fault: Fault, response: _Captured, send: Send) -> None:
    body = response.body
    if fault.kind == "oversize":
        body += b" " * fault.size
    headers = [*response.headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": response.status, "headers": headers})

    async def part(data: bytes, more: bool = True) -> None:
        await send({"type": "http.response.body", "body": data, "more_body": more})

    if fault.kind == "trickle":
        step = max(fault.chunk_size, 1)
        for offset in range(0, len(body), step):
            if offset:
                await asyncio.sleep(fault.delay)
            await part(body[offset : offset + step])
        await part(b"", more=False)
    elif fault.kind == "stall":
        await part(body[: fault.after_bytes])
        await asyncio.sleep(fault.delay)
        await part(body[fault.after_bytes :], more=False)
    elif fault.kind == "drop":
        await part(body[: min(fault.after_bytes, max(len(body) - 1, 0))])
        raise DroppedConnection(f"fault: connection dropped after {fault.after_bytes} bytes")
    else:  # oversize
        await part(body, more=False)
