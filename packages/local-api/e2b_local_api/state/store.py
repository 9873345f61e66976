"""The in-memory sandbox store and the lifecycle rules, pause contract first.

Every change happens under one `asyncio.Lock` (snapshots and idempotency keys too), so each
sandbox is always in exactly one state; a slow pause runs as its own task that other requests join.

How it works, and why: docs/maintainers/packages.md, "packages/local-api/e2b_local_api/state/store.py".
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from enum import Enum

from e2b_local_api.http.errors import (
    SANDBOX_ALREADY_PAUSED,
    SANDBOX_PAUSE_REFUSED,
    TEMPLATE_NOT_FOUND,
    ApiError,
    bad_request,
    not_found,
    not_running,
    template_not_found,
)
from e2b_local_api.state import listing, metrics, paging
from e2b_local_api.state.idempotency import IdempotencyKeys
from e2b_local_api.state.network import NetworkConfig
from e2b_local_api.state.sandbox_config import CreateRequest, SandboxConfig
from e2b_local_api.state.snapshots import SnapshotCatalog, SnapshotRecord, parse_reference
from e2b_local_api.state.templates import BUILT_AT, BUILTIN_TEMPLATES, ENVD_VERSION, builtin_template
from e2b_local_api.wire.models import SandboxState

# Why a pause is refused; the 503 message names the reason (spec: pauseSandbox 503).
REFUSED_AGENT = "the sandbox's guest agent did not answer the health check"
REFUSED_BUSY = "the sandbox's node is too busy to take the snapshot"
REFUSED_PIN = "the forced pause could not be pinned to the sandbox's node"

DOMAIN = "local.e2b.invalid"

__all__ = ["DOMAIN", "ENVD_VERSION", "SandboxRecord", "SandboxStore"]


class Snapshot(Enum):
    """What the last pause kept; decides how a resume boots."""

    MEMORY = "memory"
    FILESYSTEM = "filesystem"
    FORCED = "forced"  # memory taken without the health check: may not resume


class Boot(Enum):
    """How a sandbox first started: from a template, or from a snapshot's memory or disk."""

    TEMPLATE = "template"
    MEMORY = "memory"  # a memory snapshot, or a fork's checkpoint: processes continue
    COLD = "cold"  # a filesystem-only snapshot: booted from its disk


@dataclass
class NodeSettings:
    """Server-wide behaviour, changed through the control surface."""

    pause_seconds: float = 0.0
    # The "older API": a successful pause answers 204 without a body.
    legacy_pause_204: bool = False
    node_busy: bool = False


@dataclass
class PauseOp:
    """One pause in flight; requests that arrive meanwhile wait for it."""

    forced: bool
    memory: bool
    done: asyncio.Event = field(default_factory=asyncio.Event)
    error: ApiError | None = None


@dataclass(frozen=True)
class Origin:
    """What a sandbox was started from: the template it reports, its sizes, how it booted."""

    template_id: str
    alias: str | None
    cpu_count: int
    memory_mb: int
    disk_size_mb: int
    boot: Boot
    env_vars: Mapping[str, str] = field(default_factory=dict)  # a snapshot's, under the request's


@dataclass
class SandboxRecord:
    sandbox_id: str
    origin: Origin
    seq: int  # creation order: ties in start time are broken on it
    started_at: datetime
    end_at: datetime
    timeout: int  # the seconds it was started with; a refresh without a duration renews them
    config: SandboxConfig
    envd_access_token: str
    traffic_access_token: str | None = None  # only for sandboxes whose URLs need one
    forked_from: str | None = None
    state: SandboxState = SandboxState.running
    snapshot: Snapshot | None = None
    pausing: PauseOp | None = None
    # Fault flags, set through the control surface.
    agent_unresponsive: bool = False
    node_busy: bool = False
    unpinnable: bool = False
    # What happened to it, for tests: counted under the lock.
    pauses: int = 0
    forced_pauses: int = 0
    resumes: int = 0
    reboots: int = 0
    forks: int = 0

    @property
    def template_id(self) -> str:
        return self.origin.template_id

    @property
    def alias(self) -> str | None:
        return self.origin.alias

    @property
    def template_names(self) -> frozenset[str]:
        return frozenset(n for n in (self.origin.template_id, self.origin.alias) if n is not None)

    @property
    def cpu_count(self) -> int:
        return self.origin.cpu_count

    @property
    def memory_mb(self) -> int:
        return self.origin.memory_mb

    @property
    def disk_size_mb(self) -> int:
        return self.origin.disk_size_mb

    @property
    def metadata(self) -> Mapping[str, str]:
        return self.config.metadata


@dataclass(frozen=True)
class SandboxPage:
    items: list[SandboxRecord]
    next_token: str | None
    total_running: int | None  # set when running sandboxes were asked for


