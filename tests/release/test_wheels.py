"""release.wheels: smoke tests, no compiled code in a pure wheel, and hermetic builds (real `uv build`s of e2b-cli).

The release as a whole builds all three packages in test_make_release; here one package is
built, with the hashed build lock, a lock whose hash is wrong, offline, and with an extension
module planted in it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from release.errors import ReleaseError
from release.packages import load_packages
from release.wheels import BUILD_LOCK, COMPILED_SUFFIXES, SMOKE_TESTS, build_all, build_command, compiled_files

ROOT = Path(__file__).resolve().parents[2]
# Every suffix refused, in the case CPython writes it and in capitals.
COMPILED = sorted({*COMPILED_SUFFIXES, ".abi3.so", ".cpython-311-x86_64-linux-gnu.so", ".cp311-win_amd64.pyd", ".SO"})


def test_every_package_has_a_smoke_test() -> None:
    assert set(SMOKE_TESTS) == {p.name for p in load_packages(ROOT)}


def test_the_smoke_tests_are_the_documented_ones() -> None:
    argv = {name: [t.argv for t in tests] for name, tests in SMOKE_TESTS.items()}
    assert argv == {
        "e2b": [("python", "-c", "import e2b; print(e2b.__version__)")],
        "e2b-cli": [("e2b", "--version")],
        "e2b-local-api": [("e2b-local-api", "--help")],
    }


def test_a_failed_step_shows_its_last_output_lines_escaped() -> None:
    """A tool's output is data: each of its lines is shown under the problem, controls escaped."""
    from release.errors import ReleaseError
    from release.wheels import _run

    script = "import sys; print('built'); print('x\\x1b[2J\\u202e', file=sys.stderr); sys.exit(3)"
    with pytest.raises(ReleaseError) as caught:
        _run([sys.executable, "-c", script], what="the smoke test")
    [problem] = caught.value.problems
    lines = problem.render().split("\n")
    assert lines[0].startswith("the smoke test failed (exit 3): ")
    assert lines[1:] == [
        "    built",
        "    x\\x1b[2J\\u202e",
        "  -> fix the package, then release again; nothing was written",
    ]


# --- no compiled code in a pure wheel ---------------------------------------------------------


def make_wheel(folder: Path, name: str, members: list[str]) -> Path:
    import zipfile

    path = folder / name
    with zipfile.ZipFile(path, "w") as archive:
        for member in members:
            archive.writestr(member, b"\0")
    return path


@pytest.mark.parametrize("suffix", COMPILED)
def test_a_pure_wheel_with_compiled_code_is_named(tmp_path: Path, suffix: str) -> None:
    wheel = make_wheel(tmp_path, "e2b-2.0.0-py3-none-any.whl", ["e2b/__init__.py", f"e2b/printable{suffix}"])
    assert compiled_files(wheel) == [f"e2b/printable{suffix}"]


def test_the_sdist_of_a_pure_wheel_is_looked_at_too(tmp_path: Path) -> None:
    import io
    import tarfile

    wheel = make_wheel(tmp_path, "e2b-2.0.0-py3-none-any.whl", ["e2b/__init__.py"])
    sdist = tmp_path / "e2b-2.0.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        for name in ("e2b-2.0.0/e2b/__init__.py", "e2b-2.0.0/e2b/fast.cpython-311-x86_64-linux-gnu.so"):
            archive.addfile(tarfile.TarInfo(name), io.BytesIO())
    assert compiled_files(wheel) == []
    assert compiled_files(wheel, sdist) == ["e2b-2.0.0/e2b/fast.cpython-311-x86_64-linux-gnu.so"]


def test_a_pure_wheel_without_compiled_code_and_a_platform_wheel_pass(tmp_path: Path) -> None:
    pure = make_wheel(tmp_path, "e2b-2.0.0-py3-none-any.whl", ["e2b/__init__.py", "e2b/so.txt", "e2b/libx.so.1"])
    assert compiled_files(pure) == []
    bytecode = make_wheel(tmp_path, "x-1.0-py3-none-any.whl", ["x/__pycache__/notes.txt"])
    assert compiled_files(bytecode) == ["x/__pycache__/notes.txt"]
    platform = make_wheel(tmp_path, "x-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", ["x/_speedups.abi3.so"])
    assert compiled_files(platform) == []


# --- hermetic builds: the backend from requirements/build.txt, hashed ------------------------------


