"""Every sandbox's runtime, kept in step with the store's records.

The store decides (create, pause, resume, kill, deadlines); the routes tell
this registry right after, and a reconcile pass every half second catches what
the store decides lazily (a deadline that passed, a reset): a runtime whose
record is gone is killed, one whose record is paused is frozen. The other way,
a sandbox that ended by itself (its agent died) is killed here and its record
removed from the store, as the API's kill would.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from connectrpc.code import Code
from connectrpc.errors import ConnectError

from e2b_local_api.http.errors import SANDBOX_PAUSE_REFUSED, ApiError
from e2b_local_api.runtime.isolation import Isolation, Mode, check_traversable, host_id, resolv_conf
from e2b_local_api.runtime.layout import Layout
from e2b_local_api.runtime.leftovers import own_state_folder, sweep_dead_state
from e2b_local_api.runtime.sandbox import SandboxError, SandboxRuntime

PAUSE_CHECK_SECONDS = 2.0
RECONCILE_SECONDS = 0.5


class Record(Protocol):
    """What the registry reads of the store's `SandboxRecord`."""

    sandbox_id: str
    envd_access_token: str
    traffic_access_token: str | None

    @property
    def config(self) -> Any: ...

    @property
    def origin(self) -> Any: ...

    @property
    def state(self) -> Any: ...


def internet_allowed(config: Any) -> bool:
    """`allow_internet_access=False` or a deny of 0.0.0.0/0 cut the network; finer egress rules are not enforced."""
    if config.allow_internet_access is False:
        return False
    network = config.network
    return not (network is not None and network.denies_all)


@dataclass
class Entry:
    runtime: SandboxRuntime
    token: str
    traffic_token: str | None = None  # asked of requests to its other ports, when its URLs are not public
    reboots: int = 0  # the record's cold boots when it was frozen: one more at resume means "start anew"


