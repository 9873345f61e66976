"""release.tag: a `<package>-v<version>` tag must name a package and its version at that commit."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from release.errors import ReleaseError
from release.packages import load_packages
from release.tag import package_for_tag
from tests.release.conftest import Result

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["e2b", "e2b-cli", "e2b-local-api"])
def test_the_current_version_tags(name: str) -> None:
    packages = load_packages(ROOT)
    version = next(p.version for p in packages if p.name == name)
    assert package_for_tag(packages, f"{name}-v{version}").name == name


@pytest.mark.parametrize(
    ("tag", "message"),
    [
        ("e2b-v9.9.9", "tag 'e2b-v9.9.9' says 9.9.9, but packages/python-sdk/pyproject.toml at this commit says"),
        ("e2b-cli-v2.0", "version '2.0' is not MAJOR.MINOR.PATCH"),
        ("e2b-sdk-v2.0.0", "names no package in packages/"),
        ("v2.0.0", "is not <package>-v<version>"),
        ("e2b-2.0.0", "is not <package>-v<version>"),
    ],
)
def test_a_wrong_tag_is_refused(tag: str, message: str) -> None:
    with pytest.raises(ReleaseError, match=message.replace("(", "\\(")) as caught:
        package_for_tag(load_packages(ROOT), tag)
    assert caught.value.problems[0].remedy


def test_release_tag_refuses_before_building(tmp_path: Path, run: Callable[..., Result]) -> None:
    out = tmp_path / "dist"
    result = run(ROOT, "release-tag", "e2b-v9.9.9", "--out", str(out))
    assert result.code == 2 and "says 9.9.9" in result.err
    assert not out.exists()


def test_release_tag_wants_an_empty_out_folder(tmp_path: Path, run: Callable[..., Result]) -> None:
    version = next(p.version for p in load_packages(ROOT) if p.name == "e2b")
    (tmp_path / "old.whl").write_text("x")
    result = run(ROOT, "release-tag", f"e2b-v{version}", "--out", str(tmp_path))
    assert result.code == 2 and "is not empty" in result.err
