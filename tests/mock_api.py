"""One scripted API for the SDK and CLI tests: an `httpx.MockTransport` behind the SDK's own stack.

It is passed as the `transport` option (the CLI passes it on through
`CliState(transport=...)`), so every request goes through the SDK's retrying
transport exactly as in production.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

Reply = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


def error(status: int, message: str, error_code: str | None = None) -> httpx.Response:
    """The API's `Error` body."""
    body: dict[str, Any] = {"code": status, "message": message}
    if error_code is not None:
        body["error_code"] = error_code
    return httpx.Response(status, json=body)


@dataclass
class MockApi:
    """Replies by (method, path), in order, the last one repeating; records every request.

    A reply is a response (served afresh each time, so a retried one is unread
    again), an exception to raise, or a function of the request. An unscripted
    route gets the API's 404.
    """

    routes: dict[tuple[str, str], list[Reply]] = field(default_factory=dict)
    requests: list[httpx.Request] = field(default_factory=list)

    def on(self, method: str, path: str, *replies: Reply) -> MockApi:
        self.routes[(method.upper(), path)] = list(replies)
        return self

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        replies = self.routes.get((request.method, request.url.path))
        if not replies:
            return error(404, f"no route {request.method} {request.url.path}")
        reply = replies.pop(0) if len(replies) > 1 else replies[0]
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, httpx.Response):
            # Like a transport's: unread, and without a request attached.
            return httpx.Response(reply.status_code, headers=reply.headers, content=reply.content)
        return reply(request)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def opts(self) -> dict[str, Any]:
        """The SDK's connection options for this API."""
        return {"api_key": "test-key", "api_url": "https://api.test", "transport": self.transport()}

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) if r.content else None for r in self.requests]

    def body(self, index: int = -1) -> Any:
        return self.bodies()[index]
