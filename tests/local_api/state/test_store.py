"""The store's lifecycle rules and pause contract, without HTTP."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest
from e2b_local_api.control import bodies
from e2b_local_api.http.errors import ApiError
from e2b_local_api.state.listing import ListQuery
from e2b_local_api.state.network import NetworkConfig
from e2b_local_api.state.sandbox_config import CreateRequest
from e2b_local_api.state.store import Boot, SandboxStore, Snapshot
from e2b_local_api.wire.models import SandboxState

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _create(**fields: object) -> CreateRequest:
    return bodies.create(json.dumps({"templateID": "base", **fields}).encode(), "application/json")


async def _new(store: SandboxStore, **fields: object) -> str:
    record = await store.create(_create(**fields))
    return record.sandbox_id


def _query(**fields: object) -> ListQuery:
    return ListQuery(**{"states": frozenset(SandboxState), "metadata": {}, **fields})  # type: ignore[arg-type]


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
        store.connect(sid, 10),
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
    record, _ = await store.connect(sid, 10)
    assert record.reboots == 0
    await store.pause(sid, memory=True, force=False)
    record, _ = await store.connect(sid, 10, memory=False)  # a cold boot asked for
    assert (record.resumes, record.reboots) == (2, 1)
    await store.pause(sid, memory=False, force=False)  # filesystem only: always cold-boots
    record, _ = await store.connect(sid, 10, memory=True)
    assert (record.resumes, record.reboots) == (3, 2)


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
    record, resumed = await store.connect(sid, 10)
    assert not resumed and record.end_at == clock.now + timedelta(seconds=100)
    await store.set_timeout(sid, 10)
    assert record.end_at == clock.now + timedelta(seconds=10)


async def test_list_filters_and_pages() -> None:
    store = SandboxStore()
    ids = [await _new(store, metadata={"n": str(i % 2)}) for i in range(5)]
    await store.pause(ids[0], memory=True, force=False)
    page = await store.page(_query(limit=2))
    assert [r.sandbox_id for r in page.items] == [ids[4], ids[3]]
    seen = [r.sandbox_id for r in page.items]
    while page.next_token:
        page = await store.page(_query(limit=2, next_token=page.next_token))
        seen += [r.sandbox_id for r in page.items]
    assert seen == ids[::-1]
    evens = await store.page(_query(metadata={"n": "0"}))
    assert [r.sandbox_id for r in evens.items] == [ids[4], ids[2], ids[0]]
    paused = await store.page(_query(states=frozenset({SandboxState.paused})))
    assert [r.sandbox_id for r in paused.items] == [ids[0]]
    with pytest.raises(ApiError, match="nextToken"):
        await store.page(_query(limit=2, next_token="bogus"))


async def test_auto_pause_keeps_memory_or_only_the_filesystem() -> None:
    clock = Clock()
    store = SandboxStore(clock)
    memory = await _new(store, timeout=10, autoPause=True)
    disk = await _new(store, timeout=10, autoPause=True, autoPauseMemory=False)
    clock.now += timedelta(seconds=10)
    assert (await store.get(memory)).snapshot is Snapshot.MEMORY
    assert (await store.get(disk)).snapshot is Snapshot.FILESYSTEM
    record, _ = await store.connect(disk, 10)
    assert record.reboots == 1  # a filesystem snapshot cold-boots


async def test_create_answers_404_for_an_unknown_template_and_starts_nothing() -> None:
    store = SandboxStore()
    with pytest.raises(ApiError) as refused:
        await store.create(_create(templateID="nope"))
    assert (refused.value.status, refused.value.error_code) == (404, "template_not_found")
    assert await store.all_records() == []


async def test_one_idempotency_key_sent_twice_at_once_starts_one_sandbox() -> None:
    store = SandboxStore()
    first, second = await asyncio.gather(
        store.create(_create(), team="t", idempotency_key="k"), store.create(_create(), team="t", idempotency_key="k")
    )
    assert first is second and len(await store.all_records()) == 1


async def test_forks_copy_the_source_which_keeps_its_id_and_deadline() -> None:
    clock = Clock()
    store = SandboxStore(clock)
    sid = await _new(
        store,
        templateID="desktop",
        timeout=100,
        metadata={"m": "1"},
        envVars={"E": "1"},
        network={"denyOut": ["1.1.1.1"]},
    )
    source = await store.get(sid)
    deadline = source.end_at
    clock.now += timedelta(seconds=5)
    forks = await store.fork(sid, timeout=30, count=3)
    assert len({f.sandbox_id for f in forks} | {sid}) == 4
    for fork in forks:
        assert (fork.template_id, fork.alias, fork.cpu_count) == ("local-desktop", "desktop", 4)
        assert fork.config == source.config and fork.forked_from == sid and fork.origin.boot is Boot.MEMORY
        assert fork.end_at == clock.now + timedelta(seconds=30)
    assert (source.end_at, source.forks, source.state) == (deadline, 3, SandboxState.running)
    # Same start time: listed in creation order, reproducibly.
    page = await store.page(_query(descending=False))
    assert [r.sandbox_id for r in page.items] == [sid, *(f.sandbox_id for f in forks)]


async def test_a_paused_sandbox_cannot_be_forked_refreshed_or_have_its_network_changed() -> None:
    store = SandboxStore()
    sid = await _new(store)
    await store.pause(sid, memory=True, force=False)
    before = await store.get(sid)
    for attempt in (
        store.fork(sid, timeout=10, count=1),
        store.refresh(sid, 10),
        store.update_network(sid, NetworkConfig(deny_out=("0.0.0.0/0",))),
    ):
        with pytest.raises(ApiError) as refused:
            await attempt
        assert (refused.value.status, refused.value.error_code) == (409, "sandbox_not_running")
    assert (before.forks, before.config.network, len(await store.all_records())) == (0, None, 1)


async def test_a_network_update_replaces_egress_and_keeps_public_traffic_settings() -> None:
    store = SandboxStore()
    sid = await _new(store, network={"allowPublicTraffic": False, "allowOut": ["1.1.1.1"], "denyOut": ["0.0.0.0/0"]})
    await store.update_network(sid, NetworkConfig(deny_out=("10.0.0.0/8",)))
    network = (await store.get(sid)).config.network
    assert network is not None
    assert network.view() == {"allowPublicTraffic": False, "denyOut": ["10.0.0.0/8"]}


async def test_refresh_extends_only_by_default_by_the_sandboxs_timeout() -> None:
    clock = Clock()
    store = SandboxStore(clock)
    sid = await _new(store, timeout=100)
    record = await store.get(sid)
    await store.refresh(sid, 10)
    assert record.end_at == clock.now + timedelta(seconds=100)  # never shortened
    clock.now += timedelta(seconds=90)
    await store.refresh(sid, None)
    assert record.end_at == clock.now + timedelta(seconds=100)
    await store.refresh(sid, 3600)
    assert record.end_at == clock.now + timedelta(seconds=3600)


async def test_list_order_started_after_and_template() -> None:
    clock = Clock()
    store = SandboxStore(clock)
    old = await _new(store)
    clock.now += timedelta(seconds=1)
    new = await _new(store, templateID="code-interpreter-v1")
    assert [r.sandbox_id for r in (await store.page(_query())).items] == [new, old]
    assert [r.sandbox_id for r in (await store.page(_query(descending=False))).items] == [old, new]
    after = await store.page(_query(started_after=clock.now))
    assert [r.sandbox_id for r in after.items] == [new] and after.total_running == 1
    for name in ("code-interpreter-v1", "local-code-interpreter"):
        assert [r.sandbox_id for r in (await store.page(_query(template=name))).items] == [new]
    paused_only = await store.page(_query(states=frozenset({SandboxState.paused})))
    assert paused_only.total_running is None


async def test_snapshots_start_sandboxes_of_the_sources_size_and_environment() -> None:
    store = SandboxStore()
    sid = await _new(store, templateID="desktop", envVars={"A": "source", "B": "source"})
    snapshot = await store.take_snapshot(sid, name="snap", memory=False)
    record = await store.create(_create(templateID="snap", envVars={"B": "mine"}))
    assert (record.template_id, record.alias, record.cpu_count) == (snapshot.template_id, "snap", 4)
    assert dict(record.config.env_vars) == {"A": "source", "B": "mine"}
    assert record.origin.boot is Boot.COLD
    listed = await store.templates()
    assert [t.template_id for t in listed][-1] == snapshot.template_id and listed[-1].spawns is not None
    await store.delete_template("local/snap:default")
    with pytest.raises(ApiError, match="not found"):
        await store.create(_create(templateID="snap"))


async def test_reset_forgets_snapshots_and_idempotency_keys() -> None:
    store = SandboxStore()
    first = await store.create(_create(), idempotency_key="k")
    await store.take_snapshot(first.sandbox_id, name="snap", memory=True)
    await store.reset()
    assert await store.all_snapshots() == []
    assert (await store.create(_create(), idempotency_key="k")) is not first
