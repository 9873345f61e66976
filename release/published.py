"""What a release may publish: each distribution's import packages and commands, and the built files held to them.

A wheel's members land in every user's site-packages and its scripts on their
PATH, so a `pyproject.toml` line (a `force-include`, a `[project.scripts]` entry)
could otherwise ship a `.pth` that runs in every Python process, or a `pip`.
How it works, and why: docs/maintainers/design.md, "release/published.py".
"""

from __future__ import annotations

import re
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import parse_wheel_filename

from release.errors import Problem, ReleaseError


@dataclass(frozen=True)
class Publishes:
    imports: frozenset[str]  # top-level import packages: the only folders beside the .dist-info
    scripts: frozenset[str]  # console scripts ([project.scripts]): the only commands it installs


# What each distribution is, as reviewed here (release/ is code-owned): a new package, a new
# top-level import package or a new command adds it to this table.
PUBLISHES: dict[str, Publishes] = {
    "e2b": Publishes(frozenset({"e2b"}), frozenset()),
    "e2b-cli": Publishes(frozenset({"e2b_cli"}), frozenset({"e2b"})),
    "e2b-local-api": Publishes(frozenset({"e2b_local_api"}), frozenset({"e2b-local-api"})),
}
SCRIPT_GROUP = "console_scripts"  # no gui_scripts, no plugin groups (pytest11...): nothing that loads unasked
_REMEDY = "remove it from the package's pyproject.toml (or, reviewed, add it to PUBLISHES in release/published.py)"


def unpublishable(name: str, wheel: Path, sdist: Path) -> list[str]:
    """Why the wheel and sdist of distribution `name` hold more than it publishes: one reason per file, or []."""
    allowed = PUBLISHES[name]
    dist_name, version, _, _ = parse_wheel_filename(wheel.name)
    dist_info = f"{dist_name.replace('-', '_')}-{version}.dist-info"
    found: list[str] = []
    with zipfile.ZipFile(wheel) as archive:
        members = archive.namelist()
        for member in members:
            top, inside, _ = member.partition("/")
            parts = member.rstrip("/").split("/")
            if member.lower().endswith(".pth"):
                found.append(f"{wheel.name}: {member}: a .pth file runs in every Python process where it is installed")
            elif "\\" in member or any(part in ("", ".", "..") for part in parts):
                # `e2b_cli/../sitecustomize.py` starts in the package and is installed beside it.
                found.append(f"{wheel.name}: {member}: a path with an empty, `.` or `..` part, or a backslash")
            elif not (inside and (top == dist_info or top in allowed.imports)):
                found.append(
                    f"{wheel.name}: {member}: outside its import packages ({', '.join(sorted(allowed.imports))}) "
                    f"and {dist_info}"
                )
        entry_points = f"{dist_info}/entry_points.txt"
        if entry_points in members:
            text = archive.read(entry_points).decode("utf-8", "replace")
            found += [f"{wheel.name}: {entry_points}: {why}" for why in _entry_point_problems(text, allowed)]
    with tarfile.open(sdist) as archive:
        found += [
            f"{sdist.name}: {member}: a .pth file, which a wheel built from it would install"
            for member in archive.getnames()
            if member.lower().endswith(".pth")
        ]
    return found


def _entry_point_problems(text: str, allowed: Publishes) -> list[str]:
    """The entry points beyond the distribution's own console scripts (each pointing into its import packages).

    Read strictly, line by line, as hatchling writes the file: installers parse it differently
    (configparser joins an indented line to the one above, importlib.metadata reads it as an entry
    of its own; `str.splitlines` ends lines where others do not), so a line any of them could read
    another way is refused rather than guessed at.
    """
    found: list[str] = []
    group = None
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        header, entry = _GROUP_LINE.fullmatch(line), _ENTRY_LINE.fullmatch(line)
        if header:
            group = header["group"]
            if group != SCRIPT_GROUP:
                found.append(f"[{group}]: only [{SCRIPT_GROUP}] is published")
        elif entry and group == SCRIPT_GROUP:
            script, module = entry["name"], entry["target"].partition(":")[0]
            if script not in allowed.scripts:
                known = ", ".join(sorted(allowed.scripts)) or "none"
                found.append(f"the command {script!r} is not one this package publishes ({known})")
            elif module.partition(".")[0] not in allowed.imports:
                found.append(f"the command {script!r} runs {module!r}, outside its import packages")
        elif not (entry or line == ""):
            found.append(f"line {number} is not `name = module:function` or `[group]`, so what it installs is unclear")
    return found


_GROUP_LINE = re.compile(r"\[(?P<group>[A-Za-z0-9_.-]+)\]", re.ASCII)
_ENTRY_LINE = re.compile(
    r"(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*) ?= ?(?P<target>[A-Za-z_][\w.]*(?::[A-Za-z_][\w.]*)?)", re.ASCII
)


def check_published(name: str, wheel: Path, sdist: Path) -> None:
    """Refuse files a distribution does not publish, naming each (ReleaseError, exit 2)."""
    if name not in PUBLISHES:
        raise ReleaseError(
            Problem(f"{name} has no entry in PUBLISHES", remedy="add its import packages and commands there")
        )
    found = unpublishable(name, wheel, sdist)
    if found:
        raise ReleaseError(
            Problem(
                f"{name} would publish what the package is not: {found[0]}"
                + (f" (and {len(found) - 1} more, below)" if len(found) > 1 else ""),
                detail=tuple(found[1:]),
                remedy=_REMEDY + "; nothing was written",
            )
        )
