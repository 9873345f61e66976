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
    """The sandbox runs: its processes run and its deadline counts down."""
    PAUSED = "paused"
    """The sandbox is stopped and kept as a snapshot; `connect()` resumes it."""


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
    """True when this call paused the sandbox, False when it already was paused."""
    forced: bool
    """True only when the API skipped the guest-agent health check for this pause."""


class SandboxInfoLifecycle(TypedDict):
    """What happens at the deadline ("pause" or "kill"), and whether traffic resumes a paused sandbox."""

    on_timeout: Literal["pause", "kill"]
    """What the API does at the sandbox's deadline: "pause" it or "kill" it."""
    auto_resume: bool
    """Whether traffic to the paused sandbox resumes it."""


class SandboxNetworkInfo(TypedDict, total=False):
    """A sandbox's network as the API reports it; the proxy's password is never returned."""

    allow_out: list[str]
    """Allowed egress destinations: CIDR blocks, IP addresses or domain names; they win over `deny_out`."""
    deny_out: list[str]
    """Denied egress destinations: CIDR blocks or IP addresses."""
    rules: dict[str, list[dict[str, Any]]]
    """Transform rules (headers set) for egress requests, by domain."""
    egress_proxy: dict[str, str]
    """The SOCKS5 proxy egress goes through: `address` and `username`, never the password."""
    allow_public_traffic: bool
    """Whether the sandbox's URLs answer without authentication."""
    mask_request_host: str
    """The host mask used for the sandbox's requests."""


@dataclass(frozen=True)
class SandboxInfo:
    """What the API reports about a sandbox (`get_info()`, `list()`).

    `allow_internet_access`, `network`, `lifecycle` and `sandbox_domain` come
    with `get_info()`; in list results they are None.
    """

    sandbox_id: str
    """The sandbox's id."""
    sandbox_domain: str | None
    """The base domain the sandbox's traffic is served on (None in list results)."""
    template_id: str
    """The id of the template the sandbox was started from."""
    name: str | None
    """The template's alias, if it has one."""
    metadata: dict[str, str]
    """The metadata the sandbox was created with."""
    started_at: datetime.datetime
    """When the sandbox started."""
    end_at: datetime.datetime
    """When the sandbox expires, its deadline (`lifecycle` says whether it is then paused or killed)."""
    state: SandboxState
    """Running or paused."""
    cpu_count: int
    """Its CPU cores."""
    memory_mb: int
    """Its memory, in MiB."""
    envd_version: str
    """The version of envd, the guest agent in the sandbox ("" when the API did not say)."""
    allow_internet_access: bool | None = None
    """Whether internet access was explicitly allowed (True) or denied (False); None when not set."""
    network: SandboxNetworkInfo | None = None
    """Its network configuration, when it has one."""
    lifecycle: SandboxInfoLifecycle | None = None
    """What happens at its deadline, and whether traffic resumes it."""
    volume_mounts: list[dict[str, str]] = field(default_factory=list)
    """The volumes mounted in it, each a `name` and a `path`."""
    envd_unresponsive_at_pause: bool | None = None
    """True when the snapshot it resumes from was taken while envd did not answer (a forced pause).

    Such a sandbox resumes only with `connect(on_resume="reboot")`; None otherwise.
    """
    disk_size_mb: int | None = None
    """Its disk size, in MiB, when the API reports it."""


@dataclass(frozen=True)
class SandboxMetrics:
    """One resource usage sample of a sandbox (`get_metrics()`)."""

    cpu_count: int
    """The sandbox's CPU cores."""
    cpu_used_pct: float
    """CPU usage, in percent."""
    disk_total: int
    """Total disk space, in bytes."""
    disk_used: int
    """Disk space used, in bytes."""
    mem_total: int
    """Total memory, in bytes."""
    mem_used: int
    """Memory used, in bytes."""
    mem_cache: int
    """Page cache, in bytes."""
    timestamp: datetime.datetime
    """When the sample was taken (UTC)."""


@dataclass(frozen=True)
class SnapshotInfo:
    """A persistent snapshot; `Sandbox.create(snapshot_id)` starts a sandbox from it."""

    snapshot_id: str
    """The snapshot's id, with its tag: `namespace/name:tag` when it was named, else `template-id:tag`."""
    names: list[str] = field(default_factory=list)
    """Every full name of the snapshot, with namespace and tag."""