@dataclass(frozen=True)
class TemplateInfo:
    """A template as `GET /templates` lists it: a built-in one or a snapshot."""

    template_id: str
    build_id: str
    public: bool
    aliases: list[str]
    names: list[str]
    cpu_count: int
    memory_mb: int
    disk_size_mb: int
    created_at: datetime
    updated_at: datetime
    build_count: int
    spawns: tuple[int, datetime] | None  # sandboxes started from it, and when the last one was


def _utcnow() -> datetime:
    return datetime.now(UTC)


class SandboxStore:
    def __init__(self, clock: Callable[[], datetime] = _utcnow) -> None:
        self.settings = NodeSettings()
        self._clock = clock
        self._lock = asyncio.Lock()
        self._sandboxes: dict[str, SandboxRecord] = {}
        self._seq = 0
        self._snapshots = SnapshotCatalog()
        self._idempotency: IdempotencyKeys[SandboxRecord] = IdempotencyKeys()
        self._spawns: dict[str, tuple[int, datetime]] = {}  # template id -> (sandboxes started, last)
        # Strong references: the event loop keeps only weak ones to tasks.
        self._tasks: set[asyncio.Task[None]] = set()

    # --- helpers (call with the lock held) -----------------------------------

    def _get(self, sandbox_id: str) -> SandboxRecord:
        self._expire()
        record = self._sandboxes.get(sandbox_id)
        if record is None:
            raise not_found(sandbox_id)
        return record

    def _running(self, sandbox_id: str, doing: str) -> SandboxRecord:
        """The sandbox, if it is running and no pause is under way; else 409."""
        record = self._get(sandbox_id)
        if record.state is not SandboxState.running or record.pausing is not None:
            raise not_running(sandbox_id, doing)
        return record

    def _expire(self) -> None:
        """Apply deadlines lazily: no timer task to leak or to race with."""
        now = self._clock()
        for record in list(self._sandboxes.values()):
            if record.state is not SandboxState.running or record.pausing is not None:
                continue
            if record.end_at > now:
                continue
            lifecycle = record.config.lifecycle
            if lifecycle.pause_on_timeout:
                record.state = SandboxState.paused
                record.snapshot = Snapshot.MEMORY if lifecycle.pause_memory else Snapshot.FILESYSTEM
                record.pauses += 1
            else:
                del self._sandboxes[record.sandbox_id]

    def _origin(self, template: str) -> Origin:
        """Where a sandbox named `template` starts from: a built-in template, else a snapshot's latest build."""
        builtin = builtin_template(template)
        if builtin is not None:
            return Origin(
                builtin.template_id,
                builtin.alias,
                builtin.cpu_count,
                builtin.memory_mb,
                builtin.disk_size_mb,
                Boot.TEMPLATE,
            )
        snapshot = self._snapshots.find(template)
        if snapshot is None:
            raise template_not_found(template)
        build = snapshot.latest
        return Origin(
            snapshot.template_id,
            snapshot.name,
            build.cpu_count,
            build.memory_mb,
            build.disk_size_mb,
            Boot.MEMORY if build.memory else Boot.COLD,
            build.env_vars,
        )

    def _template_id(self, name: str) -> str | None:
        builtin = builtin_template(name)
        if builtin is not None:
            return builtin.template_id
        snapshot = self._snapshots.find(name)
        return snapshot.template_id if snapshot is not None else None

    def _start(
        self, origin: Origin, config: SandboxConfig, timeout: int, forked_from: str | None = None
    ) -> SandboxRecord:
        now = self._clock()
        self._seq += 1
        network = config.network
        record = SandboxRecord(
            sandbox_id="i" + secrets.token_hex(10),
            origin=origin,
            seq=self._seq,
            started_at=now,
            end_at=now + timedelta(seconds=timeout),
            timeout=timeout,
            config=config,
            envd_access_token=secrets.token_urlsafe(16),
            # The cloud hands out a traffic token only where the sandbox's URLs are not public.
            traffic_access_token=(
                secrets.token_urlsafe(16) if network is not None and network.allow_public_traffic is False else None
            ),
            forked_from=forked_from,
        )
        self._sandboxes[record.sandbox_id] = record
        spawned, _ = self._spawns.get(origin.template_id, (0, now))
        self._spawns[origin.template_id] = (spawned + 1, now)
        return record

    # --- lifecycle -----------------------------------------------------------

    async def create(
        self, request: CreateRequest, *, team: str = "", idempotency_key: str | None = None
    ) -> SandboxRecord:
        """Start a sandbox; with an idempotency key seen before, the sandbox that key started."""
        async with self._lock:
            self._expire()
            if idempotency_key is not None:
                earlier = self._idempotency.replay(team, idempotency_key, request.fingerprint)
                if earlier is not None:
                    return earlier
            origin = self._origin(request.template)
            # A snapshot's environment, under what the request sets.
            config = replace(request.config, env_vars={**origin.env_vars, **request.config.env_vars})
            record = self._start(origin, config, request.timeout)
            if idempotency_key is not None:
                self._idempotency.remember(team, idempotency_key, request.fingerprint, record)
            return record

    async def get(self, sandbox_id: str) -> SandboxRecord:
        async with self._lock:
            return self._get(sandbox_id)

    async def page(self, query: listing.ListQuery) -> SandboxPage:
        async with self._lock:
            self._expire()
            matching = listing.select(self._sandboxes.values(), query, self._template_id)
            page = paging.cut(
                matching, listing.sort_key, query.next_token, query.limit, descending=query.descending, width=2
            )
        running = sum(r.state is SandboxState.running for r in matching) if query.asks_for_running else None
        return SandboxPage(page.items, page.next_token, running)

    async def kill(self, sandbox_id: str) -> None:
        async with self._lock:
            self._get(sandbox_id)
            del self._sandboxes[sandbox_id]

    async def set_timeout(self, sandbox_id: str, seconds: int) -> None:
        async with self._lock:
            record = self._get(sandbox_id)
            record.end_at = self._clock() + timedelta(seconds=seconds)

    async def refresh(self, sandbox_id: str, seconds: int | None) -> None:
        """Keep a running sandbox alive `seconds` more (default: its own timeout); never shortens."""
        async with self._lock:
            record = self._running(sandbox_id, "a refresh")
            deadline = self._clock() + timedelta(seconds=record.timeout if seconds is None else seconds)
            record.end_at = max(record.end_at, deadline)

    async def connect(self, sandbox_id: str, seconds: int, *, memory: bool = True) -> tuple[SandboxRecord, bool]:
        """Return the sandbox and whether it was resumed (201) or already running (200).

        `memory=False` resumes a paused sandbox by a cold boot from its disk.
        """
        while True:
            async with self._lock:
                record = self._get(sandbox_id)
                op = record.pausing
                if op is None:
                    resumed = record.state is SandboxState.paused
                    if resumed:
                        self._resume(record, memory=memory)
                    deadline = self._clock() + timedelta(seconds=seconds)
                    record.end_at = max(record.end_at, deadline)  # only ever extended
                    return record, resumed
            # A pause is in flight: the real API resumes after it, so wait for it.
            await op.done.wait()

    def _resume(self, record: SandboxRecord, *, memory: bool) -> None:
        record.state = SandboxState.running
        record.resumes += 1
        # Only a clean memory snapshot can continue processes; everything else cold-boots.
        if not memory or record.snapshot is not Snapshot.MEMORY:
            record.reboots += 1
        record.snapshot = None

    async def fork(self, sandbox_id: str, *, timeout: int, count: int) -> list[SandboxRecord]:
        """Start `count` sandboxes from a checkpoint of a running one, which keeps its id and deadline."""
        async with self._lock:
            source = self._running(sandbox_id, "a fork")
            origin = replace(source.origin, boot=Boot.MEMORY)
            forks = [self._start(origin, source.config, timeout, forked_from=sandbox_id) for _ in range(count)]
            source.forks += count
            return forks

    async def update_network(self, sandbox_id: str, egress: NetworkConfig) -> None:
        """Replace a running sandbox's egress settings; its public-traffic settings stay."""
        async with self._lock:
            record = self._running(sandbox_id, "a network update")
            current = record.config.network or NetworkConfig()
            record.config = replace(record.config, network=current.with_egress(egress))

    async def metrics(self, sandbox_id: str, *, start: int | None, end: int | None) -> list[metrics.Sample]:
        async with self._lock:
            record = self._get(sandbox_id)
            now = self._clock()
        resources = metrics.Resources(
            record.sandbox_id, record.started_at, record.cpu_count, record.memory_mb, record.disk_size_mb
        )
        return metrics.samples(resources, now=now, start=start, end=end)

    async def pause(self, sandbox_id: str, *, memory: bool, force: bool) -> bool:
        """Pause the sandbox; returns whether the snapshot was forced."""
        if force and not memory:
            raise bad_request("force is only valid with a memory snapshot (memory: true)")
        async with self._lock:
            record = self._get(sandbox_id)
            op = record.pausing
            if op is None:
                self._check_pausable(record, force=force)
                op = PauseOp(forced=force, memory=memory)
                record.pausing = op
                task = asyncio.create_task(self._finish_pause(record, op))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        # Joining requests get the in-flight pause's answer: a forced request
        # that joins a normal pause reports forced=false, as the spec says.
        await op.done.wait()
        if op.error is not None:
            raise op.error
        return op.forced

    def _check_pausable(self, record: SandboxRecord, *, force: bool) -> None:
        if record.state is SandboxState.paused:
            raise ApiError(409, f"sandbox {record.sandbox_id!r} is already paused", SANDBOX_ALREADY_PAUSED)
        if self.settings.node_busy or record.node_busy:
            raise _refused(REFUSED_BUSY)  # force does not help: the node cannot snapshot
        if force:
            if record.unpinnable:
                raise _refused(REFUSED_PIN)
        elif record.agent_unresponsive:
            raise _refused(REFUSED_AGENT)

    async def _finish_pause(self, record: SandboxRecord, op: PauseOp) -> None:
        try:
            await asyncio.sleep(self.settings.pause_seconds)
        finally:
            async with self._lock:
                record.pausing = None
                if self._sandboxes.get(record.sandbox_id) is record:
                    record.state = SandboxState.paused
                    record.snapshot = (
                        Snapshot.FORCED if op.forced else Snapshot.MEMORY if op.memory else Snapshot.FILESYSTEM
                    )
                    record.pauses += 1
                    record.forced_pauses += int(op.forced)
                else:  # killed while the snapshot was being taken
                    op.error = not_found(record.sandbox_id)
                op.done.set()

    # --- snapshots and templates ---------------------------------------------

    async def take_snapshot(self, sandbox_id: str, *, name: str | None, memory: bool) -> SnapshotRecord:
        """A persistent snapshot of the sandbox, running or paused, as it is now."""
        async with self._lock:
            record = self._get(sandbox_id)
            return self._snapshots.take(
                name,
                sandbox_id=sandbox_id,
                memory=memory,
                now=self._clock(),
                sizes=(record.cpu_count, record.memory_mb, record.disk_size_mb),
                env_vars=dict(record.config.env_vars),
            )

    async def snapshots_page(
        self, *, sandbox_id: str | None, name: str | None, next_token: str | None, limit: int
    ) -> paging.Page[SnapshotRecord]:
        reference = parse_reference(name) if name is not None else None
        async with self._lock:
            matching = [
                s
                for s in self._snapshots.newest_first()
                if (sandbox_id is None or s.taken_of(sandbox_id)) and (reference is None or s.matches(reference))
            ]
        return paging.cut(matching, lambda s: (s.seq,), next_token, limit, descending=True, width=1)

    async def templates(self) -> list[TemplateInfo]:
        """The built-in templates, then the snapshots, newest first."""
        async with self._lock:
            builtins = [
                TemplateInfo(
                    t.template_id,
                    t.build_id,
                    public=True,
                    aliases=[t.alias],
                    names=[t.alias],
                    cpu_count=t.cpu_count,
                    memory_mb=t.memory_mb,
                    disk_size_mb=t.disk_size_mb,
                    created_at=BUILT_AT,
                    updated_at=BUILT_AT,
                    build_count=1,
                    spawns=self._spawns.get(t.template_id),
                )
                for t in BUILTIN_TEMPLATES
            ]
            snapshots = [
                TemplateInfo(
                    s.template_id,
                    s.latest.build_id,
                    public=False,
                    aliases=[s.name] if s.name else [],
                    names=s.names,
                    cpu_count=s.latest.cpu_count,
                    memory_mb=s.latest.memory_mb,
                    disk_size_mb=s.latest.disk_size_mb,
                    created_at=s.created_at,
                    updated_at=s.latest.taken_at,
                    build_count=len(s.builds),
                    spawns=self._spawns.get(s.template_id),
                )
                for s in self._snapshots.newest_first()
            ]
        return builtins + snapshots

    async def delete_template(self, template: str) -> None:
        """Delete a snapshot; the built-in templates are the server's, not the team's, and stay."""
        async with self._lock:
            if builtin_template(template) is not None:
                raise ApiError(
                    404,
                    f"template {template!r} is one of this server's built-in templates; only snapshots can be deleted",
                    TEMPLATE_NOT_FOUND,
                )
            snapshot = self._snapshots.find(template)
            if snapshot is None:
                raise template_not_found(template)
            self._snapshots.remove(snapshot)

    # --- control surface -----------------------------------------------------

    async def all_records(self) -> list[SandboxRecord]:
        async with self._lock:
            self._expire()
            return sorted(self._sandboxes.values(), key=lambda r: r.seq)

    async def all_snapshots(self) -> list[SnapshotRecord]:
        async with self._lock:
            return self._snapshots.newest_first()

    async def reset(self) -> None:
        async with self._lock:
            self._sandboxes.clear()
            self._snapshots.clear()
            self._idempotency.clear()
            self._spawns.clear()
            self.settings = NodeSettings()

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def _refused(reason: str) -> ApiError:
    return ApiError(503, f"pause refused, the sandbox keeps running: {reason}", SANDBOX_PAUSE_REFUSED)
