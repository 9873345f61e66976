"""Snapshots: persistent templates taken of a sandbox, which outlive it and start new sandboxes.

Named `<id>:default` or `local/<name>:default`, accepted with or without namespace and tag; a
snapshot under an existing name adds a build, and sandboxes start from the latest.

How it works, and why: docs/maintainers/packages.md, "packages/local-api/e2b_local_api/state/snapshots.py".
"""

from __future__ import annotations

import re
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from e2b_local_api.http.errors import bad_request
from e2b_local_api.state.templates import builtin_template

NAMESPACE = "local"
TAG = "default"
NAME_RULE = "1 to 128 lower-case letters, digits, '-' or '_', starting with a letter or digit"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,127}$")


@dataclass(frozen=True)
class Reference:
    """A snapshot named as `[namespace/]name[:tag]`."""

    namespace: str | None
    name: str
    tag: str | None


def parse_reference(text: str) -> Reference:
    rest, colon, tag = text.rpartition(":")
    if not colon:
        rest, tag = text, ""
    namespace, slash, name = rest.partition("/")
    if not slash:
        namespace, name = "", rest
    return Reference(namespace if slash else None, name, tag if colon else None)


def snapshot_name(text: str) -> str:
    """The bare name a create-snapshot request asks for, or a 400 naming `name`."""
    ref = parse_reference(text)
    if ref.namespace not in (None, NAMESPACE):
        raise bad_request(f"name: snapshots live in the {NAMESPACE!r} namespace, got {text!r}")
    if ref.tag not in (None, TAG):
        raise bad_request(f"name: the only tag is {TAG!r}, got {text!r}")
    if not _NAME.match(ref.name):
        raise bad_request(f"name: expected {NAME_RULE}, got {text!r}")
    if builtin_template(ref.name) is not None:
        raise bad_request(f"name: {ref.name!r} is a built-in template's name")
    return ref.name


@dataclass(frozen=True)
class SnapshotBuild:
    """The state one snapshot request captured."""

    build_id: str
    sandbox_id: str  # the sandbox it was taken of
    memory: bool  # False: filesystem only, sandboxes started from it cold-boot
    taken_at: datetime
    cpu_count: int
    memory_mb: int
    disk_size_mb: int
    env_vars: Mapping[str, str]


@dataclass
class SnapshotRecord:
    template_id: str
    name: str | None
    seq: int  # creation order: lists are newest first and pages cut on it
    created_at: datetime
    builds: list[SnapshotBuild] = field(default_factory=list)

    @property
    def snapshot_id(self) -> str:
        return f"{NAMESPACE}/{self.name}:{TAG}" if self.name else f"{self.template_id}:{TAG}"

    @property
    def names(self) -> list[str]:
        return [self.snapshot_id] if self.name else []

    @property
    def latest(self) -> SnapshotBuild:
        return self.builds[-1]

    def matches(self, ref: Reference) -> bool:
        if ref.tag not in (None, TAG):
            return False
        if ref.namespace is None and ref.name == self.template_id:
            return True
        return self.name is not None and ref.name == self.name and ref.namespace in (None, NAMESPACE)

    def taken_of(self, sandbox_id: str) -> bool:
        return any(build.sandbox_id == sandbox_id for build in self.builds)


class SnapshotCatalog:
    """The snapshots; the store calls it under its lock."""

    def __init__(self) -> None:
        self._snapshots: dict[str, SnapshotRecord] = {}
        self._seq = 0

    def take(
        self,
        name: str | None,
        *,
        sandbox_id: str,
        memory: bool,
        now: datetime,
        sizes: tuple[int, int, int],
        env_vars: Mapping[str, str],
    ) -> SnapshotRecord:
        """A new build: of the snapshot with this name if there is one, else of a new snapshot."""
        snapshot = next((s for s in self._snapshots.values() if name is not None and s.name == name), None)
        if snapshot is None:
            if name is not None and name in self._snapshots:
                raise bad_request(f"name: {name!r} is another snapshot's id")
            self._seq += 1
            snapshot = SnapshotRecord("snap" + secrets.token_hex(8), name, self._seq, now)
            self._snapshots[snapshot.template_id] = snapshot
        cpu_count, memory_mb, disk_size_mb = sizes
        build = SnapshotBuild(str(uuid.uuid4()), sandbox_id, memory, now, cpu_count, memory_mb, disk_size_mb, env_vars)
        snapshot.builds.append(build)
        return snapshot

    def find(self, text: str) -> SnapshotRecord | None:
        ref = parse_reference(text)
        return next((s for s in self._snapshots.values() if s.matches(ref)), None)

    def remove(self, snapshot: SnapshotRecord) -> None:
        del self._snapshots[snapshot.template_id]

    def newest_first(self) -> list[SnapshotRecord]:
        return sorted(self._snapshots.values(), key=lambda s: s.seq, reverse=True)

    def clear(self) -> None:
        self._snapshots.clear()
