"""release.stage: the release applied to a scratch copy; the tree itself is never touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from release.errors import ReleaseError
from release.make_release import load_release_plan
from release.stage import stage_release, tracked_files
from tests.codegen.conftest import unchanged
from tests.release.conftest import CLI, SDK, add_fragment


def test_stage_renders_the_changelog_and_consumes_the_fragments(project: Path, tmp_path: Path) -> None:
    add_fragment(project, SDK, "10.breaking.md", "Pausing returns a result.\n")
    add_fragment(project, CLI, "11.fix.md", "A fix.\n")
    (project / CLI / "CHANGELOG.md").unlink()  # a package's first changelog is created
    scratch = tmp_path / "scratch"
    with unchanged(project):
        staged = stage_release(project, load_release_plan(project, []), scratch, "2026-12-01")
    assert sorted(staged.files) == [
        f"{CLI}/CHANGELOG.md",
        f"{CLI}/e2b_cli/__init__.py",
        f"{CLI}/pyproject.toml",
        f"{SDK}/CHANGELOG.md",
        f"{SDK}/e2b/__init__.py",
        f"{SDK}/pyproject.toml",
    ]
    assert staged.remove == [f"{CLI}/changelog.d/11.fix.md", f"{SDK}/changelog.d/10.breaking.md"]
    cli_log = staged.files[f"{CLI}/CHANGELOG.md"].decode()
    assert cli_log.startswith("# Changelog\n") and "## e2b-cli 3.0.0 (2026-12-01)" in cli_log
    assert "Requires `e2b>=3.0.0,<4`" in cli_log and "- A fix. (#11)" in cli_log
    # The copy holds exactly what will be built: new files in, every fragment out.
    assert not list(scratch.glob("packages/*/changelog.d/*.*.md"))
    for rel, data in staged.files.items():
        assert (scratch / rel).read_bytes() == data


def test_stage_needs_a_git_checkout(tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="is not a git checkout"):
        tracked_files(tmp_path, "packages")
