"""End to end: the SDK, sync and async, against the live local API over HTTP.

Every test runs per flavour (`Sandbox`, `AsyncSandbox`) and per transport:
the SDK's default (pyqwest under its retrying transport) and an injected
httpx transport (also wrapped in the retrying transport). The server counts
requests, so "exactly one request" and "retried" are checked on the server.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from e2b import (
    AsyncSandbox,
    InvalidArgumentException,
    Sandbox,
    SandboxNotFoundException,
    SandboxPauseRefusedException,
    SandboxPauseResult,
    SandboxQuery,
    SandboxState,
)

from .conftest import LiveServer

pytestmark = pytest.mark.anyio


@dataclass
class Sdk:
    cls: type[Sandbox] | type[AsyncSandbox]
    opts: dict[str, Any]

    async def __call__(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call a class-level SDK method; awaits what the async flavour returns."""
        result = getattr(self.cls, name)(*args, **self.opts, **kwargs)
        return await result if inspect.isawaitable(result) else result

    async def create(self, **kwargs: Any) -> str:
        sandbox = await self("create", "base", **kwargs)
        sandbox_id: str = sandbox.sandbox_id
        return sandbox_id

    async def list_all(self, **kwargs: Any) -> list[list[Any]]:
        """Every page of `list()`, in order."""
        paginator = self.cls.list(**self.opts, **kwargs)
        pages = []
        while paginator.has_next:
            page = paginator.next_items()
            pages.append(await page if inspect.isawaitable(page) else page)
        return pages


@pytest.fixture(
    params=[("sync", "default"), ("sync", "httpx"), ("async", "default"), ("async", "httpx")],
    ids=lambda p: "-".join(p),
)
def sdk(request: pytest.FixtureRequest, live: LiveServer) -> Sdk:
    flavour, transport = request.param
    opts: dict[str, Any] = {"api_url": live.url, "api_key": live.api_key, "request_timeout": 10}
    if transport == "httpx":
        # verify=False only skips loading the CA bundle: the server is plain HTTP.
        opts["transport"] = (
            httpx.HTTPTransport(verify=False) if flavour == "sync" else httpx.AsyncHTTPTransport(verify=False)
        )
    return Sdk(Sandbox if flavour == "sync" else AsyncSandbox, opts)


# --- the pause contract -------------------------------------------------------


async def test_normal_pause_then_already_paused(sdk: Sdk, live: LiveServer) -> None:
    sandbox_id = await sdk.create()
    assert await sdk("pause", sandbox_id) == SandboxPauseResult(paused=True, forced=False)
    info = await sdk("get_info", sandbox_id)
    assert info.state == "paused"
    # 409 "already paused" is a result, not an error.
    assert await sdk("pause", sandbox_id) == SandboxPauseResult(paused=False, forced=False)
    assert live.stats()["answered"]["pauseSandbox"] == {"200": 1, "409": 1}


async def test_pause_of_unknown_sandbox_is_not_found(sdk: Sdk) -> None:
    with pytest.raises(SandboxNotFoundException):
        await sdk("pause", "nope")


async def test_force_on_filesystem_only_pause_is_refused_before_the_request(sdk: Sdk, live: LiveServer) -> None:
    sandbox_id = await sdk.create()
    with pytest.raises(InvalidArgumentException):
        await sdk("pause", sandbox_id, force=True, mode="filesystem")
    assert live.received("pauseSandbox") == 0
    assert live.record(sandbox_id)["state"] == "running"
    assert await sdk("pause", sandbox_id, mode="filesystem") == SandboxPauseResult(True, False)
    assert live.record(sandbox_id)["snapshot"] == "filesystem"


async def test_unresponsive_agent_refuses_after_one_request_and_force_pauses(sdk: Sdk, live: LiveServer) -> None:
    sandbox_id = await sdk.create()
    live.flags(sandbox_id, agent_unresponsive=True)
    with pytest.raises(SandboxPauseRefusedException, match="guest agent"):
        await sdk("pause", sandbox_id)
    assert live.received("pauseSandbox") == 1
    assert live.record(sandbox_id)["state"] == "running"

    assert await sdk("pause", sandbox_id, force=True) == SandboxPauseResult(True, True)
    assert live.record(sandbox_id)["snapshot"] == "forced"
    # A forced snapshot's memory may not resume; reboot recovers the disk state.
    await sdk("connect", sandbox_id, on_resume="reboot")
    record = live.record(sandbox_id)
    assert (record["state"], record["resumes"], record["reboots"]) == ("running", 1, 1)


