"""Fixtures for the SDK tests: a scripted API behind the SDK's own transport stack.

The scripted API is an `httpx.MockTransport`, passed as the `transport`
option, so every request goes through the SDK's retrying transport exactly as
in production; only the retry sleeps are replaced, so nothing really sleeps.
Each test runs once per flavour (`sdk` fixture): the sync `Sandbox` and the
async `AsyncSandbox` must behave alike.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import e2b._http
import httpx
import pytest
from e2b import AsyncSandbox, Sandbox

Reply = httpx.Response | Callable[[httpx.Request], httpx.Response]


@dataclass
class MockApi:
    """Replies by (method, path), in order, the last one repeating; records every request."""

    routes: dict[tuple[str, str], list[Reply]] = field(default_factory=dict)
    requests: list[httpx.Request] = field(default_factory=list)

    def on(self, method: str, path: str, *replies: Reply) -> MockApi:
        self.routes[(method.upper(), path)] = list(replies)
        return self

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        replies = self.routes.get((request.method, request.url.path))
        if not replies:
            return httpx.Response(599, text=f"no route for {request.method} {request.url.path}")
        reply = replies.pop(0) if len(replies) > 1 else replies[0]
        return reply(request) if callable(reply) else _fresh(reply)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def opts(self) -> dict[str, Any]:
        return {"api_key": "test-key", "api_url": "https://api.test", "transport": self.transport()}

    def body(self, index: int = -1) -> Any:
        content = self.requests[index].content
        return json.loads(content) if content else None


def _fresh(template: httpx.Response) -> httpx.Response:
    # A reply may be served more than once (retries); each must be unread, and,
    # like a transport's, without a request attached.
    return httpx.Response(template.status_code, headers=template.headers, content=template.content)


@dataclass
class Flavour:
    """One SDK flavour; `call` awaits what the async flavour returns."""

    name: str
    cls: type[Sandbox] | type[AsyncSandbox]

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        return await result if inspect.isawaitable(result) else result


@pytest.fixture(params=["sync", "async"])
def sdk(request: pytest.FixtureRequest) -> Flavour:
    return Flavour(request.param, Sandbox if request.param == "sync" else AsyncSandbox)


@pytest.fixture
def api() -> MockApi:
    return MockApi()


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Replace the retry sleeps of both flavours; returns what they were asked to wait."""
    waited: list[float] = []

    async def async_sleep(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(e2b._http, "retry_sleep", waited.append)
    monkeypatch.setattr(e2b._http, "async_retry_sleep", async_sleep)
    return waited


@pytest.fixture(autouse=False)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("E2B_API_KEY", "E2B_DOMAIN", "E2B_API_URL", "E2B_DEBUG"):
        monkeypatch.delenv(name, raising=False)
