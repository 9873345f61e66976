"""What a generation reads from this repository, read once: the cache key hashes these bytes, the run uses them.

How it works, and why: docs/maintainers/design.md, "codegen/generation/inputs.py".
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.errors import Problem, ToolError
from toolkit.paths import ASYNC_SOURCE_DIR, CONTRACT, OPERATIONS, TEMPLATES, TOOLCHAIN_LOCK, Project
from toolkit.read import read_or_none
from toolkit.records import Digest

# The code that decides a generation's output: all of codegen/ and of what it stands on, toolkit/.
CODE_ROOT = Path(__file__).resolve().parents[2]
CODE_FOLDERS = ("codegen", "toolkit")
# openapi-python-client renders these with an ordinary (unsandboxed) jinja environment, so they are
# code: read from the checkout that runs (`code_root`), like codegen/, never from `--root` (the
# required check's tree is a pull request's; the overlays, rendered sandboxed, stay the tree's).
CLIENT_TEMPLATES = "client"


def folder_files(folder: Path) -> Iterator[tuple[str, bytes | None]]:
    """(relative path, bytes) of every file under `folder`, sorted; no bytecode; symlinks never followed."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        found += [Path(dirpath, name).relative_to(folder).as_posix() for name in filenames]
    for rel in sorted(found):
        if not rel.endswith(".pyc"):
            yield rel, read_or_none(folder / rel)


@dataclass(frozen=True)
class GenerationInputs:
    """The bytes of every repository file a generation uses (None: missing, or not a regular file)."""

    contract: bytes | None
    operations: bytes | None
    toolchain_lock: bytes | None
    templates: Mapping[str, bytes | None]
    code: Mapping[str, bytes | None]
    # The async sources of the sync twins (codegen/generation/unasync.py), by their paths in the repository:
    # the tree's text, which the run only tokenizes.
    twin_sources: Mapping[str, bytes | None] = field(default_factory=dict)
    # Where CODE_FOLDERS were read from, and when the process began loading them (None: not checked).
    code_root: Path = field(default=Path())
    imported_ns: int | None = None

    @functools.cached_property
    def digests(self) -> Mapping[str, str]:
        """One digest per group of inputs, computed once: each cache picks the groups its answer depends on
        (codegen/generation/cache.py)."""
        groups: dict[str, Mapping[str, bytes | None]] = {
            "contract": {CONTRACT: self.contract},
            "operations": {OPERATIONS: self.operations},
            "toolchain": {TOOLCHAIN_LOCK: self.toolchain_lock},
            "templates": self.templates,
            "code": self.code,
            "twin_sources": self.twin_sources,
        }
        digests = {}
        for group, files in groups.items():
            digest = Digest()
            for rel, data in files.items():
                digest.add(rel, data)
            digests[group] = digest.hexdigest()
        return digests

    @property
    def code_changed_since_import(self) -> tuple[str, ...]:
        """Code files modified since `imported_ns`, as of now: maybe not what Python ran."""
        if self.imported_ns is None:
            return ()
        return tuple(rel for rel in self.code if _modified_ns(self.code_root / rel) > self.imported_ns)

    def required(self, name: str) -> bytes:
        """The contract's or the map's bytes; missing is the problem the file reader would have said."""
        data, display, what = {
            "contract": (self.contract, CONTRACT, "the contract"),
            "operations": (self.operations, OPERATIONS, "the operation map"),
        }[name]
        if data is None:
            raise ToolError(Problem(f"cannot read {what}: missing or not a regular file", where=display))
        return data

    def write_templates(self, dest: Path) -> Path:
        """The templates as read, under `dest` (a private scratch folder): where the run renders them from."""
        for rel, data in self.templates.items():
            if data is not None:
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                (dest / rel).write_bytes(data)
        dest.mkdir(parents=True, exist_ok=True)
        return dest

    def write_code_file(self, rel: str, dest: Path) -> Path:
        """One of the code files as read (`codegen/...`: the client generator's config), at `dest`."""
        data = self.code.get(rel)
        if data is None:
            raise ToolError(Problem(f"cannot read {rel}: missing or not a regular file"))
        dest.write_bytes(data)
        return dest


def read_inputs(project: Project, *, code_root: Path = CODE_ROOT, imported_ns: int | None = None) -> GenerationInputs:
    """Read every input once.  `imported_ns`: when the process began loading codegen (time.time_ns())."""
    return GenerationInputs(
        contract=read_or_none(project.contract),
        operations=read_or_none(project.operations),
        toolchain_lock=read_or_none(project.root / TOOLCHAIN_LOCK),
        templates=_templates(project, code_root),
        code={f"{folder}/{rel}": data for folder in CODE_FOLDERS for rel, data in folder_files(code_root / folder)},
        twin_sources={f"{ASYNC_SOURCE_DIR}/{rel}": data for rel, data in folder_files(project.root / ASYNC_SOURCE_DIR)},
        code_root=code_root,
        imported_ns=imported_ns,
    )


def _templates(project: Project, code_root: Path) -> dict[str, bytes | None]:
    """templates/ as the run renders it: the tree's overlays, the running checkout's client templates."""
    prefix = f"{CLIENT_TEMPLATES}/"
    found = {rel: data for rel, data in folder_files(project.templates) if not rel.startswith(prefix)}
    found.update((prefix + rel, data) for rel, data in folder_files(code_root / TEMPLATES / CLIENT_TEMPLATES))
    return dict(sorted(found.items()))


def client_templates_differ(project: Project, code_root: Path = CODE_ROOT) -> list[str]:
    """The tree's templates/client/ files that differ from the running checkout's (added, changed, removed)."""
    if project.root.resolve() == code_root.resolve():
        return []
    tree = dict(folder_files(project.templates / CLIENT_TEMPLATES))
    own = dict(folder_files(code_root / TEMPLATES / CLIENT_TEMPLATES))
    return [
        f"{TEMPLATES}/{CLIENT_TEMPLATES}/{rel}"
        for rel in sorted(tree.keys() | own.keys())
        if tree.get(rel) != own.get(rel)
    ]


def _modified_ns(path: Path) -> int:
    try:
        return path.lstat().st_mtime_ns
    except OSError:
        return 0
