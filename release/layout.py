"""Where each package keeps what a release reads and writes, and which of those paths a release writes.

`packages/<package>/` holds `pyproject.toml`, `CHANGELOG.md`, `changelog.d/`
and its import packages.  What a release writes (release/tree.py) is, with
codegen's own targets, all that an interrupted write's journal may name
(codegen/tree/write.py, `is_write_target`).  Light on purpose: codegen imports it on every
run, so nothing here imports beyond the standard library and release.fragments.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from release.fragments import FRAGMENT_DIR, FRAGMENT_NAME

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
