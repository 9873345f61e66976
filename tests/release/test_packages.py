"""release.packages: the distributions, their version files, their in-repo bounds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from release.errors import ReleaseError
from release.packages import in_repo_bounds, load_packages, move_bound, write_version
from release.versions import Version
from tests.release.conftest import set_baseline

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """The three pyproject.toml files and version-bearing __init__.py files of this repository."""
    for rel in (
        "packages/python-sdk/pyproject.toml",
        "packages/python-sdk/e2b/__init__.py",
        "packages/cli/pyproject.toml",
        "packages/cli/e2b_cli/__init__.py",
        "packages/local-api/pyproject.toml",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tmp_path / rel)
    set_baseline(tmp_path)
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_this_repository() -> None:
    packages = {p.name: p for p in load_packages(ROOT)}
    assert set(packages) == {"e2b", "e2b-cli", "e2b-local-api"}
    sdk, cli = packages["e2b"], packages["e2b-cli"]
    assert sdk.version_files == ("packages/python-sdk/pyproject.toml", "packages/python-sdk/e2b/__init__.py")
    assert cli.version_files == ("packages/cli/pyproject.toml", "packages/cli/e2b_cli/__init__.py")
    assert packages["e2b-local-api"].version_files == ("packages/local-api/pyproject.toml",)
    bounds = in_repo_bounds(cli, set(packages))
    assert set(bounds) == {"e2b"}
    assert bounds["e2b"].admits(sdk.version)
    assert in_repo_bounds(sdk, set(packages)) == {}


def test_version_out_of_step_is_refused(tree: Path) -> None:
    edit(tree / "packages/cli/e2b_cli/__init__.py", '__version__ = "2.0.0"', '__version__ = "2.0.1"')
    with pytest.raises(ReleaseError, match=r"out of step with packages/cli/pyproject.toml's 2.0.0"):
        load_packages(tree)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('directory = "changelog.d"', 'directory = "news"', "must use directory 'changelog.d'"),
        ('directory = "misc"', 'directory = "chore"', "found \\['breaking', 'feature', 'fix', 'doc', 'chore'\\]"),
        ('name = "e2b-local-api"\ndirectory', 'name = "other"\ndirectory', "name must be 'e2b-local-api'"),
        ('name = "Other changes"', 'name = "Misc"', "must title the types .* \\(found .*'Misc'\\]\\)"),
        ("tool.towncrier", "tool.news", "has no \\[tool.towncrier\\] section"),
        ('version = "0.1.0"', 'version = "0.1"', "is not MAJOR.MINOR.PATCH"),
    ],
)
def test_towncrier_and_version_settings_are_checked(tree: Path, old: str, new: str, message: str) -> None:
    edit(tree / "packages/local-api/pyproject.toml", old, new)
    with pytest.raises(ReleaseError, match=message):
        load_packages(tree)


@pytest.mark.parametrize(
    ("bound", "message"),
    [
        ("e2b~=2.0", "cannot be moved by a release"),
        ("e2b>=2.0.0", "cannot be moved by a release"),
        ("e2b==2.0.0", "cannot be moved by a release"),
        ("e2b>=2.0.0,<3,!=2.0.1", "cannot be moved by a release"),
        ("e2b>=2,<3", "is not MAJOR.MINOR.PATCH"),
        ("e2b>=>2", "cannot be parsed"),
    ],
)
def test_a_bound_that_cannot_be_moved_is_refused(tree: Path, bound: str, message: str) -> None:
    edit(tree / "packages/cli/pyproject.toml", '"e2b>=2.0.0,<3"', f'"{bound}"')
    packages = load_packages(tree)
    cli = next(p for p in packages if p.name == "e2b-cli")
    with pytest.raises(ReleaseError, match=message):
        in_repo_bounds(cli, {p.name for p in packages})


def test_write_version_and_move_bound(tree: Path) -> None:
    packages = {p.name: p for p in load_packages(tree)}
    cli = packages["e2b-cli"]
    text = write_version(tree, cli.pyproject, Version(2, 0, 0), Version(3, 0, 0))
    assert 'version = "3.0.0"' in text and 'version = "2.0.0"' not in text
    bound = in_repo_bounds(cli, set(packages))["e2b"]
    assert bound.moved_to(Version(3, 0, 0)) == "e2b>=3.0.0,<4"
    assert bound.moved_to(Version(0, 4, 0)) == "e2b>=0.4.0,<0.5"
    moved = move_bound(text, bound, "e2b>=3.0.0,<4", cli.pyproject)
    assert '"e2b>=3.0.0,<4"' in moved and "e2b>=2.0.0,<3" not in moved
    init = write_version(tree, "packages/cli/e2b_cli/__init__.py", Version(2, 0, 0), Version(3, 0, 0))
    assert '__version__ = "3.0.0"' in init
    with pytest.raises(ReleaseError, match=r"expected one version line for 9\.9\.9"):
        write_version(tree, cli.pyproject, Version(9, 9, 9), Version(10, 0, 0))
