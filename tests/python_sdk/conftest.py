"""Fixtures for the SDK tests: the scripted API (`tests.mock_api`) and the flavours.

Each test runs once per flavour (`sdk` fixture): the sync `Sandbox` and the
async `AsyncSandbox` must behave alike. The retry sleeps are replaced by the
`sleeps` fixture (tests/conftest.py), so nothing really sleeps.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from e2b import AsyncSandbox, Sandbox

from tests.mock_api import MockApi


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


@pytest.fixture(autouse=False)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("E2B_API_KEY", "E2B_DOMAIN", "E2B_API_URL", "E2B_DEBUG"):
        monkeypatch.delenv(name, raising=False)
