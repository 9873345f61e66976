"""release.tree: one write, all or nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from release.errors import ReleaseError
from release.tree import write_all


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_writes_and_removes(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text("old\n")
    (tmp_path / "d").mkdir()
    (tmp_path / "d/1.fix.md").write_text("gone\n")
    write_all(tmp_path, {"a.toml": b"new\n", "d/CHANGELOG.md": b"log\n"}, ["d/1.fix.md"])
    assert snapshot(tmp_path) == {"a.toml": b"new\n", "d/CHANGELOG.md": b"log\n"}


def test_a_failure_puts_everything_back(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text("old\n")
    (tmp_path / "frag.md").write_text("keep\n")
    (tmp_path / "blocker").write_text("a file where a folder is needed\n")
    before = snapshot(tmp_path)
    with pytest.raises(OSError):
        write_all(tmp_path, {"a.toml": b"new\n", "new.md": b"x\n", "blocker/inside.md": b"y\n"}, ["frag.md"])
    assert snapshot(tmp_path) == before


def test_links_out_of_the_tree_are_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "pyproject.toml").write_text("theirs\n")
    os.symlink(outside, root / "pkg")
    os.symlink(outside / "pyproject.toml", root / "link.toml")
    for rel in ("pkg/pyproject.toml", "link.toml"):
        with pytest.raises(ReleaseError, match="symbolic link or leads out of the repository"):
            write_all(root, {rel: b"mine\n"}, [])
    assert (outside / "pyproject.toml").read_text() == "theirs\n"