class Runtimes:
    def __init__(self, isolation: Isolation, state: Path | None = None, *, keep_state: bool = False) -> None:
        self.isolation = isolation
        self._own_state = state is None
        self._state_lock: int | None = None
        if state is None:
            state, self._state_lock = own_state_folder(keep=keep_state)
            sweep_dead_state(state.parent)  # what servers killed before their clean-up left here
        self.state = state
        self.keep_state = keep_state
        self.state.mkdir(parents=True, exist_ok=True)
        for folder in (self.state, self.state / "sandboxes", self.state / "snapshots"):
            folder.mkdir(exist_ok=True)
            os.chmod(folder, 0o711)  # traversable, not listable: see isolation.check_traversable
        blocked = isolation.available and isolation.mode is Mode.MAPPED_ROOT and check_traversable(self.state)
        if blocked:
            self.isolation = replace(
                isolation, mode=Mode.UNAVAILABLE, reason=f"the state folder is out of reach: {blocked}"
            )
        self._entries: dict[str, Entry] = {}
        self._forgetters: list[Callable[[str], None]] = []
        self._reconciler: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._removals: set[asyncio.Task[None]] = set()

    # --- lookups ---------------------------------------------------------------------------------------------------

    def get(self, sandbox_id: str) -> Entry | None:
        entry = self._entries.get(sandbox_id)
        return entry if entry is not None and not entry.runtime.ended else None

    def entries(self) -> list[Entry]:
        """The sandboxes alive now (running or paused)."""
        return [entry for entry in self._entries.values() if not entry.runtime.ended]

    def on_kill(self, forget: Callable[[str], None]) -> None:
        """`forget(sandbox_id)` is called when a sandbox is killed (the filesystem service's watchers)."""
        self._forgetters.append(forget)

    def _layout(self, sandbox_id: str) -> Layout:
        return Layout(self.state / "sandboxes" / sandbox_id)

    def _snapshot_layout(self, template_id: str) -> Layout:
        return Layout(self.state / "snapshots" / template_id)

    # --- lifecycle -------------------------------------------------------------------------------------------------

    async def start(self, record: Record, *, copy_of: str | None = None) -> None:
        """Start the record's sandbox (again the same record: nothing happens), from a copy when it has one."""
        if record.sandbox_id in self._entries or not self.isolation.available:
            return
        layout = self._layout(record.sandbox_id)
        network = internet_allowed(record.config)
        source = self._layout(copy_of) if copy_of else self._snapshot_layout(record.origin.template_id)
        if source.root.is_dir():
            await asyncio.to_thread(layout.copy_from, source)
        else:
            layout.create(
                resolv_conf=resolv_conf(self.isolation, network),
                host_id=lambda inside: host_id(self.isolation.mode, inside),
            )
        runtime = SandboxRuntime(
            record.sandbox_id,
            layout=layout,
            isolation=self.isolation,
            env_vars=record.config.env_vars,
            network=network,
            on_end=self._ended_by_itself,
        )
        runtime.access_token, runtime.secure = record.envd_access_token, bool(record.config.secure)
        self._entries[record.sandbox_id] = Entry(runtime, record.envd_access_token, record.traffic_access_token)
        try:
            await runtime.start()
        except SandboxError:
            del self._entries[record.sandbox_id]
            await runtime.wait_ended()
            if not self.keep_state:
                await asyncio.to_thread(layout.remove)  # made for this start: nothing else has it
            raise
        if self._reconciler is None:
            self._loop = asyncio.get_running_loop()
            self._reconciler = asyncio.create_task(self._reconcile_forever())

    def kill(self, sandbox_id: str) -> None:
        entry = self._entries.pop(sandbox_id, None)
        runtime = entry.runtime if entry is not None else None
        layout = self._layout(sandbox_id)
        if runtime is not None:
            runtime.kill()
            for forget in self._forgetters:
                forget(sandbox_id)
        elif not layout.root.is_dir():
            return  # nothing runs and nothing is on disk
        # Without a process tree (one that could not be restarted) its files go all the same.
        self._keep(asyncio.get_running_loop().create_task(self._remove(runtime, layout)))

    def _ended_by_itself(self, runtime: SandboxRuntime) -> None:
        """Its agent died (killed from the host, crashed): nothing runs in it any more. Killed as the API's
        kill would, its record too, instead of a sandbox listed as running that runs no command."""
        sandbox_id = runtime.sandbox_id
        entry = self._entries.get(sandbox_id)
        if entry is None or entry.runtime is not runtime:
            return
        print(
            f"e2b-local-api: sandbox {sandbox_id} ended: its agent is gone; it is killed", file=sys.stderr, flush=True
        )
        self.kill(sandbox_id)
        if self.forget_record is not None:
            self._keep(asyncio.get_running_loop().create_task(self._forget_record(self.forget_record, sandbox_id)))

    @staticmethod
    async def _forget_record(forget: Callable[[str], Awaitable[None]], sandbox_id: str) -> None:
        with contextlib.suppress(ApiError):  # killed through the API meanwhile
            await forget(sandbox_id)

    def _keep(self, task: asyncio.Task[None]) -> None:
        # The loop keeps only weak references to tasks: keep this one until it is done.
        self._removals.add(task)
        task.add_done_callback(self._removals.discard)

    async def _remove(self, runtime: SandboxRuntime | None, layout: Layout) -> None:
        if runtime is not None:
            await runtime.wait_ended()
        if not self.keep_state:
            await asyncio.to_thread(layout.remove)

    async def check_pausable(self, sandbox_id: str, *, force: bool) -> None:
        """The pause's health check: the sandbox's agent must answer, unless the pause is forced."""
        entry = self.get(sandbox_id)
        if force or entry is None or entry.runtime.frozen:
            return
        if not await entry.runtime.ping(PAUSE_CHECK_SECONDS):
            raise ApiError(
                503,
                "pause refused, the sandbox keeps running: the sandbox's agent did not answer the health check "
                f"within {PAUSE_CHECK_SECONDS:g} s",
                SANDBOX_PAUSE_REFUSED,
            )

    def freeze(self, sandbox_id: str, *, reboots: int | None = None) -> None:
        entry = self.get(sandbox_id)
        if entry is None or entry.runtime.frozen:
            return
        if reboots is not None:
            entry.reboots = reboots
        entry.runtime.freeze()
        entry.runtime.fail_streams(ConnectError(Code.CANCELED, f"sandbox {sandbox_id} was paused"))

    async def resume(self, record: Record) -> None:
        """Continue a paused sandbox's processes; a cold boot (a filesystem-only snapshot) starts it anew."""
        entry = self.get(record.sandbox_id)
        if entry is not None and not entry.runtime.frozen:
            return  # it was running: a connect only extends its deadline
        cold = entry is not None and getattr(record, "reboots", 0) > entry.reboots
        if entry is not None and cold:
            entry.runtime.kill()
            await entry.runtime.wait_ended()
            del self._entries[record.sandbox_id]
            entry = None
        if entry is None:
            runtime_root = self._layout(record.sandbox_id).root
            if runtime_root.is_dir():
                # Its files stay: start a new process tree on them.
                await self._restart(record)
            else:
                await self.start(record)
            return
        entry.runtime.thaw()

    async def _restart(self, record: Record) -> None:
        layout = self._layout(record.sandbox_id)
        runtime = SandboxRuntime(
            record.sandbox_id,
            layout=layout,
            isolation=self.isolation,
            env_vars=record.config.env_vars,
            network=internet_allowed(record.config),
            on_end=self._ended_by_itself,
        )
        runtime.access_token, runtime.secure = record.envd_access_token, bool(record.config.secure)
        self._entries[record.sandbox_id] = Entry(runtime, record.envd_access_token, record.traffic_access_token)
        try:
            await runtime.start()
        except SandboxError:
            del self._entries[record.sandbox_id]  # its files stay, as a kill's would not
            raise

    async def snapshot(self, sandbox_id: str, template_id: str) -> None:
        """Keep a copy of the sandbox's folder as the snapshot's (processes are not kept)."""
        entry = self._entries.get(sandbox_id)
        if entry is None:
            return
        target = self._snapshot_layout(template_id)
        await asyncio.to_thread(shutil.rmtree, target.root, True)
        await asyncio.to_thread(target.copy_from, entry.runtime.layout)

    # --- reconcile -------------------------------------------------------------------------------------------------

    def reconcile(self, records: Iterable[Record]) -> None:
        present = {r.sandbox_id: r for r in records}
        for sandbox_id in list(self._entries):
            record = present.get(sandbox_id)
            if record is None:
                self.kill(sandbox_id)
            elif getattr(record.state, "value", record.state) == "paused":
                self.freeze(sandbox_id, reboots=getattr(record, "reboots", 0))

    async def _reconcile_forever(self) -> None:
        while True:
            await asyncio.sleep(RECONCILE_SECONDS)
            if self.records is not None:
                with contextlib.suppress(Exception):
                    self.reconcile(await self.records())

    records: Any = None  # set by the app: an async callable returning the store's records
    forget_record: Callable[[str], Awaitable[None]] | None = None  # set by the app: the store's kill

    def close_soon(self) -> None:
        """From any thread (a signal handler too): kill every sandbox, which ends their streams.

        A server shutting down waits for open requests, and a process stream may never end by
        itself: this lets the shutdown through.
        """
        loop = self._loop
        if loop is None or loop.is_closed():
            return

        def kill_all() -> None:
            for sandbox_id in list(self._entries):
                self.kill(sandbox_id)

        loop.call_soon_threadsafe(kill_all)

    async def close(self) -> None:
        if self._reconciler is not None:
            self._reconciler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reconciler
        runtimes = [entry.runtime for entry in self._entries.values()]
        self._entries.clear()
        for runtime in runtimes:
            runtime.kill()
        for runtime in runtimes:
            await runtime.wait_ended()
        if self._own_state and not self.keep_state:
            await asyncio.to_thread(shutil.rmtree, self.state, True)
        if self._state_lock is not None:
            os.close(self._state_lock)
            self._state_lock = None
