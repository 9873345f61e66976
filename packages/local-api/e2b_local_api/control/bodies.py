"""Request bodies as the server's own values: the wire models check the shape, this module the meaning.

Each function takes a raw body and answers what the operation needs, or
raises the spec's 400 naming the field. The models are imported by their
operation names (`e2b_local_api.wire`), which every spec shape exports;
fields that not every shape's model declares (`memory` on connect and
snapshot requests) are read from the JSON object (`validation.optional_bool`).
"""

from __future__ import annotations

import json
from typing import Any

from e2b_local_api.http.errors import bad_request
from e2b_local_api.http.validation import body_object, optional_bool, parse_body, string_map, unwrap
from e2b_local_api.runtime.sandbox import environment_too_long
from e2b_local_api.state.idempotency import fingerprint
from e2b_local_api.state.network import NetworkConfig, network_config
from e2b_local_api.state.sandbox_config import CreateRequest, IamToken, Lifecycle, SandboxConfig, VolumeMount
from e2b_local_api.state.snapshots import snapshot_name
from e2b_local_api.wire import (
    ConnectSandboxRequest,
    CreateSandboxRequest,
    CreateSnapshotRequest,
    ForkSandboxRequest,
    PauseSandboxRequest,
    RefreshSandboxRequest,
    SetSandboxTimeoutRequest,
    UpdateSandboxNetworkRequest,
)

MAX_FORKS = 20  # the spec's maximum for `count`; one shape's model allows 100


def create(raw: bytes, content_type: str | None) -> CreateRequest:
    model = parse_body(raw, CreateSandboxRequest, content_type=content_type)
    auto_resume = model.autoResume is not None and unwrap(model.autoResume.enabled) is True
    lifecycle = Lifecycle(
        pause_on_timeout=model.autoPause is True,
        pause_memory=model.autoPauseMemory is not False,
        auto_resume=auto_resume,
    )
    if auto_resume and not lifecycle.pause_memory:
        # Traffic may resume a sandbox at any time; a filesystem-only snapshot
        # cold-boots, which only an explicit connect may decide to do.
        raise bad_request(
            "autoPauseMemory: false (a filesystem-only auto-pause) cannot be combined with autoResume.enabled: true"
        )
    allow_internet_access = model.allow_internet_access
    env_vars = string_map(model.envVars, "envVars")
    too_long = environment_too_long(env_vars)
    if too_long is not None:
        raise bad_request(f"envVars: {too_long}")
    config = SandboxConfig(
        metadata=string_map(model.metadata, "metadata"),
        env_vars=env_vars,
        lifecycle=lifecycle,
        secure=model.secure,
        allow_internet_access=allow_internet_access,
        network=network_config(model.network, allow_internet_access=allow_internet_access, field="network."),
        iam_tokens=_iam_tokens(model.iam),
        volume_mounts=_volume_mounts(model.volumeMounts),
    )
    timeout = model.timeout if model.timeout is not None else 0
    return CreateRequest(model.templateID, timeout, config, fingerprint(body_object(raw)))


def _iam_tokens(iam: Any) -> dict[str, IamToken]:
    tokens = unwrap(iam.tokens) if iam is not None else None
    if not tokens:
        return {}
    assert isinstance(tokens, dict)
    return {name: IamToken(token.audience, token.tokenType) for name, token in tokens.items()}


def _volume_mounts(mounts: Any) -> tuple[VolumeMount, ...]:
    seen: set[str] = set()
    for index, mount in enumerate(mounts or ()):
        if not mount.path.startswith("/"):
            raise bad_request(f"volumeMounts.{index}.path: expected an absolute path, got {mount.path!r}")
        if mount.path in seen:
            raise bad_request(f"volumeMounts.{index}.path: {mount.path!r} is mounted twice")
        seen.add(mount.path)
    return tuple(VolumeMount(m.name, m.path) for m in mounts or ())


def set_timeout(raw: bytes, content_type: str | None) -> int:
    return parse_body(raw, SetSandboxTimeoutRequest, content_type=content_type).timeout


def connect(raw: bytes, content_type: str | None) -> tuple[int, bool]:
    """(seconds, memory): the deadline to extend to, and whether a paused sandbox restores its memory.

    `timeout` is required by the spec, but the released SDK's `sbx.connect()`
    sends `{}`; such a connect leaves the deadline as it is (a timeout of 0
    never extends it). An explicit `null` is still refused.
    """
    try:
        value = json.loads(raw) if raw.strip() else None
    except ValueError:
        value = None  # parse_body reports it
    if isinstance(value, dict) and "timeout" not in value:
        raw = json.dumps({**value, "timeout": 0}).encode()
    model = parse_body(raw, ConnectSandboxRequest, content_type=content_type)
    return model.timeout, optional_bool(body_object(raw), "memory", default=True)


def pause(raw: bytes, content_type: str | None) -> tuple[bool, bool]:
    """(memory, force)."""
    model = parse_body(raw, PauseSandboxRequest, content_type=content_type, optional=True)
    return model.memory is not False, model.force is True


def fork(raw: bytes, content_type: str | None) -> tuple[int, int]:
    """(timeout of each fork, how many)."""
    model = parse_body(raw, ForkSandboxRequest, content_type=content_type, optional=True)
    count = model.count if model.count is not None else 1
    if not 1 <= count <= MAX_FORKS:
        raise bad_request(f"count: must be between 1 and {MAX_FORKS}, got {count}")
    return (model.timeout if model.timeout is not None else 0), count


def refresh(raw: bytes, content_type: str | None) -> int | None:
    """Seconds to keep the sandbox alive, None when the body leaves it out."""
    return parse_body(raw, RefreshSandboxRequest, content_type=content_type, optional=True).duration


def snapshot(raw: bytes, content_type: str | None) -> tuple[str | None, bool]:
    """(name, memory)."""
    model = parse_body(raw, CreateSnapshotRequest, content_type=content_type)
    name = snapshot_name(model.name) if model.name is not None else None
    return name, optional_bool(body_object(raw), "memory", default=True)


def network_update(raw: bytes, content_type: str | None) -> NetworkConfig:
    """The new egress settings; what the body leaves out is cleared."""
    model = parse_body(raw, UpdateSandboxNetworkRequest, content_type=content_type)
    config = network_config(model, allow_internet_access=model.allow_internet_access, field="")
    assert config is not None  # a model is given
    return config
