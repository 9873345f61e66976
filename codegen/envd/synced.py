"""The envd files at the pin: read beside the control plane's spec, each locked by its git blob id.

How it works, and why: docs/maintainers/design.md, "codegen/envd/synced.py".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from codegen.config import FULL_COMMIT, Source
from toolkit.errors import Problem, ToolError
from toolkit.paths import ENVD_DIR, ENVD_LOCK, Project
from toolkit.printable import printable
from toolkit.read import read_or_none


class UpstreamRepository(Protocol):
    """What of codegen/upstream/fetch.py's cached repository this module uses (fetch, above, calls it)."""

    @property
    def repo(self) -> Any: ...

    def read_regular_file(self, commit: str, path: str) -> tuple[bytes, str] | str | None: ...


SETTING = "pyproject.toml [tool.codegen] envd-files"
# How many entries of the runtime's spec/envd/ are looked at for extra files: a folder that holds
# more is refused rather than walked (the runtime is another repository's data).
MAX_ENTRIES = 1_000


@dataclass(frozen=True)
class SyncedFile:
    """One envd file at the pin: its path (the same in the runtime and here), bytes and blob id."""

    path: str
    data: bytes
    blob_id: str


@dataclass(frozen=True)
class EnvdLock:
    """spec/envd.lock.json: the pin the envd files were synced at, and each one's blob id.

    Where from (the runtime's URL and branch) is the control plane's lock's alone: one upstream, one pin.
    """

    commit: str
    files: Mapping[str, str]  # path -> blob id

    def render(self) -> bytes:
        return (json.dumps({"commit": self.commit, "files": dict(self.files)}, indent=2) + "\n").encode()

    def why_not_for(self, commit: str, paths: tuple[str, ...]) -> str | None:
        """Why this lock cannot vouch for `paths` at `commit` (None: it can), as `Lock.why_not_for` for the spec."""
        if self.commit != commit:
            return f"{ENVD_LOCK} records runtime@{self.commit[:7]}, not {commit[:7]}"
        if tuple(sorted(self.files)) != tuple(sorted(paths)):
            return f"{ENVD_LOCK} records other files than [tool.codegen] envd-files names"
        return None


def http_spec_of(synced: tuple[SyncedFile, ...]) -> SyncedFile | None:
    """envd's HTTP API among the synced files (`envd-files` allows one YAML file), or None."""
    return next((f for f in synced if not f.path.endswith(".proto")), None)


def lock_for(source: Source, synced: tuple[SyncedFile, ...]) -> EnvdLock:
    return EnvdLock(source.commit, {f.path: f.blob_id for f in synced})


def read_envd_lock(project: Project) -> EnvdLock:
    remedy = "restore it from git, or run where the runtime repository is reachable"
    data = read_or_none(project.root / ENVD_LOCK)
    if data is None:
        raise ToolError(Problem("the envd lock is missing", where=ENVD_LOCK, remedy=remedy))
    try:
        raw: Any = json.loads(data)
        lock = EnvdLock(raw["commit"], dict(raw["files"]))
        well_formed = isinstance(lock.commit, str) and all(
            isinstance(p, str) and isinstance(b, str) and FULL_COMMIT.fullmatch(b) for p, b in lock.files.items()
        )
    except (ValueError, KeyError, TypeError):
        well_formed = False
    if not well_formed or not FULL_COMMIT.fullmatch(lock.commit):
        raise ToolError(Problem("the envd lock is unreadable", where=ENVD_LOCK, remedy=remedy))
    return lock


def synced_at(upstream: UpstreamRepository, source: Source) -> tuple[SyncedFile, ...]:
    """Each file `envd-files` names, at the source commit; a missing one, or one more there, is exit 2.

    Extra files matter as much as missing ones: a proto the runtime adds under spec/envd/ that the
    sync leaves out would otherwise be found only when an import of it fails, or never.
    """
    if not source.envd_files:
        return ()
    at = f"runtime@{source.short_commit}"
    found: list[SyncedFile] = []
    for path in source.envd_files:
        read = upstream.read_regular_file(source.commit, path)
        if read is None or isinstance(read, str):
            what = "does not exist" if read is None else read
            raise ToolError(
                Problem(
                    f"{path} {what} at {at}",
                    where=SETTING,
                    remedy="pin a runtime commit that has it, or take it out of envd-files",
                )
            )
        found.append(SyncedFile(path, read[0], read[1]))
    extra = sorted(set(_files_under(upstream, source.commit)) - set(source.envd_files))
    if extra:
        raise ToolError(
            Problem(
                f"{printable(extra[0])} is at {at} but envd-files does not name it"
                + (f" (and {len(extra) - 1} more)" if len(extra) > 1 else ""),
                where=SETTING,
                remedy="add it to envd-files (every envd file is synced), in the pull request that bumps to it",
            )
        )
    return tuple(found)


def _files_under(upstream: UpstreamRepository, commit: str) -> list[str]:
    """Every path under ENVD_DIR at `commit`, whatever its kind (a link or submodule there is as extra as a file)."""
    tree: Any = upstream.repo.commit(commit).tree
    try:
        for part in ENVD_DIR.split("/"):
            tree = tree / part
    except KeyError:
        return []
    if tree.type != "tree":
        return [ENVD_DIR]
    paths: list[str] = []
    for count, entry in enumerate(tree.traverse(), 1):
        if count > MAX_ENTRIES:
            raise ToolError(
                Problem(f"{ENVD_DIR}/ holds more than {MAX_ENTRIES:,} entries at runtime@{commit[:7]}", where=SETTING)
            )
        if entry.type != "tree":
            paths.append(str(entry.path))
    return paths
