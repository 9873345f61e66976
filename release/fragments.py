"""Changelog fragments: `packages/<package>/changelog.d/<id>.<type>.md`, towncrier's format.

Their types, and the semver level each gives a package's next release, are toolkit/changelog.py's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from release.errors import Problem, ReleaseError
from toolkit.changelog import FRAGMENT_DIR, LEVEL_RANK, TYPE_BY_NAME, TYPES, FragmentType, Level

# What towncrier itself skips in a fragment folder.
NOT_FRAGMENTS = frozenset({"readme.md", "readme", "readme.rst", ".gitkeep", ".gitignore", ".keep"})
# <id>.<type>.md; the id is a pull request number or, after '+', a name that is not shown.
_NAME = re.compile(r"(?P<id>\+?[A-Za-z0-9][A-Za-z0-9_-]{0,99})\.(?P<type>[A-Za-z]+)\.md")
HOW_TO_ADD = (
    "add `changelog.d/<PR number>.<type>.md` (or `+<name>.<type>.md` to show no number) in the package's folder, "
    "one or two sentences for its users; <type> is one of " + ", ".join(t.name for t in TYPES)
)


@dataclass(frozen=True)
class Fragment:
    path: str  # relative to the repository root
    id: str
    type: FragmentType
    text: str


def parse_name(name: str) -> tuple[str, FragmentType] | None:
    """(id, type) of a fragment file name, None when the name is not a fragment's at all."""
    match = _NAME.fullmatch(name)
    if not match:
        return None
    kind = TYPE_BY_NAME.get(match["type"])
    if kind is None:
        return None
    return match["id"], kind


def read_fragments(root: Path, package_path: str) -> list[Fragment]:
    """Every pending fragment of one package, checked; all bad ones are reported together."""
    folder = root / package_path / FRAGMENT_DIR
    if not folder.is_dir():
        return []
    found: list[Fragment] = []
    problems: list[Problem] = []
    for path in sorted(folder.iterdir()):
        rel = path.relative_to(root).as_posix()
        if path.name.lower() in NOT_FRAGMENTS:
            continue
        if path.is_symlink() or not path.is_file():
            problems.append(
                Problem("is not a regular file", where=rel, remedy="fragments are plain files: " + HOW_TO_ADD)
            )
            continue
        parsed = parse_name(path.name)
        if parsed is None:
            match = _NAME.fullmatch(path.name)
            why = f"unknown fragment type {match['type']!r}" if match else "is not named <id>.<type>.md"
            problems.append(Problem(why, where=rel, remedy=HOW_TO_ADD))
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            problems.append(Problem("is not UTF-8 text", where=rel, remedy="write the fragment as UTF-8 Markdown"))
            continue
        if not text.strip():
            problems.append(Problem("is empty", where=rel, remedy="say what changed for the package's users"))
            continue
        found.append(Fragment(rel, parsed[0], parsed[1], text))
    if problems:
        raise ReleaseError(*problems)
    return found


def highest_level(fragments: list[Fragment]) -> Level:
    return max((f.type.level for f in fragments), key=LEVEL_RANK.__getitem__)
