"""Remembered answers: JSON values in codegen's cache folder, each under the digest of what decides it."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from toolkit.cache_folder import cache_root, make_private_folder, require_private
from toolkit.paths import Project
from toolkit.read import read_or_none


class Digest:
    """sha256 over named parts."""

    def __init__(self) -> None:
        self._sha = hashlib.sha256()

    def add(self, name: str, data: bytes | None) -> None:
        # Length-prefixed, so that no two different inputs run together into one.
        body = b"<absent>" if data is None else data
        self._sha.update(f"{name}\0{len(body)}\0".encode() + body)

    def hexdigest(self) -> str:
        return self._sha.hexdigest()


def entry_path(project: Project, kind: str, key: str) -> Path:
    return cache_root(project) / kind / f"{key}.json"


def read_entry(path: Path) -> object:
    """The JSON value stored at `path`; None when there is none or it is not JSON; refused when not private."""
    require_private(path.parent)
    require_private(path)
    data = read_or_none(path)
    try:
        return json.loads(data) if data is not None else None
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        return None


def write_entry(path: Path, entry: Mapping[str, object]) -> None:
    try:
        make_private_folder(path.parent)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".entry-")  # mode 0600
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(entry, handle)
        os.replace(temporary, path)
    except OSError:
        pass  # a read-only or full cache only costs the next check its shortcut


class Records:
    """One kind of remembered answer (what a generation produced, the validator's pass, griffe's reading of a
    package, the client's names for a spec): JSON values in the cache folder, each under the digest of its
    input and of what every answer of the kind depends on (`depends_on`: the code that computes it, the
    tools' versions).  An answer is data whoever can write the folder decides: its reader checks its form."""

    def __init__(self, project: Project, kind: str, depends_on: Mapping[str, bytes]) -> None:
        self.project = project
        self.kind = kind
        self._base = Digest()
        self._base.add("kind", kind.encode())
        self._base.add("python", sys.version.encode())
        for name, data in sorted(depends_on.items()):
            self._base.add(name, data)

    def key(self, data: bytes) -> str:
        """What the answer for `data` is kept under: another input, or another `depends_on`, another key."""
        digest = Digest()
        digest.add("base", self._base.hexdigest().encode())
        digest.add("input", data)
        return digest.hexdigest()

    def recall(self, data: bytes) -> object:
        """The value remembered for `data`; None when there is none."""
        key = self.key(data)
        entry = read_entry(entry_path(self.project, self.kind, key))
        if isinstance(entry, dict) and entry.get("key") == key:
            return entry.get("value")
        return None

    def remember(self, data: bytes, value: object) -> None:
        key = self.key(data)
        write_entry(entry_path(self.project, self.kind, key), {"key": key, "value": value})


def source_of(module: str) -> bytes:
    """The source of one of this repository's modules (`codegen.api_changes.generated_names`), for `depends_on`."""
    return (Path(__file__).resolve().parents[1] / (module.replace(".", "/") + ".py")).read_bytes()
