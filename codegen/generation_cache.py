"""A no-change check in milliseconds: what a generation produced, keyed by everything it read.

Every real generation on this machine records, under the user cache dir (never
in the tree), the sha256 of each file it produced, keyed by a digest of all its
inputs: the spec's bytes and where they came from, the contract, the operation
map, every template, `[tool.codegen]`, the toolchain lock, the interpreter and
codegen's own source.  A check whose key is recorded compares the tree's files
with those digests instead of generating.  Only "clean" is answered that way:
any difference, or anything else unusual, sends the check through the full run,
which names every drift with its diff, so the verdict is the full run's.

A corrupt, truncated or foreign entry is ignored.  `--no-cache` skips the
lookup (the required CI check always passes it).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from codegen.config import SPEC, TOOLCHAIN, Project, Source
from codegen.tree import generated_entries, read_or_none

FORMAT = "e2b-codegen-generation/1"
CODEGEN_SOURCE = Path(__file__).resolve().parent
_SHA256_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class Recorded:
    """What the generation with this key produced: path -> sha256, and the warnings it gave."""

    files: Mapping[str, str]
    warnings: tuple[str, ...]


def _folder_files(folder: Path) -> Iterator[tuple[str, bytes | None]]:
    """(relative path, bytes) of every file under `folder`, sorted; symlinks are never followed."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        found += [Path(dirpath, name).relative_to(folder).as_posix() for name in filenames]
    for rel in sorted(found):
        if not rel.endswith(".pyc"):
            yield rel, read_or_none(folder / rel)


def generation_key(project: Project, source: Source, spec: bytes, *, codegen_source: Path = CODEGEN_SOURCE) -> str:
    """A digest of every input of a generation: equal keys, byte-identical output."""
    digest = hashlib.sha256()

    def part(name: str, data: bytes | None) -> None:
        # Length-prefixed, so that no two different inputs run together into one.
        body = b"<absent>" if data is None else data
        digest.update(f"{name}\0{len(body)}\0".encode() + body)

    part("format", FORMAT.encode())
    part("python", sys.version.encode())
    where = (source.commit, source.configured_url, source.branch, source.spec_path, *source.sdk_tags)
    part("source", json.dumps(where).encode())
    part("spec", spec)
    part("contract", read_or_none(project.contract))
    part("operations", read_or_none(project.operations))
    part("toolchain", read_or_none(project.toolchain_lock))
    # What is installed, in case the environment and the lock disagree.
    part("installed", json.dumps([_installed(name) for name in TOOLCHAIN]).encode())
    pyproject = read_or_none(project.pyproject) or b""
    try:
        table = tomllib.loads(pyproject.decode("utf-8")).get("tool", {}).get("codegen")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        table = None
    part("tool.codegen", json.dumps(table, sort_keys=True).encode())
    for rel, data in _folder_files(project.templates):
        part(f"templates/{rel}", data)
    for rel, data in _folder_files(codegen_source):
        part(f"codegen/{rel}", data)
    return digest.hexdigest()


def _installed(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def _entry_path(key: str) -> Path:
    from codegen.source import cache_dir  # git is imported there; only the cache dir is needed

    return cache_dir() / "generations" / f"{key}.json"


def record(key: str, files: Mapping[str, bytes], warnings: tuple[str, ...]) -> None:
    """After a real generation: remember what it produced (atomically; a failure to cache is no failure)."""
    entry = {
        "format": FORMAT,
        "key": key,
        "files": {path: hashlib.sha256(data).hexdigest() for path, data in sorted(files.items())},
        "warnings": list(warnings),
    }
    path = _entry_path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".entry-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(entry, handle)
        os.replace(temporary, path)
    except OSError:
        pass  # a read-only or full cache only costs the next check its shortcut


def recall(key: str) -> Recorded | None:
    """The entry for `key`, or None when there is none or it is not one this version wrote whole."""
    data = read_or_none(_entry_path(key))
    if data is None:
        return None
    try:
        entry = json.loads(data)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != key:
        return None
    files, warnings = entry.get("files"), entry.get("warnings")
    if not isinstance(files, dict) or not isinstance(warnings, list) or SPEC not in files:
        return None
    for path, sha in files.items():
        if not (isinstance(path, str) and isinstance(sha, str) and len(sha) == 64 and set(sha) <= _SHA256_HEX):
            return None
    if not all(isinstance(w, str) for w in warnings):
        return None
    return Recorded(files=files, warnings=tuple(warnings))


def tree_matches(root: Path, recorded: Recorded, spec: bytes) -> bool:
    """True when the tree holds exactly what the recorded generation produced, spec included.

    The spec is compared with `spec`, the bytes the check obtained (the
    upstream's, or the tracked copy the lock vouched for).  Symlinks, leftovers
    and interrupted writes are the caller's to rule out first.
    """
    if read_or_none(root / SPEC) != spec:
        return False
    for path, sha in recorded.files.items():
        if path == SPEC:
            continue
        data = read_or_none(root / path)
        if data is None or hashlib.sha256(data).hexdigest() != sha:
            return False
    # Nothing else in the generated folders, nor in git's index there (a submodule, a symlink);
    # the manifest (compared above) lists what was generated.
    present, odd = generated_entries(root)
    return not odd and present <= recorded.files.keys()
