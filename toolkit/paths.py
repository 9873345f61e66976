"""Every path the tools read or write, relative to the repository's root, and which of them a write may swap.

codegen's and a release's writes go through one journaled transaction (toolkit/transaction.py): what
its journal may name and where its leftovers may lie is decided here, for both.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from toolkit.changelog import BUMP_TYPES, FRAGMENT_DIR, FRAGMENT_NAME

# What codegen reads or writes.
PYPROJECT = "pyproject.toml"
SPEC = "spec/openapi.yml"
RUNTIME_REF = "spec/runtime-ref"
LOCK = "spec/openapi.lock.json"
# envd, the data plane: its files are synced at the same pin into this folder (at their paths in the
# runtime repository), and their blob ids recorded in their own lock beside the control plane's.
ENVD_DIR = "spec/envd"
ENVD_LOCK = "spec/envd.lock.json"
MANIFEST = "spec/generated-files.json"
CONTRACT = "spec/contract.yml"
OPERATIONS = "spec/operations.yml"
TEMPLATES = "templates"
TOOLCHAIN_LOCK = "requirements/codegen.txt"
API_DIR = "packages/python-sdk/e2b/api"
CLIENT_DIR = f"{API_DIR}/client"
WIRE_DIR = "packages/local-api/e2b_local_api/wire"
# envd's messages and Connect clients and servers, generated from the synced protos: the SDK's
# (the released SDK's module paths, e2b.envd.process.process_pb ...) and the local server's.
ENVD_CLIENT_DIR = "packages/python-sdk/e2b/envd"
ENVD_SERVER_DIR = f"{WIRE_DIR}/envd"
# envd's HTTP API (envd.yaml without its orchestrator-only operations): the SDK's client for /files and /health.
ENVD_HTTP_DIR = f"{ENVD_CLIENT_DIR}/http"

# The SDK's hand-written async modules, and their sync twins, which codegen derives from them
# (codegen/generation/unasync.py) at the same paths under the twins' folder.
ASYNC_SOURCE_DIR = "packages/python-sdk/e2b/sandbox_async"
SYNC_TWIN_DIR = "packages/python-sdk/e2b/sandbox_sync"
# Folders the pipeline owns entirely: nothing hand-written may live in them.
GENERATED_ROOTS = (API_DIR, ENVD_CLIENT_DIR, WIRE_DIR, SYNC_TWIN_DIR)
# bump's changelog fragments (the report) go here.
CHANGELOG_DIR = "packages/python-sdk/changelog.d"


@dataclass(frozen=True)
class Project:
    """The paths this repository owns, under its root."""

    root: Path

    @property
    def pyproject(self) -> Path:
        return self.root / PYPROJECT

    @property
    def spec(self) -> Path:
        return self.root / SPEC

    @property
    def runtime_ref(self) -> Path:
        return self.root / RUNTIME_REF

    @property
    def lock(self) -> Path:
        return self.root / LOCK

    @property
    def manifest(self) -> Path:
        return self.root / MANIFEST

    @property
    def contract(self) -> Path:
        return self.root / CONTRACT

    @property
    def operations(self) -> Path:
        return self.root / OPERATIONS

    @property
    def templates(self) -> Path:
        return self.root / TEMPLATES

    @property
    def toolchain_lock(self) -> Path:
        return self.root / TOOLCHAIN_LOCK

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


# Each package's folder, `packages/<package>/`, holds its pyproject.toml, CHANGELOG.md, changelog.d/
# and import packages: what a release reads and writes.
PACKAGES_DIR = "packages"
CHANGELOG = "CHANGELOG.md"
# Per package: its pyproject.toml, its CHANGELOG.md, the `<module>/__init__.py` holding __version__, and
# the fragments a release consumes.
_RELEASE_TARGET = re.compile(
    rf"{PACKAGES_DIR}/[A-Za-z0-9][A-Za-z0-9_.-]*/"
    rf"(?:pyproject\.toml|{re.escape(CHANGELOG)}|[A-Za-z_][A-Za-z0-9_]*/__init__\.py|{FRAGMENT_DIR}/{FRAGMENT_NAME})"
)


def is_release_target(path: str) -> bool:
    """A path a release writes or removes (relative to the repository root)."""
    return _RELEASE_TARGET.fullmatch(path) is not None


def release_folders(root: Path) -> list[str]:
    """Where a release's write leaves its temporary siblings: each package folder and the folders in it."""
    found: list[str] = []
    base = root / PACKAGES_DIR
    if base.is_symlink() or not base.is_dir():
        return found
    for package in sorted(os.listdir(base)):
        folder = base / package
        if folder.is_symlink() or not folder.is_dir():
            continue
        found.append(f"{PACKAGES_DIR}/{package}")
        found += [
            f"{PACKAGES_DIR}/{package}/{name}"
            for name in sorted(os.listdir(folder))
            if not (folder / name).is_symlink() and (folder / name).is_dir()
        ]
    return found


