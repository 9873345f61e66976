"""What the SDK's calls return: plain frozen values, never the generated models."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["SandboxInfo", "SandboxPauseResult", "SandboxState"]

SandboxState = Literal["running", "paused"]
"""A sandbox's state as the API reports it (`SandboxInfo.state`) and as `list(state=...)` filters it."""


@dataclass(frozen=True)
class SandboxPauseResult:
    """The outcome of `pause()`.

    `paused` is True when the sandbox is paused after the call, False when it
    already was (the API answered 409). `forced` is what the API did, not the
    option that was passed: True only when the snapshot skipped the guest-agent
    health check. A `force=True` request that joined a normal pause already in
    flight reports False.

    Unlike the bool that `pause()` returned before 2.0, this object is always
    truthy: read `.paused`.
    """

    paused: bool
    forced: bool


@dataclass(frozen=True)
class SandboxInfo:
    """What the API reports about a sandbox (`get_info()`, `list()`).

    `envd_version` is None in list results, which do not carry it.
    """

    sandbox_id: str
    template_id: str
    state: SandboxState
    started_at: datetime.datetime
    end_at: datetime.datetime
    cpu_count: int
    memory_mb: int
    alias: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    envd_version: str | None = None
