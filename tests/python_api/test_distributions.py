"""python_api.distributions: each package's name and folder, from its pyproject.toml, never through a symlink."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from python_api.distributions import Distribution, list_distributions
from release.packages import Package, load_packages
from toolkit.errors import EXIT_CANNOT_RUN, ToolError

ROOT = Path(__file__).resolve().parents[2]
IGNORED = shutil.ignore_patterns("__pycache__")


def write(root: Path, folder: str, pyproject: str) -> None:
    (root / "packages" / folder).mkdir(parents=True)
    (root / "packages" / folder / "pyproject.toml").write_text(pyproject)


def test_this_repository_s_packages_by_folder() -> None:
    found = list_distributions(ROOT)
    assert [d.path for d in found] == sorted(
        p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "packages").glob("*/pyproject.toml")
    )
    assert Distribution("e2b", "packages/python-sdk") in found


def test_names_are_canonical_and_nothing_else_is_asked_of_the_file(tmp_path: Path) -> None:
    write(tmp_path, "b", '[project]\nname = "My_Tool"\n')
    write(tmp_path, "a", '[project]\nname = "e2b.Extras"\nversion = "not checked here"\n')
    assert list_distributions(tmp_path) == [
        Distribution("e2b-extras", "packages/a"),
        Distribution("my-tool", "packages/b"),
    ]


@pytest.mark.parametrize("linked", ["folder", "pyproject.toml", "packages"])
def test_a_symlink_is_refused(tmp_path: Path, linked: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere, "sdk", '[project]\nname = "e2b"\n')
    root = tmp_path / "root"
    if linked == "packages":
        root.mkdir()
        os.symlink(elsewhere / "packages", root / "packages")
    elif linked == "folder":
        (root / "packages").mkdir(parents=True)
        os.symlink(elsewhere / "packages/sdk", root / "packages/sdk")
    else:
        (root / "packages/sdk").mkdir(parents=True)
        os.symlink(elsewhere / "packages/sdk/pyproject.toml", root / "packages/sdk/pyproject.toml")
    with pytest.raises(ToolError, match="is a symlink") as caught:
        list_distributions(root)
    assert caught.value.exit_code == EXIT_CANNOT_RUN
    assert caught.value.problems[0].where == "packages/sdk/pyproject.toml"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[project\n", "is not TOML"),
        ('[tool.x]\nname = "e2b"\n', "has no \\[project\\].name"),
        ("project = 1\n", "has no \\[project\\].name"),
        ('[project]\nname = ""\n', "has no \\[project\\].name"),
    ],
)
def test_a_pyproject_without_a_name_is_refused(tmp_path: Path, text: str, said: str) -> None:
    write(tmp_path, "sdk", text)
    with pytest.raises(ToolError, match=said) as caught:
        list_distributions(tmp_path)
    assert caught.value.exit_code == EXIT_CANNOT_RUN


def test_no_package_is_refused(tmp_path: Path) -> None:
    (tmp_path / "packages").mkdir()
    with pytest.raises(ToolError, match=r"no packages/\*/pyproject.toml under"):
        list_distributions(tmp_path)


def test_a_release_package_is_a_distribution(tmp_path: Path) -> None:
    """release.packages.Package builds on it, so release passes its packages to the Python API check."""
    shutil.copytree(
        ROOT / "packages/local-api", tmp_path / "packages/local-api", ignore=shutil.ignore_patterns("*.pyc")
    )
    (package,) = load_packages(tmp_path)
    assert isinstance(package, Package) and isinstance(package, Distribution)
    assert list_distributions(tmp_path) == [Distribution(package.name, package.path)]
