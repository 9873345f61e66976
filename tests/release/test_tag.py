"""release.tag: a `<package>-v<version>` tag must name a package and its version at a commit main contains.

The main-only rule is tried in real repositories: a copy of the project with a bare `origin`
it pushed main to, as release.yml's checkout (fetch-depth 0) has it. A refused tag builds
nothing: `build_all` is replaced by one that fails the test if it is called.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from release import tag as release_tag
from release.errors import ReleaseError
from release.packages import load_packages
from release.tag import package_for_tag
from release.wheels import BUILD_LOCK, Built
from tests.codegen.conftest import commit_all, git_repo
from tests.release.conftest import SDK, Result

ROOT = Path(__file__).resolve().parents[2]
SANDBOX_SYNC = f"{SDK}/e2b/sandbox_sync/main.py"


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


def git(root: Path, *args: str) -> str:
    return str(git_repo(root).git.execute(["git", *args]))


@pytest.fixture
def published(project: Path, tmp_path: Path) -> Path:
    """The project with a bare `origin` that has its main: `origin/main` is the project's HEAD."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(project), str(origin)], check=True, capture_output=True)
    git(project, "remote", "add", "origin", str(origin))
    git(project, "fetch", "--quiet", "origin")
    return project


def e2b_tag(root: Path) -> str:
    return f"e2b-v{next(p.version for p in load_packages(root) if p.name == 'e2b')}"


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict[str, Any]]:
    """Each build_all call (instead of building: a wheel and an sdist that are one byte each)."""
    calls: list[dict[str, Any]] = []

    def fake_build_all(root: Path, packages: list[Any], out: Path, say: Any, *, build_lock: Path) -> dict[str, Built]:
        calls.append({"root": root, "build_lock": build_lock})
        out.mkdir(parents=True)
        built = {}
        for package in packages:
            wheel, sdist = out / f"{package.name}.whl", out / f"{package.name}.tar.gz"
            wheel.write_bytes(b"w")
            sdist.write_bytes(b"s")
            built[package.name] = Built(package, wheel, sdist)
        return built

    monkeypatch.setattr(release_tag, "build_all", fake_build_all)
    monkeypatch.setattr(release_tag, "smoke_test", lambda *args: None)
    return calls


def test_a_side_branch_commit_tagged_with_its_version_is_refused(
    published: Path, run: Callable[..., Result], tmp_path: Path, builds: list[dict[str, Any]]
) -> None:
    """An unreviewed commit, version unchanged, tagged and checked out as release.yml would: nothing built."""
    git(published, "checkout", "--quiet", "-b", "side")
    (published / SDK / "e2b" / "_payload.py").write_text("import os\nos.system('id')\n")
    commit_all(published, "not reviewed")
    tag = e2b_tag(published)
    git(published, "tag", tag)
    git(published, "checkout", "--quiet", "--detach", tag)
    head = git(published, "rev-parse", "HEAD")
    out = tmp_path / "dist"
    result = run(published, "release-tag", tag, "--out", str(out))
    assert result.code == 2
    assert result.err.splitlines() == [
        f"error: tag {tag} is on commit {head[:12]}, which origin/main does not contain: only main is published "
        "(tag the merged release commit on main); nothing built"
    ]
    assert builds == [] and not out.exists()


def test_a_commit_of_main_is_checked_then_built_with_the_build_lock(
    published: Path, run: Callable[..., Result], tmp_path: Path, builds: list[dict[str, Any]]
) -> None:
    tag = e2b_tag(published)
    git(published, "tag", tag)
    out = tmp_path / "dist"
    result = run(published, "release-tag", tag, "--out", str(out))
    assert result.code == 0, result.out + result.err
    head = git(published, "rev-parse", "HEAD")
    assert f"release: {tag}: commit {head[:12]}, which origin/main contains" in result.err
    assert "release: generated files: clean" in result.err
    assert builds == [{"root": published, "build_lock": published / BUILD_LOCK}]
    assert sorted(p.name for p in out.iterdir()) == ["e2b.tar.gz", "e2b.whl"]


def test_a_commit_of_main_whose_generated_files_drifted_is_refused(
    published: Path, run: Callable[..., Result], tmp_path: Path, builds: list[dict[str, Any]]
) -> None:
    """Main itself, with a generated file edited by hand: the generated-files check refuses, nothing built."""
    path = published / SANDBOX_SYNC
    path.write_text(path.read_text() + "import os; os.system('id')\n")
    commit_all(published, "a hand edit that reached main")
    git(published, "push", "--quiet", "origin", "HEAD:main")
    git(published, "fetch", "--quiet", "origin")
    out = tmp_path / "dist"
    result = run(published, "release-tag", e2b_tag(published), "--out", str(out))
    assert result.code == 2
    assert "error: the generated files do not match the pin" in result.err and SANDBOX_SYNC in result.err
    assert builds == [] and not out.exists()


def test_a_tag_on_another_commit_than_the_checkout_is_refused(
    published: Path, run: Callable[..., Result], tmp_path: Path, builds: list[dict[str, Any]]
) -> None:
    tag = e2b_tag(published)
    git(published, "tag", tag)
    (published / "README.md").write_text("changed\n")
    commit_all(published, "later")
    result = run(published, "release-tag", tag, "--out", str(tmp_path / "dist"))
    assert result.code == 2 and "but " in result.err and "is checked out: check out the tag" in result.err
    assert builds == []


def test_without_origin_main_nothing_says_the_commit_is_main_s(
    project: Path, run: Callable[..., Result], tmp_path: Path, builds: list[dict[str, Any]]
) -> None:
    result = run(project, "release-tag", e2b_tag(project), "--out", str(tmp_path / "dist"))
    assert result.code == 2
    assert result.err.splitlines() == [
        "error: origin/main is not in this clone, so nothing says the commit is main's: fetch it; nothing built"
    ]
    assert builds == []


def test_release_tag_wants_an_empty_out_folder(
    published: Path, tmp_path: Path, run: Callable[..., Result], builds: list[dict[str, Any]]
) -> None:
    (tmp_path / "old.whl").write_text("x")
    result = run(published, "release-tag", e2b_tag(published), "--out", str(tmp_path))
    assert result.code == 2 and "is not empty" in result.err
    assert builds == []
