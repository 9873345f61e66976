"""Semver levels and changelog fragment types: the table bump writes by and the release reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["major", "minor", "patch"]
LEVEL_RANK: dict[Level, int] = {"patch": 0, "minor": 1, "major": 2}


@dataclass(frozen=True)
class FragmentType:
    name: str  # the file name part: 123.<name>.md
    title: str  # the changelog heading
    level: Level


# towncrier reads its own copy of this table from each package's `[tool.towncrier]`: the release
# checks that they list the same types and titles, in this order (release/packages.py).
TYPES: tuple[FragmentType, ...] = (
    FragmentType("breaking", "Breaking changes", "major"),
    FragmentType("feature", "Features", "minor"),
    FragmentType("fix", "Fixes", "patch"),
    FragmentType("doc", "Documentation", "patch"),
    FragmentType("misc", "Other changes", "patch"),
)
TYPE_BY_NAME = {t.name: t for t in TYPES}
# The fragment `codegen bump` writes, by the level of its API change report: the first type of that semver
# level, and `misc` for a change no user of the Python API can see (the pin still moved: a patch release).
BUMP_TYPES: dict[str, str] = {
    **{level: next(t.name for t in TYPES if t.level == level) for level in ("major", "minor", "patch")},
    "none": "misc",
}
FRAGMENT_DIR = "changelog.d"
# The name of a fragment of one of the types, as a pattern to embed (no groups); the id is a pull
# request number or, after '+', a name that is not shown.
FRAGMENT_NAME = rf"\+?[A-Za-z0-9][A-Za-z0-9_-]{{0,99}}\.(?:{'|'.join(t.name for t in TYPES)})\.md"
