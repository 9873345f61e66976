"""Scripted inner responses and a fake clock for the unit tests.

A script is a list of items: bytes are chunks, a float advances the fake
clock before the next item (a slow network), an exception is raised by the
read, and ``STALL`` blocks an async read until cancelled.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from e2b._transport import AsyncRetryableTransport, RetryableTransport, RetryPolicy

STALL = object()
REFUSAL = json.dumps({"code": 503, "message": "pause refused", "error_code": "sandbox_pause_refused"}).encode()
BUSY = json.dumps({"code": 503, "message": "busy", "error_code": "busy"}).encode()
NO_CODE = json.dumps({"code": 503, "message": "busy"}).encode()
JSON = {"content-type": "application/json"}


@dataclass
class FakeTime:
    now: float = 100.0
    sleeps: list[float] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


class _Scripted:
    def __init__(self, items: Sequence[object], time: FakeTime) -> None:
        self.items = list(items)
        self.time = time
        self.closes = 0
        self.yielded = 0

    def _steps(self) -> Iterator[object]:
        for item in self.items:
            if isinstance(item, float):
                self.time.now += item
            elif isinstance(item, BaseException):
                raise item
            else:
                yield item


class SyncScripted(_Scripted, httpx.SyncByteStream):
    def __iter__(self) -> Iterator[bytes]:
        for item in self._steps():
            assert isinstance(item, bytes)
            self.yielded += 1
            yield item

    def close(self) -> None:
        self.closes += 1


class AsyncScripted(_Scripted, httpx.AsyncByteStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        for item in self._steps():
            if item is STALL:
                await asyncio.Event().wait()
            assert isinstance(item, bytes)
            self.yielded += 1
            yield item

    async def aclose(self) -> None:
        self.closes += 1


@dataclass
class Reply:
    status: int = 503
    body: Sequence[object] = (BUSY,)
    headers: dict[str, str] = field(default_factory=lambda: dict(JSON))


@dataclass
class Harness:
    """Runs one request through either flavour against scripted replies."""

    is_async: bool
    replies: list[Reply]
    policy: RetryPolicy = field(default_factory=lambda: RetryPolicy(retries=3))
    time: FakeTime = field(default_factory=FakeTime)
    streams: list[_Scripted] = field(default_factory=list)
    requests: list[httpx.Request] = field(default_factory=list)

    def _handler(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        reply = self.replies[min(len(self.requests) - 1, len(self.replies) - 1)]
        cls = AsyncScripted if self.is_async else SyncScripted
        stream = cls(reply.body, self.time)
        self.streams.append(stream)
        return httpx.Response(reply.status, headers=reply.headers, stream=stream)

    async def _ahandler(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        return self._handler(request)

    def transport(self) -> RetryableTransport | AsyncRetryableTransport:
        if self.is_async:
            return AsyncRetryableTransport(
                httpx.MockTransport(self._ahandler),
                self.policy,
                clock=self.time.clock,
                sleep=self.time.asleep,
                random=lambda: 0.0,
            )
        return RetryableTransport(
            httpx.MockTransport(self._handler),
            self.policy,
            clock=self.time.clock,
            sleep=self.time.sleep,
            random=lambda: 0.0,
        )

    async def send(self, **kwargs: Any) -> tuple[httpx.Response, bytes]:
        """Streams the response and returns it with its raw body."""
        kwargs.setdefault("timeout", 30.0)
        transport = self.transport()
        if self.is_async:
            assert isinstance(transport, AsyncRetryableTransport)
            async with httpx.AsyncClient(transport=transport) as client:
                request = client.build_request("POST", "http://api.test/pause", **kwargs)
                response = await client.send(request, stream=True)
                try:
                    body = b"".join([c async for c in response.aiter_raw()])
                finally:
                    await response.aclose()
                return response, body
        assert isinstance(transport, RetryableTransport)
        with httpx.Client(transport=transport) as client:
            request = client.build_request("POST", "http://api.test/pause", **kwargs)
            response = client.send(request, stream=True)
            try:
                body = b"".join(response.iter_raw())
            finally:
                response.close()
            return response, body

    def closes(self) -> list[int]:
        return [s.closes for s in self.streams]
