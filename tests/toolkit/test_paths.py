"""toolkit.paths: the folders a release's write may leave temporary siblings in, never through a link."""

from __future__ import annotations

import os
from pathlib import Path

from toolkit.paths import is_release_target, release_folders


def test_release_folders_are_each_package_and_its_folders_never_a_link(tmp_path: Path) -> None:
    (tmp_path / "packages/cli/changelog.d").mkdir(parents=True)
    (tmp_path / "packages/cli/e2b_cli").mkdir()
    (tmp_path / "packages/cli/pyproject.toml").write_text("")
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, tmp_path / "packages/cli/linked")
    os.symlink(outside, tmp_path / "packages/elsewhere")
    assert release_folders(tmp_path) == ["packages/cli", "packages/cli/changelog.d", "packages/cli/e2b_cli"]
    assert release_folders(tmp_path / "outside") == []


def test_a_release_writes_only_package_files_it_owns() -> None:
    assert is_release_target("packages/local-api/CHANGELOG.md")
    assert not is_release_target("packages/local-api/README.md")
    assert not is_release_target("packages/local-api/changelog.d/+x.chore.md")
