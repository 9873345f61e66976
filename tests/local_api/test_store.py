"""The store's lifecycle rules and pause contract, without HTTP."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from e2b_local_api.errors import ApiError
from e2b_local_api.store import SandboxStore
from e2b_local_api.wire.models import NewSandbox, SandboxState

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


async def _new(store: SandboxStore, **fields: object) -> str:
    record = await store.create(NewSandbox.model_validate({"templateID": "base", **fields}))
    return record.sandbox_id


async def _status(coro: object) -> int:
    try:
        await coro  # type: ignore[misc]
    except ApiError as error:
        return error.status
    return 200


async def test_pause_contract_statuses() -> None:
    store = SandboxStore()
    sid = await _new(store)
    assert await _status(store.pause(sid, memory=False, force=True)) == 400
    assert await _status(store.pause("missing", memory=True, force=False)) == 404
    assert await store.pause(sid, memory=True, force=False) is False
    assert await _status(store.pause(sid, memory=True, force=False)) == 409


async def test_refusal_reasons() -> None:
    store = SandboxStore()
    sid = await _new(store)
    record = await store.get(sid)
    record.agent_unresponsive = True
    with pytest.raises(ApiError, match="guest agent") as refused:
        await store.pause(sid, memory=True, force=False)
    assert (refused.value.status, refused.value.error_code) == (503, "sandbox_pause_refused")
    record.unpinnable = True
    with pytest.raises(ApiError, match="pinned"):
        await store.pause(sid, memory=True, force=True)
    record.unpinnable = False
    store.settings.node_busy = True
    with pytest.raises(ApiError, match="too busy"):
        await store.pause(sid, memory=True, force=True)
    store.settings.node_busy = False
    assert await store.pause(sid, memory=True, force=True) is True
    assert record.state is SandboxState.paused


async def test_requests_join_the_pause_in_flight() -> None:
    store = SandboxStore()
    store.settings.pause_seconds = 0.05
    sid = await _new(store)
    results = await asyncio.gather(
        store.pause(sid, memory=True, force=False),
        store.pause(sid, memory=True, force=True),
        store.connect(sid, 10, None),
    )
    assert list(results[:2]) == [False, False]
    record, resumed = results[2]
    assert resumed and record.state is SandboxState.running
    assert (record.pauses, record.forced_pauses, record.resumes) == (1, 0, 1)


async def test_kill_during_a_pause_answers_not_found() -> None:
    store = SandboxStore()
    store.settings.pause_seconds = 0.05
    sid = await _new(store)
    pause = asyncio.create_task(store.pause(sid, memory=True, force=False))
    await asyncio.sleep(0.01)
    await store.kill(sid)
    assert await _status(pause) == 404


async def test_resume_modes() -> None:
    store = SandboxStore()
    sid = await _new(store)
    await store.pause(sid, memory=True, force=False)
    record, _ = await store.connect(sid, 10, None)
    assert record.reboots == 0
    await store.pause(sid, memory=True, force=False)
    record, _ = await store.connect(sid, 10, "reboot")
    assert record.reboots == 1
    await store.pause(sid, memory=False, force=False)  # filesystem only: always cold-boots
    record, _ = await store.connect(sid, 10, "memory")
    assert record.reboots == 2


async def test_deadlines_expire_kill_or_auto_pause() -> None:
    clock = Clock()
    store = SandboxStore(clock)
    killed = await _new(store, timeout=10)
    auto = await _new(store, timeout=10, autoPause=True)
    clock.now += timedelta(seconds=11)
    assert await _status(store.get(killed)) == 404
    assert (await store.get(auto)).state is SandboxState.paused


async def test_connect_only_extends_and_set_timeout_replaces() -> None:
    clock = Clock()
    store = SandboxStore(clock)
    sid = await _new(store, timeout=100)
    record, resumed = await store.connect(sid, 10, None)
    assert not resumed and record.end_at == clock.now + timedelta(seconds=100)
    await store.set_timeout(sid, 10)
    assert record.end_at == clock.now + timedelta(seconds=10)


async def test_list_filters_and_pages() -> None:
    store = SandboxStore()
    ids = [await _new(store, metadata={"n": str(i % 2)}) for i in range(5)]
    await store.pause(ids[0], memory=True, force=False)
    page = await store.page(list(SandboxState), {}, None, 2)
    assert [r.sandbox_id for r in page.items] == [ids[4], ids[3]]
    seen = [r.sandbox_id for r in page.items]
    while page.next_token:
        page = await store.page(list(SandboxState), {}, page.next_token, 2)
        seen += [r.sandbox_id for r in page.items]
    assert seen == ids[::-1]
    evens = await store.page(list(SandboxState), {"n": "0"}, None, 100)
    assert [r.sandbox_id for r in evens.items] == [ids[4], ids[2], ids[0]]
    paused = await store.page([SandboxState.paused], {}, None, 100)
    assert [r.sandbox_id for r in paused.items] == [ids[0]]
    with pytest.raises(ApiError, match="nextToken"):
        await store.page(list(SandboxState), {}, "bogus", 2)
