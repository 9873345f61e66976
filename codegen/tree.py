"""The last step: write the staged output over the tree (all or nothing), or compare with it.

Writing swaps whole generated folders: each is built beside its target, then
renamed into place; the single files go through a temporary file and
`os.replace`.  Until the last rename succeeds every step can be undone, so an
error or Ctrl-C leaves the tree as it was.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from codegen.errors import CodegenError, Problem
from codegen.stage import GENERATED_ROOTS, MANIFEST, Staged, read_manifest_paths


def tree_files(root: Path, folder: str) -> Iterator[str]:
    """Files under a generated folder, skipping the bytecode Python leaves there."""
    base = root / folder
    if not base.is_dir():
        return
    for path in sorted(base.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            yield path.relative_to(root).as_posix()


@dataclass(frozen=True)
class Drift:
    path: str
    kind: str  # "hand-edited spec", "changed", "missing", "stale", "unexpected"
    expected: bytes | None  # what the pipeline produces
    actual: bytes | None  # what the tree holds


def compare(root: Path, staged: Staged) -> list[Drift]:
    """Every generated path where the tree differs from the staged output (spec excluded)."""
    expected = {p: d for p, d in staged.files().items() if p != "spec/openapi.yml"}
    previous = read_or_none(root / MANIFEST)
    recorded = read_manifest_paths(previous) if previous is not None else set()
    drifts: list[Drift] = []
    for path, data in sorted(expected.items()):
        actual = read_or_none(root / path)
        if actual is None:
            drifts.append(Drift(path, "missing", data, None))
        elif actual != data:
            drifts.append(Drift(path, "changed", data, actual))
    present = {p for folder in GENERATED_ROOTS for p in tree_files(root, folder)}
    for path in sorted((present | {p for p in recorded if (root / p).is_file()}) - expected.keys()):
        kind = "stale" if path in recorded else "unexpected"
        drifts.append(Drift(path, kind, None, read_or_none(root / path)))
    return drifts


def read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def refuse_unexpected(drifts: list[Drift]) -> None:
    """A file in a generated folder that the pipeline neither made nor recorded is someone's work."""
    found = [d.path for d in drifts if d.kind == "unexpected"]
    if found:
        raise CodegenError(
            *(
                Problem(
                    "is inside a generated folder but was not generated",
                    where=path,
                    remedy="move hand-written code out of generated folders (or delete the file), "
                    "then run codegen again",
                )
                for path in found
            )
        )


def write_tree(root: Path, staged: Staged, extra: Mapping[str, bytes] | None = None) -> list[str]:
    """Replace the generated folders and files, plus `extra` single files, in one go.

    Returns the paths whose content changed (nothing is written when none did).
    """
    extra = dict(extra or {})
    drifts = compare(root, staged)
    refuse_unexpected(drifts)
    changed = [d.path for d in drifts if d.kind in ("changed", "missing", "stale")]
    if read_or_none(root / "spec/openapi.yml") != staged.spec:
        changed.insert(0, "spec/openapi.yml")
    changed = [p for p, data in extra.items() if read_or_none(root / p) != data] + changed
    if not changed:
        return []
    tag = uuid.uuid4().hex[:8]
    undo: list[tuple[Path, Path | None]] = []  # (target, backup or None when it did not exist)
    try:
        for folder in GENERATED_ROOTS:
            target = root / folder
            fresh = target.with_name(f".{target.name}.codegen-new-{tag}")
            prefix = folder + "/"
            for path, data in staged.generated.items():
                if path.startswith(prefix):
                    out = fresh / path.removeprefix(prefix)
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(data)
            fresh.mkdir(parents=True, exist_ok=True)
            undo.append(_swap(target, fresh, tag))
        for path, data in (
            ("spec/openapi.yml", staged.spec),
            ("spec/openapi.lock.json", staged.lock),
            (MANIFEST, staged.manifest),
            *extra.items(),
        ):
            target = root / path
            fresh = target.with_name(f".{target.name}.codegen-new-{tag}")
            fresh.parent.mkdir(parents=True, exist_ok=True)  # e.g. the first changelog fragment
            fresh.write_bytes(data)
            undo.append(_swap(target, fresh, tag))
    except BaseException:
        for target, backup in reversed(undo):
            _remove(target)
            if backup is not None:
                os.replace(backup, target)
        for leftover in root.glob(f"**/.*.codegen-new-{tag}"):
            _remove(leftover)
        raise
    for _, backup in undo:
        if backup is not None:
            _remove(backup)
    return changed


def _swap(target: Path, fresh: Path, tag: str) -> tuple[Path, Path | None]:
    backup: Path | None = None
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        backup = target.with_name(f".{target.name}.codegen-old-{tag}")
        os.replace(target, backup)
    try:
        os.replace(fresh, target)
    except BaseException:
        if backup is not None:
            os.replace(backup, target)
        raise
    return target, backup


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
