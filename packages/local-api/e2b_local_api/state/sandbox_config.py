"""What a sandbox is started with, apart from its template: the part a fork copies.

Kept in the server's own terms, not as wire models: the request bodies that
carry it differ between spec shapes (`bodies.py` reads them), and a fork, a
snapshot and a create all need the same few values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from e2b_local_api.state.network import NetworkConfig


@dataclass(frozen=True)
class Lifecycle:
    """What happens at the deadline, and what the pause then keeps."""

    pause_on_timeout: bool = False  # autoPause; else the sandbox is killed
    pause_memory: bool = True  # autoPauseMemory: False keeps the filesystem only
    auto_resume: bool = False  # autoResume.enabled: traffic would resume it (no traffic here)


@dataclass(frozen=True)
class IamToken:
    audience: str
    token_type: str


@dataclass(frozen=True)
class VolumeMount:
    name: str
    path: str


@dataclass(frozen=True)
class SandboxConfig:
    metadata: Mapping[str, str] = field(default_factory=dict)
    env_vars: Mapping[str, str] = field(default_factory=dict)
    lifecycle: Lifecycle = Lifecycle()
    secure: bool | None = None
    # As given at creation (null when not given); the network below has its effect.
    allow_internet_access: bool | None = None
    network: NetworkConfig | None = None
    iam_tokens: Mapping[str, IamToken] = field(default_factory=dict)
    volume_mounts: tuple[VolumeMount, ...] = ()


@dataclass(frozen=True)
class CreateRequest:
    """A validated create: where to start from, for how long, with what."""

    template: str  # an id or alias of a template, or a snapshot's id or name
    timeout: int
    config: SandboxConfig
    fingerprint: str  # of the body, for Idempotency-Key
