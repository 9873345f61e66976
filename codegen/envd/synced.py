"""The envd files at the pin: read beside the control plane's spec, each locked by its git blob id.

How it works, and why: docs/maintainers/design.md, "codegen/envd/synced.py".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codegen.config import FULL_COMMIT, Source
from codegen.upstream.spec_lock import git_blob_id
from toolkit.errors import Problem, ToolError
from toolkit.paths import ENVD_DIR, ENVD_LOCK, Project
from toolkit.printable import printable
from toolkit.read import read_or_none

if TYPE_CHECKING:
    from codegen.upstream.fetch import UpstreamRepository

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


def tracked_if_locked(project: Project, source: Source, unreachable: str) -> tuple[SyncedFile, ...]:
    """The offline fallback for the envd files: the bytes the envd lock records, tracked or from git.

    The same rule as the spec's (`tracked_copy_if_locked`): a file edited here stands in only
    through git's copy of the locked blob, so the edit is drift, never the generated input.
    """
    if not source.envd_files:
        return ()
    from codegen.upstream.fetch import locked_blob_from_git  # fetch imports this module

    lock = read_envd_lock(project)
    mismatch = lock.why_not_for(source.commit, source.envd_files)
    remedy = (
        f"restore {ENVD_DIR}/ and {ENVD_LOCK} from git, or run where the runtime repository is reachable "
        "(E2B_RUNTIME_REPO may name a mirror or a checkout)"
    )
    if mismatch:
        said = f"{unreachable}, and the tracked envd files cannot stand in: {mismatch}"
        raise ToolError(Problem(said, remedy=remedy))
    found: list[SyncedFile] = []
    for path in source.envd_files:
        blob = lock.files[path]
        data = read_or_none(project.root / path)
        if data is None or git_blob_id(data) != blob:
            data = locked_blob_from_git(project, blob)
        if data is None:
            raise ToolError(
                Problem(
                    f"{unreachable}, {path} is not the locked blob {blob[:12]} and git holds no copy of it",
                    where=path,
                    remedy=remedy,
                )
            )
        found.append(SyncedFile(path, data, blob))
    return tuple(found)