@pytest.mark.parametrize("force", [False, True])
async def test_busy_node_refuses_even_forced(sdk: Sdk, live: LiveServer, force: bool) -> None:
    sandbox_id = await sdk.create()
    live.flags(sandbox_id, node_busy=True)
    with pytest.raises(SandboxPauseRefusedException, match="too busy"):
        await sdk("pause", sandbox_id, force=force)
    assert live.received("pauseSandbox") == 1


async def test_server_wide_busy_node_refuses(sdk: Sdk, live: LiveServer) -> None:
    sandbox_id = await sdk.create()
    live.settings(node_busy=True)
    with pytest.raises(SandboxPauseRefusedException, match="too busy"):
        await sdk("pause", sandbox_id, force=True)
    assert live.received("pauseSandbox") == 1


async def test_forced_pause_that_cannot_be_pinned_is_refused(sdk: Sdk, live: LiveServer) -> None:
    sandbox_id = await sdk.create()
    live.flags(sandbox_id, agent_unresponsive=True, unpinnable=True)
    with pytest.raises(SandboxPauseRefusedException, match="pinned"):
        await sdk("pause", sandbox_id, force=True)
    assert live.received("pauseSandbox") == 1


async def test_forced_request_joining_a_normal_pause_reports_not_forced(sdk: Sdk, live: LiveServer) -> None:
    sandbox_id = await sdk.create()
    live.settings(pause_seconds=0.5)
    first: list[SandboxPauseResult] = []

    # The normal pause goes first from a plain httpx client in a thread, so the
    # flavour under test is the one that joins.
    def normal_pause() -> None:
        with live.api() as api:
            response = api.post(f"/sandboxes/{sandbox_id}/pause")
            first.append(SandboxPauseResult(True, response.json()["forced"]))

    thread = threading.Thread(target=normal_pause)
    thread.start()
    while not live.record(sandbox_id)["pausing"]:
        await asyncio.sleep(0.01)
    assert await sdk("pause", sandbox_id, force=True) == SandboxPauseResult(True, False)
    thread.join()
    assert first == [SandboxPauseResult(True, False)]
    assert live.record(sandbox_id)["forced_pauses"] == 0


async def test_older_api_answers_204(sdk: Sdk, live: LiveServer) -> None:
    sandbox_id = await sdk.create()
    live.settings(legacy_pause_204=True)
    assert await sdk("pause", sandbox_id) == SandboxPauseResult(paused=True, forced=False)
    assert live.stats()["answered"]["pauseSandbox"] == {"204": 1}


async def test_busy_503s_are_retried(sdk: Sdk, live: LiveServer, sleeps: list[float]) -> None:
    sandbox_id = await sdk.create()
    live.fault("busy", count=2, operation="pauseSandbox")
    assert await sdk("pause", sandbox_id) == SandboxPauseResult(True, False)
    assert live.stats()["answered"]["pauseSandbox"] == {"200": 1, "503": 2}
    assert len(sleeps) == 2


async def test_trickled_refusal_is_still_answered_after_one_request(
    sdk: Sdk, live: LiveServer, sleeps: list[float]
) -> None:
    sandbox_id = await sdk.create()
    live.flags(sandbox_id, agent_unresponsive=True)
    live.fault("trickle", operation="pauseSandbox", chunk_size=8, delay=0.01)
    with pytest.raises(SandboxPauseRefusedException):
        await sdk("pause", sandbox_id)
    assert live.received("pauseSandbox") == 1
    assert sleeps == []


# --- the rest of the lifecycle -------------------------------------------------


async def test_lifecycle(sdk: Sdk, live: LiveServer) -> None:
    ids = [await sdk.create(metadata={"app": "e2e", "n": str(n)}) for n in range(5)]
    await sdk.create(metadata={"app": "other"})
    await sdk("pause", ids[0])

    pages = await sdk.list_all(query=SandboxQuery(metadata={"app": "e2e"}), limit=2)
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [s.sandbox_id for p in pages for s in p] == ids[::-1]  # newest first
    (paused,) = await sdk.list_all(query=SandboxQuery(state=[SandboxState.PAUSED]))
    assert [s.sandbox_id for s in paused] == [ids[0]]

    await sdk("set_timeout", ids[1], 5)
    info: Any = await sdk("get_info", ids[1])
    assert 4 <= (info.end_at - info.started_at).total_seconds() <= 6

    await sdk("connect", ids[0])  # resumes from memory: no reboot
    record = live.record(ids[0])
    assert (record["state"], record["resumes"], record["reboots"]) == ("running", 1, 0)

    assert await sdk("kill", ids[2]) is True
    assert await sdk("kill", ids[2]) is False
    with pytest.raises(SandboxNotFoundException):
        await sdk("get_info", ids[2])
