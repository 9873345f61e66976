"""The in-memory sandbox store and the lifecycle rules, pause contract first.

All state changes happen under one `asyncio.Lock`, so concurrent pauses,
resumes and kills of the same sandbox are serialised and every sandbox is
always in exactly one state. A pause that takes time (`NodeSettings.pause_seconds`)
runs as its own task: the lock is not held while it "snapshots", other
requests for the sandbox join it, and a client that disconnects mid-pause
cannot leave the sandbox half paused.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import Enum

from e2b_local_api.errors import (
    SANDBOX_ALREADY_PAUSED,
    SANDBOX_PAUSE_REFUSED,
    ApiError,
    bad_request,
    not_found,
)
from e2b_local_api.wire.models import NewSandbox, SandboxState

# Why a pause is refused; the 503 message names the reason (spec: pauseSandbox 503).
REFUSED_AGENT = "the sandbox's guest agent did not answer the health check"
REFUSED_BUSY = "the sandbox's node is too busy to take the snapshot"
REFUSED_PIN = "the forced pause could not be pinned to the sandbox's node"

ENVD_VERSION = "0.2.0"
DEFAULT_CPU_COUNT = 2
DEFAULT_MEMORY_MB = 512
DOMAIN = "local.e2b.invalid"


class Snapshot(Enum):
    """What the last pause kept; decides how a resume boots."""

    MEMORY = "memory"
    FILESYSTEM = "filesystem"
    FORCED = "forced"  # memory taken without the health check: may not resume


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


@dataclass
class SandboxRecord:
    sandbox_id: str
    template_id: str
    seq: int  # creation order: lists are newest first and pages cut on it
    started_at: datetime
    end_at: datetime
    metadata: dict[str, str]
    env_vars: dict[str, str]
    auto_pause: bool
    allow_internet_access: bool
    envd_access_token: str
    cpu_count: int = DEFAULT_CPU_COUNT
    memory_mb: int = DEFAULT_MEMORY_MB
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


@dataclass(frozen=True)
class Page:
    items: list[SandboxRecord]
    next_token: str | None


def _utcnow() -> datetime:
    return datetime.now(UTC)


class SandboxStore:
    def __init__(self, clock: Callable[[], datetime] = _utcnow) -> None:
        self.settings = NodeSettings()
        self._clock = clock
        self._lock = asyncio.Lock()
        self._sandboxes: dict[str, SandboxRecord] = {}
        self._seq = 0
        # Strong references: the event loop keeps only weak ones to tasks.
        self._tasks: set[asyncio.Task[None]] = set()

    # --- helpers (call with the lock held) -----------------------------------

    def _get(self, sandbox_id: str) -> SandboxRecord:
        self._expire()
        record = self._sandboxes.get(sandbox_id)
        if record is None:
            raise not_found(sandbox_id)
        return record

    def _expire(self) -> None:
        """Apply deadlines lazily: no timer task to leak or to race with."""
        now = self._clock()
        for record in list(self._sandboxes.values()):
            if record.state is not SandboxState.running or record.pausing is not None:
                continue
            if record.end_at > now:
                continue
            if record.auto_pause:
                record.state = SandboxState.paused
                record.snapshot = Snapshot.MEMORY
                record.pauses += 1
            else:
                del self._sandboxes[record.sandbox_id]

    # --- lifecycle -----------------------------------------------------------

    async def create(self, request: NewSandbox) -> SandboxRecord:
        async with self._lock:
            self._expire()
            now = self._clock()
            self._seq += 1
            record = SandboxRecord(
                sandbox_id="i" + secrets.token_hex(10),
                template_id=request.templateID,
                seq=self._seq,
                started_at=now,
                end_at=now + timedelta(seconds=request.timeout or 0),
                metadata=dict(request.metadata.root) if request.metadata else {},
                env_vars=dict(request.envVars.root) if request.envVars else {},
                auto_pause=bool(request.autoPause),
                # Spelled allowInternetAccess or allow_internet_access, depending on the spec's shape.
                allow_internet_access=getattr(
                    request, "allowInternetAccess", getattr(request, "allow_internet_access", None)
                )
                is not False,
                envd_access_token=secrets.token_urlsafe(16),
            )
            self._sandboxes[record.sandbox_id] = record
            return record

    async def get(self, sandbox_id: str) -> SandboxRecord:
        async with self._lock:
            return self._get(sandbox_id)

    async def page(
        self,
        states: Iterable[SandboxState],
        metadata: Mapping[str, str],
        next_token: str | None,
        limit: int,
    ) -> Page:
        before = _decode_token(next_token) if next_token is not None else None
        wanted = set(states)
        async with self._lock:
            self._expire()
            matching = [
                r
                for r in sorted(self._sandboxes.values(), key=lambda r: r.seq, reverse=True)
                if r.state in wanted
                and (before is None or r.seq < before)
                and all(r.metadata.get(k) == v for k, v in metadata.items())
            ]
        page = matching[:limit]
        more = len(matching) > limit
        return Page(page, _encode_token(page[-1].seq) if more else None)

    async def kill(self, sandbox_id: str) -> None:
        async with self._lock:
            self._get(sandbox_id)
            del self._sandboxes[sandbox_id]

    async def set_timeout(self, sandbox_id: str, seconds: int) -> None:
        async with self._lock:
            record = self._get(sandbox_id)
            record.end_at = self._clock() + timedelta(seconds=seconds)

    async def connect(self, sandbox_id: str, seconds: int, mode: str | None) -> tuple[SandboxRecord, bool]:
        """Return the sandbox and whether it was resumed (201) or already running (200)."""
        while True:
            async with self._lock:
                record = self._get(sandbox_id)
                op = record.pausing
                if op is None:
                    resumed = record.state is SandboxState.paused
                    if resumed:
                        self._resume(record, mode)
                    deadline = self._clock() + timedelta(seconds=seconds)
                    record.end_at = max(record.end_at, deadline)  # only ever extended
                    return record, resumed
            # A pause is in flight: the real API resumes after it, so wait for it.
            await op.done.wait()

    def _resume(self, record: SandboxRecord, mode: str | None) -> None:
        record.state = SandboxState.running
        record.resumes += 1
        # Only a clean memory snapshot can continue processes; everything else cold-boots.
        if mode == "reboot" or record.snapshot is not Snapshot.MEMORY:
            record.reboots += 1
        record.snapshot = None

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

    # --- control surface -----------------------------------------------------

    async def all_records(self) -> list[SandboxRecord]:
        async with self._lock:
            self._expire()
            return sorted(self._sandboxes.values(), key=lambda r: r.seq)

    async def reset(self) -> None:
        async with self._lock:
            self._sandboxes.clear()
            self.settings = NodeSettings()

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def _refused(reason: str) -> ApiError:
    return ApiError(503, f"pause refused, the sandbox keeps running: {reason}", SANDBOX_PAUSE_REFUSED)


# Page tokens are opaque to clients; inside they are the last item's sequence number.
_TOKEN_PREFIX = "p"


def _encode_token(seq: int) -> str:
    return f"{_TOKEN_PREFIX}{seq}"


def _decode_token(token: str) -> int:
    digits = token.removeprefix(_TOKEN_PREFIX)
    if token[:1] != _TOKEN_PREFIX or not digits.isdigit() or not digits.isascii():
        raise bad_request(f"nextToken: not a token from X-Next-Token: {token!r}")
    return int(digits)
