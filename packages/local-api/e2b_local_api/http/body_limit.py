"""A cap on request bodies, in size and in time, answered with the spec's `Error`.

Without it a 10 MB `templateID` is stored and every later listing carries it.
A declared `Content-Length` over the cap is refused (`413`) before a byte of
the body is read; a chunked body is refused as soon as it crosses the cap. A
body that does not arrive whole within `timeout` seconds gets a `408`, so a
client trickling its body holds no connection for long (the header deadline,
in `http_protocol`, covers what comes before). Under both caps the body is
read here and handed on whole, so handlers never see a partial one.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from e2b_local_api.http.errors import ApiError, error_response

__all__ = ["DEFAULT_BODY_TIMEOUT", "DEFAULT_MAX_BODY_BYTES", "BodyLimitMiddleware"]

# The largest legitimate body (a sandbox with metadata and environment
# variables) is a few kilobytes.
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
DEFAULT_BODY_TIMEOUT = 10.0


class BodyLimitMiddleware:
    def __init__(
        self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY_BYTES, timeout: float = DEFAULT_BODY_TIMEOUT
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout = timeout

    def _too_large(self) -> ApiError:
        return ApiError(413, f"request body too large: the limit is {self.max_bytes} bytes")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await error_response(self._too_large(), headers={"Connection": "close"})(scope, receive, send)
            return
        try:
            async with asyncio.timeout(self.timeout):
                chunks = await self._read(receive)
        except TimeoutError:
            late = ApiError(408, f"request body not received within {self.timeout:g} s")
            await error_response(late, headers={"Connection": "close"})(scope, receive, send)
            return
        if chunks is None:  # the client left: nothing to answer
            return
        if isinstance(chunks, ApiError):
            await error_response(chunks, headers={"Connection": "close"})(scope, receive, send)
            return
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _read(self, receive: Receive) -> list[bytes] | ApiError | None:
        """The body's chunks; an `ApiError` once it crosses the cap; None if the client left."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return self._too_large()
            chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks
