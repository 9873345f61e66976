"""A cap on request bodies: `413` with the spec's `Error`, before anything is stored.

Without it a 10 MB `templateID` is stored and every later listing carries it.
A declared `Content-Length` over the cap is refused before a byte of the body
is read; a chunked body is refused as soon as it crosses the cap. Under the
cap the body is read here and handed on whole, so handlers never see a
partial one.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from e2b_local_api.errors import ApiError, error_response

__all__ = ["DEFAULT_MAX_BODY_BYTES", "BodyLimitMiddleware"]

# The largest legitimate body (a sandbox with metadata and environment
# variables) is a few kilobytes.
DEFAULT_MAX_BODY_BYTES = 1024 * 1024


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

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
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left: nothing to answer
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await error_response(self._too_large(), headers={"Connection": "close"})(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
