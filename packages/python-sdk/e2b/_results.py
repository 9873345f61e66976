"""What the SDK's calls return: plain values, never the generated models."""

from __future__ import annotations

import datetime
import enum
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

__all__ = [
    "SandboxInfo",
    "SandboxInfoLifecycle",
    "SandboxMetrics",
    "SandboxNetworkInfo",
    "SandboxPauseResult",
    "SandboxState",
    "SnapshotInfo",
]


class SandboxState(enum.StrEnum):
    """A sandbox's state as the API reports it.

    Each member equals its wire string: `SandboxState.RUNNING == "running"`.
    """

    RUNNING = "running"
    PAUSED = "paused"


@dataclass(frozen=True)
class SandboxPauseResult:
    """The outcome of `pause()`.

    `paused` is True when the sandbox is paused after the call, False when it
    already was (the API answered 409). `forced` is what the API did, not the
    option that was passed: True only when the snapshot skipped the guest-agent
    health check. A `force=True` request that joined a normal pause already in
    flight reports False.

    Unlike the bool that `pause()` returns in e2b 2.x, this object is always
    truthy: read `.paused`.
    """

    paused: bool
    forced: bool


class SandboxInfoLifecycle(TypedDict):
    """What happens at the deadline ("pause" or "kill"), and whether traffic resumes a paused sandbox."""

    on_timeout: Literal["pause", "kill"]
    auto_resume: bool


class SandboxNetworkInfo(TypedDict, total=False):
    """A sandbox's network as the API reports it; the proxy's password is never returned."""

    allow_out: list[str]
    deny_out: list[str]
    rules: dict[str, list[dict[str, Any]]]
    egress_proxy: dict[str, str]
    allow_public_traffic: bool
    mask_request_host: str


@dataclass(frozen=True)
class SandboxInfo:
    """What the API reports about a sandbox (`get_info()`, `list()`).

    `allow_internet_access`, `network`, `lifecycle` and `sandbox_domain` come
    with `get_info()`; in list results they are None.
    """

    sandbox_id: str
    sandbox_domain: str | None
    template_id: str
    name: str | None
    """The template's alias, if it has one."""
    metadata: dict[str, str]
    started_at: datetime.datetime
    end_at: datetime.datetime
    state: SandboxState
    cpu_count: int
    memory_mb: int
    envd_version: str
    allow_internet_access: bool | None = None
    network: SandboxNetworkInfo | None = None
    lifecycle: SandboxInfoLifecycle | None = None
    volume_mounts: list[dict[str, str]] = field(default_factory=list)
    envd_unresponsive_at_pause: bool | None = None
    disk_size_mb: int | None = None


@dataclass(frozen=True)
class SandboxMetrics:
    """One resource usage sample of a sandbox (`get_metrics()`)."""

    cpu_count: int
    cpu_used_pct: float
    disk_total: int
    """Bytes."""
    disk_used: int
    mem_total: int
    mem_used: int
    mem_cache: int
    """Page cache, in bytes."""
    timestamp: datetime.datetime


@dataclass(frozen=True)
class SnapshotInfo:
    """A persistent snapshot; `Sandbox.create(snapshot_id)` starts a sandbox from it."""

    snapshot_id: str
    names: list[str] = field(default_factory=list)
    """Every full name of the snapshot, with namespace and tag."""