def test_the_build_command_takes_the_backend_from_the_hashed_build_lock(tmp_path: Path) -> None:
    argv = build_command(tmp_path / "dist", ROOT / BUILD_LOCK)
    assert argv[:4] == [sys.executable, "-m", "uv", "build"]
    assert argv[argv.index("--build-constraints") + 1] == str(ROOT / BUILD_LOCK)
    assert "--require-hashes" in argv and argv[argv.index("--python") + 1] == sys.executable


def test_the_release_and_release_tag_build_with_it() -> None:
    """Both callers of build_all name the project's build lock (the release builds in a scratch copy of packages/)."""
    import inspect

    from release import make_release, tag

    for module in (make_release, tag):
        assert "build_lock=root / BUILD_LOCK)" in inspect.getsource(module)


def lock_pins(text: str) -> dict[str, list[str]]:
    """name==version -> its hashes, from a `uv pip compile --generate-hashes` lock."""
    pins: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line and not line[0].isspace() and not line.startswith("#"):
            current = line.split(" ")[0]
            pins[current] = []
        elif current and line.strip().startswith("--hash=sha256:"):
            pins[current].append(line.strip().removeprefix("--hash=").rstrip(" \\"))
    return pins


def test_the_build_lock_pins_every_package_s_backend_with_hashes() -> None:
    import tomllib

    from packaging.requirements import Requirement

    text = (ROOT / BUILD_LOCK).read_text()
    assert text.splitlines()[1] == (
        "#    uv pip compile --python-version 3.11 --generate-hashes requirements/build.in -o requirements/build.txt"
    )
    pins = lock_pins(text)
    assert pins and all(hashes for hashes in pins.values()), pins
    versions = {name.split("==")[0]: name.split("==")[1] for name in pins}
    for package in load_packages(ROOT):
        system = tomllib.loads((ROOT / package.pyproject).read_text())["build-system"]
        assert system["build-backend"] == "hatchling.build"
        for requirement in map(Requirement, system["requires"]):
            assert requirement.specifier.contains(versions[requirement.name]), (package.name, requirement)


@pytest.fixture
def cli_only(project: Path) -> list[Any]:
    return [p for p in load_packages(project) if p.name == "e2b-cli"]


def test_a_build_with_a_hash_the_lock_does_not_match_is_refused(
    project: Path, tmp_path: Path, cli_only: list[Any]
) -> None:
    """uv checks each build dependency against the lock's hashes: a wrong one stops the build."""
    pins = lock_pins((ROOT / BUILD_LOCK).read_text())
    hatchling = next(name for name in pins if name.startswith("hatchling=="))
    lock = tmp_path / "build.txt"
    text = (ROOT / BUILD_LOCK).read_text()
    for digest in pins[hatchling]:
        text = text.replace(digest, "sha256:" + "0" * 64)
    lock.write_text(text)
    with pytest.raises(ReleaseError) as caught:
        build_all(project, cli_only, tmp_path / "dist", lambda _: None, build_lock=lock)
    rendered = caught.value.problems[0].render()
    assert rendered.startswith("building e2b-cli failed") and "Hash mismatch for `hatchling==" in rendered


def test_a_build_works_offline_from_the_cache(
    project: Path, tmp_path: Path, cli_only: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once uv's cache holds the lock's files, a build needs no index: the second one runs with UV_OFFLINE."""
    build_all(project, cli_only, tmp_path / "online", lambda _: None, build_lock=project / BUILD_LOCK)
    monkeypatch.setenv("UV_OFFLINE", "1")
    built = build_all(project, cli_only, tmp_path / "offline", lambda _: None, build_lock=project / BUILD_LOCK)
    assert built["e2b-cli"].wheel.name.endswith("-py3-none-any.whl")


def test_an_extension_module_in_a_pure_wheel_stops_the_release(
    project: Path, tmp_path: Path, cli_only: list[Any]
) -> None:
    """A real build: hatchling ships a .so put in the package (check-wheel-contents says OK); this check does not."""
    (project / "packages/cli/e2b_cli/printable.abi3.so").write_bytes(b"\x7fELF")
    with pytest.raises(ReleaseError) as caught:
        build_all(project, cli_only, tmp_path / "dist", lambda _: None, build_lock=project / BUILD_LOCK)
    message = caught.value.problems[0].message
    assert "is pure Python, but it or its sdist holds compiled code" in message
    # In the wheel, and in the sdist that is published beside it.
    assert f"e2b_cli/printable.abi3.so e2b_cli-{cli_only[0].version}/e2b_cli/printable.abi3.so" in message