# The changelog fragment a bump writes: +runtime-<start[:12]>-<pin[:12]>.<type>.md, the change from the pin
# its record started at to the pin it set (toolkit/runtime_record.py), its type by the report's level.
# +runtime-<pin[:12]>.<type>.md is the older form, which did not name its start.
BUMP_FRAGMENT_NAME = re.compile(
    rf"\+runtime-(?:(?P<start>[0-9a-f]{{12}})-)?(?P<pin>[0-9a-f]{{12}})\.(?:{'|'.join(BUMP_TYPES.values())})\.md"
)
# Everything a codegen write swaps (generate: the folders, spec, lock, manifest; bump: also the pin and
# a fragment).  With what a release writes, nothing else may be named by a journal or removed as a leftover.
WRITE_TARGETS = frozenset({*GENERATED_ROOTS, SPEC, LOCK, MANIFEST, RUNTIME_REF, ENVD_DIR, ENVD_LOCK})
# Where a write puts its temporary siblings: beside every target it may swap.
LEFTOVER_FOLDERS = (
    "spec",
    *dict.fromkeys(root.rpartition("/")[0] for root in GENERATED_ROOTS),
    CHANGELOG_DIR,
)


def fragment_path(start: str, commit: str, level: str) -> str:
    return f"{CHANGELOG_DIR}/+runtime-{start[:12]}-{commit[:12]}.{BUMP_TYPES[level]}.md"


def is_write_target(path: str) -> bool:
    """A path a codegen or release write swaps into place: the only kind a journal may name."""
    folder, _, name = path.rpartition("/")
    bump_fragment = folder == CHANGELOG_DIR and BUMP_FRAGMENT_NAME.fullmatch(name) is not None
    return path in WRITE_TARGETS or bump_fragment or is_release_target(path)


def leftover_folders(root: Path) -> tuple[str, ...]:
    """Every folder where a codegen or release write puts its temporary siblings."""
    return (*LEFTOVER_FOLDERS, *release_folders(root))


def read_manifest_paths(data: bytes) -> set[str]:
    """The paths a manifest lists inside the generated folders.

    The manifest is data a pull request commits: an entry outside them (`.git/config`,
    `README.md`, `../x`) is never read, printed or counted as generated; codegen never
    writes such a manifest, so the manifest itself is then drift (`changed`).
    """
    try:
        files = json.loads(data)["files"]
        return {p for p in files if isinstance(p, str) and is_generated_path(p)}
    except (ValueError, KeyError, TypeError):
        return set()


def is_generated_path(path: str) -> bool:
    """A normalized relative path under one of GENERATED_ROOTS, with no `.git` part."""
    parts = path.split("/")
    if any(part in ("", ".", "..") or part.lower() == ".git" or "\\" in part for part in parts):
        return False
    return any(path.startswith(folder + "/") for folder in GENERATED_ROOTS)
