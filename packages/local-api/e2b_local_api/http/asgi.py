"""The ASGI shapes the apps below starlette share (envd's routes, the port proxy), and their JSON answer.

Each of them answers an error or a small body itself, as JSON with its length declared; what differs
between them is only the fields (Connect's `code` and `message`, E2B's proxy's, envd's HTTP ones).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


async def send_json(send: Send, status: int, payload: object, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """A whole answer: `payload` as JSON, with `extra` headers after the content type and length."""
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
