"""Fixtures for the data-plane tests: a real Connect envd on 127.0.0.1 (`_envd_server`) and a sandbox pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from e2b import AsyncSandbox, ConnectionConfig

from ._envd_server import EnvdServer, Faults


@pytest.fixture(scope="module")
def envd_server() -> Iterator[EnvdServer]:
    with EnvdServer() as server:
        yield server


@pytest.fixture
def envd(envd_server: EnvdServer) -> Iterator[EnvdServer]:
    envd_server.app.faults.__dict__.update(Faults().__dict__)
    envd_server.app.requests.clear()
    yield envd_server


def sandbox(server: EnvdServer, **kwargs: Any) -> AsyncSandbox:
    """An `AsyncSandbox` whose API is on 127.0.0.1: its envd is the same server (the local server's rule)."""
    config = ConnectionConfig(api_key="e2b_test", api_url=server.url, request_timeout=kwargs.pop("request_timeout", 30))
    options = {"envd_version": "0.6.4", "envd_access_token": "token", "sandbox_domain": "e2b.app", **kwargs}
    return AsyncSandbox("sbxtest", connection_config=config, **options)


@pytest.fixture
def sbx(envd: EnvdServer) -> AsyncSandbox:
    return sandbox(envd)
