"""The distributions under packages/ as the Python API check needs them: a name and a folder.

How it works, and why: docs/maintainers/design.md, "python_api/distributions.py".
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name

from toolkit.errors import Problem, ToolError
from toolkit.paths import PACKAGES_DIR
from toolkit.read import read_or_none


@dataclass(frozen=True)
class Distribution:
    name: str  # the distribution name, canonical
    path: str  # its folder, relative to the repository root


def list_distributions(root: Path) -> list[Distribution]:
    """Every packages/*/pyproject.toml's [project].name, sorted by folder; none read through a symlink."""
    found: list[Distribution] = []
    for pyproject in sorted((root / PACKAGES_DIR).glob("*/pyproject.toml")):
        where = pyproject.relative_to(root).as_posix()
        linked = (root / PACKAGES_DIR).is_symlink() or pyproject.parent.is_symlink()
        data = None if linked else read_or_none(pyproject)
        if data is None:
            raise ToolError(
                Problem(
                    "is a symlink, or lies in a folder that is one; the Python API check reads no file through one",
                    where=where,
                    remedy="replace it with the regular file or folder from git, or delete it, then run again",
                )
            )
        try:
            project = tomllib.loads(data.decode("utf-8")).get("project")
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ToolError(Problem(f"is not TOML: {exc}", where=where)) from None
        name = project.get("name") if isinstance(project, dict) else None
        if not isinstance(name, str) or not name:
            raise ToolError(Problem("has no [project].name", where=where, remedy="name the distribution"))
        found.append(Distribution(canonicalize_name(name), pyproject.parent.relative_to(root).as_posix()))
    if not found:
        raise ToolError(Problem(f"no {PACKAGES_DIR}/*/pyproject.toml under {root}", remedy="run from the repository"))
    return found
