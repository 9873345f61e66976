"""A healthy but slow pause, against the local API server, on every HTTP stack.

The wait for an answer is bounded by `request_timeout` alone: a pause that
takes most of it succeeds, one that takes longer fails at the timeout, not
before. The server really takes `pause_seconds` to answer (its `/_local/`
control surface), over a real socket on a port bound to 0.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from e2b import AsyncSandbox, Sandbox, SandboxPauseResult, TimeoutException
from e2b_local_api import DEV_API_KEY

from tests.wrong_url_servers import local_api

pytestmark = pytest.mark.anyio

TIMEOUT = 2.0
STACKS = ["sync-pyqwest", "async-pyqwest", "sync-httpx", "async-httpx"]


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with local_api() as url:
        yield url


@pytest.fixture
def control(server_url: str) -> Iterator[httpx.Client]:
    headers = {"Content-Type": "application/json"}
    with httpx.Client(base_url=server_url, timeout=10, headers=headers) as client:
        client.post("/_local/reset").raise_for_status()
        yield client
        client.post("/_local/reset").raise_for_status()


def _create(control: httpx.Client) -> str:
    response = control.post("/sandboxes", json={"templateID": "base"}, headers={"X-API-Key": DEV_API_KEY})
    response.raise_for_status()
    sandbox_id: str = response.json()["sandboxID"]
    return sandbox_id


async def _pause(stack: str, sandbox_id: str, server_url: str) -> tuple[Any, float]:
    """Pause through `stack`; the result (or the exception raised) and the seconds it took."""
    flavour, http = stack.split("-")
    opts: dict[str, Any] = {"api_key": DEV_API_KEY, "api_url": server_url}
    if http == "httpx":
        opts["transport"] = httpx.HTTPTransport() if flavour == "sync" else httpx.AsyncHTTPTransport()
    started = time.monotonic()
    try:
        if flavour == "sync":
            result: Any = Sandbox.pause(sandbox_id, request_timeout=TIMEOUT, **opts)
        else:
            result = await AsyncSandbox.pause(sandbox_id, request_timeout=TIMEOUT, **opts)
    except TimeoutException as error:
        result = error
    finally:
        transport = opts.get("transport")
        if isinstance(transport, httpx.HTTPTransport):
            transport.close()
        elif isinstance(transport, httpx.AsyncHTTPTransport):
            await transport.aclose()
    return result, time.monotonic() - started


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("share", [0.6, 0.9])
async def test_a_healthy_pause_within_the_timeout_succeeds(
    control: httpx.Client, server_url: str, stack: str, share: float
) -> None:
    sandbox_id = _create(control)
    control.patch("/_local/settings", json={"pause_seconds": TIMEOUT * share}).raise_for_status()
    result, elapsed = await _pause(stack, sandbox_id, server_url)
    assert result == SandboxPauseResult(paused=True, forced=False), result
    assert elapsed >= TIMEOUT * share  # the server really took its time
    assert control.get(f"/_local/sandboxes/{sandbox_id}").json()["state"] == "paused"


@pytest.mark.parametrize("stack", STACKS)
async def test_a_pause_longer_than_the_timeout_ends_at_the_timeout(
    control: httpx.Client, server_url: str, stack: str
) -> None:
    sandbox_id = _create(control)
    control.patch("/_local/settings", json={"pause_seconds": TIMEOUT * 1.5}).raise_for_status()
    result, elapsed = await _pause(stack, sandbox_id, server_url)
    assert isinstance(result, TimeoutException), result
    # Not at a share of the timeout (the old per-read limit gave up at half of
    # it), and well before the pause would have answered (1.5x).
    assert TIMEOUT * 0.95 <= elapsed < TIMEOUT * 1.3
