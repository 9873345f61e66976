"""release.fragments: towncrier's `<id>.<type>.md`, checked; every bad fragment reported at once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from release.errors import ReleaseError
from release.fragments import highest_level, parse_name, read_fragments
from toolkit.changelog import BUMP_TYPES, TYPE_BY_NAME, TYPES

PKG = "packages/demo"


def folder(root: Path) -> Path:
    path = root / PKG / "changelog.d"
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_reads_every_type_and_skips_the_readme(tmp_path: Path) -> None:
    d = folder(tmp_path)
    (d / "README.md").write_text("how to\n")
    for n, kind in enumerate(TYPES, 1):
        (d / f"{n}.{kind.name}.md").write_text(f"{kind.title} here.\n")
    (d / "+no-number.fix.md").write_text("Quiet fix.\n")
    found = read_fragments(tmp_path, PKG)
    assert [(f.id, f.type.name) for f in found] == [
        ("+no-number", "fix"),
        ("1", "breaking"),
        ("2", "feature"),
        ("3", "fix"),
        ("4", "doc"),
        ("5", "misc"),
    ]
    assert found[1].path == f"{PKG}/changelog.d/1.breaking.md" and found[1].text == "Breaking changes here.\n"
    assert highest_level(found) == "major"
    assert highest_level([f for f in found if f.type.name in ("fix", "doc")]) == "patch"


def test_no_folder_means_no_fragments(tmp_path: Path) -> None:
    assert read_fragments(tmp_path, PKG) == []


def test_bad_fragments_are_all_reported(tmp_path: Path) -> None:
    d = folder(tmp_path)
    (d / "1.bugfix.md").write_text("Unknown type.\n")
    (d / "2.fix.md").write_text("  \n\n")
    (d / "notes.txt").write_text("not a fragment\n")
    (d / "3.fix.md").write_bytes(b"\xff\xfe")
    outside = tmp_path / "secret"
    outside.write_text("x\n")
    os.symlink(outside, d / "4.fix.md")
    with pytest.raises(ReleaseError) as caught:
        read_fragments(tmp_path, PKG)
    rendered = {p.where: p.message for p in caught.value.problems}
    assert rendered == {
        f"{PKG}/changelog.d/1.bugfix.md": "unknown fragment type 'bugfix'",
        f"{PKG}/changelog.d/2.fix.md": "is empty",
        f"{PKG}/changelog.d/3.fix.md": "is not UTF-8 text",
        f"{PKG}/changelog.d/4.fix.md": "is not a regular file",
        f"{PKG}/changelog.d/notes.txt": "is not named <id>.<type>.md",
    }
    assert all(
        "breaking, feature, fix, doc, misc" in (p.remedy or "") for p in caught.value.problems if "type" in p.message
    )


@pytest.mark.parametrize(
    ("name", "parsed"),
    [("12.feature.md", ("12", "feature")), ("+x.misc.md", ("+x", "misc")), ("12.feature.1.md", None), ("a.b.c", None)],
)
def test_parse_name(name: str, parsed: tuple[str, str] | None) -> None:
    result = parse_name(name)
    assert (None if result is None else (result[0], result[1].name)) == parsed


def test_bump_writes_fragments_of_the_level_it_reports() -> None:
    """codegen.commands.bump types its report by semver level; each type must give that level back."""
    assert {level: TYPE_BY_NAME[kind].level for level, kind in BUMP_TYPES.items()} == {
        "major": "major",
        "minor": "minor",
        "patch": "patch",
        "none": "patch",
    }
