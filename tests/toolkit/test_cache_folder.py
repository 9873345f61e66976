"""The cache folder is this user's alone, or it is refused in one line naming the folder and the fix."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.codegen.conftest import Result, unchanged

OTHER_UID = 54_321


@pytest.fixture
def another_users() -> Callable[[Path], None]:
    """Make a path another user's, for real: `os.chown`, which needs root (CI's user)."""
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root; test_whoever_runs_it_is_the_owner_that_counts covers it")

    def give_away(path: Path) -> None:
        os.chown(path, OTHER_UID, -1, follow_symlinks=False)

    return give_away


def refusal(result: Result, path: Path) -> str:
    assert result.code == 2, result.text
    errors = [line for line in result.err.splitlines() if line.startswith("codegen: error: ")]
    assert len(errors) == 1 and errors[0].startswith(f"codegen: error: {path}: "), result.text
    assert "Traceback" not in result.text
    return result.err


@pytest.mark.parametrize("verb", [("generate",), ("check", "--no-cache")])
def test_a_cache_folder_others_can_write_is_refused(
    project: Path, run: Callable[..., Result], cache: Path, verb: tuple[str, ...]
) -> None:
    cache.mkdir()
    cache.chmod(0o777)
    with unchanged(project):
        said = refusal(run(project, *verb), cache)
    assert "is writable by others (mode 0777)" in said and f"-> `chmod go-w {cache}`" in said


def test_a_cache_folder_of_another_user_is_refused(
    project: Path, run: Callable[..., Result], cache: Path, another_users: Callable[[Path], None]
) -> None:
    cache.mkdir(mode=0o700)
    another_users(cache)
    with unchanged(project):
        said = refusal(run(project, "generate"), cache)
    assert "belongs to another user" in said and "point E2B_CODEGEN_CACHE at a folder of your own" in said


def test_whoever_runs_it_is_the_owner_that_counts(
    project: Path, run: Callable[..., Result], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any user can run this one: to the check, a folder of ours is another user's when we are someone else."""
    cache.mkdir(mode=0o700)
    monkeypatch.setattr(os, "geteuid", lambda: OTHER_UID)
    said = refusal(run(project, "generate"), cache)
    assert f"belongs to another user (uid {cache.stat().st_uid})" in said


@pytest.mark.parametrize("folder", ["generations", "validations", "scratch"])
def test_every_folder_in_it_is_checked_too(project: Path, run: Callable[..., Result], cache: Path, folder: str) -> None:
    assert run(project, "generate").code == 0
    (cache / folder).mkdir(exist_ok=True)
    (cache / folder).chmod(0o775)
    with unchanged(project):
        refusal(run(project, "generate"), cache / folder)


def test_an_entry_another_user_could_have_written_is_refused(
    project: Path, run: Callable[..., Result], cache: Path, another_users: Callable[[Path], None]
) -> None:
    assert run(project, "generate").code == 0
    (entry,) = (cache / "validations").glob("*.json")  # the validator's pass, which the next run would take
    another_users(entry)
    with unchanged(project):
        refusal(run(project, "generate"), entry)


def test_a_file_in_a_cached_repository_others_can_write_is_refused_before_git_runs(
    project: Path, run: Callable[..., Result], cache: Path
) -> None:
    assert run(project, "check").code == 0
    (repository,) = cache.glob("runtime-*.git")
    (repository / "HEAD").chmod(0o666)
    refusal(run(project, "check"), repository / "HEAD")


def test_a_symlink_in_the_cache_folder_is_refused(project: Path, run: Callable[..., Result], cache: Path) -> None:
    assert run(project, "generate").code == 0
    (cache / "validations").rename(cache / "elsewhere")
    (cache / "validations").symlink_to(cache / "elsewhere")
    said = refusal(run(project, "generate"), cache / "validations")
    assert "is a symlink" in said


@pytest.fixture
def no_umask() -> Iterator[None]:
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def test_what_codegen_makes_there_is_private_whatever_the_umask(
    project: Path, run: Callable[..., Result], cache: Path, no_umask: None
) -> None:
    """Folders 0700, files 0600 (git's objects 0400): the next run's check passes, whoever else is on the machine."""
    assert run(project, "check").code == 0
    assert run(project, "generate").code == 0
    made = [cache, *cache.rglob("*")]
    assert any(path.name.endswith(".git") for path in made) and any(path.suffix == ".json" for path in made)
    for path in made:
        assert not path.lstat().st_mode & (stat.S_IWGRP | stat.S_IWOTH), path
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert run(project, "check").code == 0
