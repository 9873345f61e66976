"""Build, check and smoke-test the distributions: `uv build`, `twine check`, `check-wheel-contents`, a fresh venv each.

How it works, and why: docs/maintainers/design.md, "release/wheels.py".
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.machinery import BYTECODE_SUFFIXES, EXTENSION_SUFFIXES
from pathlib import Path, PurePosixPath

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

from release.errors import Problem, ReleaseError
from release.packages import Package
from release.published import check_published
from release.versions import Version
from toolkit.printable import Say

CONSTRAINTS = "requirements/dev.txt"
BUILD_LOCK = "requirements/build.txt"  # the build backend and its dependencies, hashed
# What .ci/no-compiled-code refuses in the tree, refused in a pure wheel: this interpreter's
# extension and bytecode suffixes, and every platform's (.so, .pyd, .dylib, .pyo), in any case.
COMPILED_SUFFIXES = tuple(
    sorted({s.lower() for s in (*EXTENSION_SUFFIXES, *BYTECODE_SUFFIXES)} | {".so", ".pyd", ".dylib", ".pyc", ".pyo"})
)


@dataclass(frozen=True)
class SmokeTest:
    argv: tuple[str, ...]  # run with the fresh venv's bin/ first on PATH
    shows_version: bool  # the output must contain the package's version


# What proves each wheel works once installed; a new package adds a line here.
SMOKE_TESTS: dict[str, tuple[SmokeTest, ...]] = {
    "e2b": (SmokeTest(("python", "-c", "import e2b; print(e2b.__version__)"), shows_version=True),),
    "e2b-cli": (SmokeTest(("e2b", "--version"), shows_version=True),),
    "e2b-local-api": (SmokeTest(("e2b-local-api", "--help"), shows_version=False),),
}


@dataclass(frozen=True)
class Built:
    package: Package
    wheel: Path
    sdist: Path


def _run(argv: Sequence[str], *, what: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        output = (done.stdout + done.stderr).strip().splitlines()
        raise ReleaseError(
            Problem(
                f"{what} failed (exit {done.returncode}): {' '.join(argv)}",
                detail=tuple(output[-30:]),
                remedy="fix the package, then release again; nothing was written",
            )
        )
    return done.stdout + done.stderr


def build_command(dest: Path, build_lock: Path) -> list[str]:
    """`uv build` of one package: its backend only as the hashed lock pins it, on this interpreter."""
    return [
        sys.executable, "-m", "uv", "build", "--quiet", "--sdist", "--wheel", "--out-dir", str(dest),
        "--python", sys.executable, "--build-constraints", str(build_lock), "--require-hashes",
    ]  # fmt: skip


def _compiled(names: list[str]) -> list[str]:
    return [n for n in names if n.lower().endswith(COMPILED_SUFFIXES) or "__pycache__" in PurePosixPath(n).parts]


def compiled_files(wheel: Path, sdist: Path | None = None) -> list[str]:
    """The compiled code in a pure-Python (`*-none-any`) wheel and its sdist; a platform wheel may hold extensions."""
    _, _, _, tags = parse_wheel_filename(wheel.name)
    if not all(tag.abi == "none" and tag.platform == "any" for tag in tags):
        return []
    with zipfile.ZipFile(wheel) as archive:
        found = _compiled(archive.namelist())
    if sdist is not None:  # published beside the wheel: a wheel built from it would ship the same file
        with tarfile.open(sdist) as archive:
            found += _compiled(archive.getnames())
    return found


def build_all(source_root: Path, packages: list[Package], out: Path, say: Say, *, build_lock: Path) -> dict[str, Built]:
    """sdist and wheel of every package (backend: `build_lock`), checked: compiled code, release.published, twine."""
    built: dict[str, Built] = {}
    if not build_lock.is_file():
        raise ReleaseError(Problem(f"{build_lock} is missing: the build backend would come unpinned from the index"))
    for package in packages:
        dest = out / package.name
        say(f"build {package.name} {package.version}")
        _run(build_command(dest, build_lock), what=f"building {package.name}", cwd=source_root / package.path)
        wheels, sdists = sorted(dest.glob("*.whl")), sorted(dest.glob("*.tar.gz"))
        if len(wheels) != 1 or len(sdists) != 1:
            raise ReleaseError(Problem(f"expected one wheel and one sdist for {package.name}, found {wheels + sdists}"))
        name, version, _, _ = parse_wheel_filename(wheels[0].name)
        if canonicalize_name(name) != package.name or str(version) != str(package.version):
            raise ReleaseError(Problem(f"{wheels[0].name} is not {package.name} {package.version}"))
        compiled = compiled_files(wheels[0], sdists[0])
        if compiled:
            raise ReleaseError(
                Problem(
                    f"{wheels[0].name} is pure Python, but it or its sdist holds compiled code, which would run "
                    f"instead of the reviewed source: {' '.join(compiled)}",
                    remedy="`git rm --cached` it (`bash .ci/no-compiled-code` names it); nothing was written",
                )
            )
        check_published(package.name, wheels[0], sdists[0])
        built[package.name] = Built(package, wheels[0], sdists[0])
    files = [str(p) for b in built.values() for p in (b.wheel, b.sdist)]
    say("twine check --strict")
    _run([sys.executable, "-m", "twine", "check", "--strict", *files], what="twine check")
    say("check-wheel-contents")
    _run(
        # W002 (duplicate files): the generated client's package markers (`e2b/api/client/api/<tag>/__init__.py`)
        # are byte-identical by design, one per SDK tag.
        [sys.executable, "-m", "check_wheel_contents", "--ignore", "W002", *(str(b.wheel) for b in built.values())],
        what="check-wheel-contents",
    )
    return built


def _in_repo_closure(name: str, built: dict[str, Built]) -> list[Path]:
    """The wheel of `name` and of every in-repo package it requires, transitively."""
    seen: list[str] = []
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.append(current)
        for text in built[current].package.requirements:
            dep = canonicalize_name(Requirement(text).name)
            if dep in built:
                todo.append(dep)
    return [built[n].wheel for n in seen]


def smoke_test(project_root: Path, built: dict[str, Built], names: Sequence[str], scratch: Path, say: Say) -> None:
    """Install each named package's wheel into a fresh venv and run its smoke tests there."""
    for name in names:
        tests = SMOKE_TESTS.get(name)
        if not tests:
            raise ReleaseError(
                Problem(f"{name} has no smoke test", remedy="add one to SMOKE_TESTS in release/wheels.py")
            )
        venv = scratch / f"venv-{name}"
        say(f"smoke test {name} in a fresh venv")
        _run([sys.executable, "-m", "uv", "venv", "--quiet", "--python", sys.executable, str(venv)], what="uv venv")
        python = venv / "bin" / "python"
        _run(
            [
                sys.executable, "-m", "uv", "pip", "install", "--quiet", "--python", str(python),
                "--constraint", str(project_root / CONSTRAINTS),
                *(str(w) for w in _in_repo_closure(name, built)),
            ],
            what=f"installing the {name} wheel",
        )  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        version: Version = built[name].package.version
        for test in tests:
            # Run outside the repository so that nothing is imported from the source tree.
            argv = (str(venv / "bin" / test.argv[0]), *test.argv[1:])
            out = _run(argv, what=f"smoke test of {name}", cwd=scratch, env=env)
            if test.shows_version and str(version) not in out:
                raise ReleaseError(
                    Problem(f"`{' '.join(test.argv)}` printed {out.strip()!r}, not the version {version}")
                )
