"""Build, check and smoke-test the distributions: `uv build`, `twine check`, `check-wheel-contents`, a fresh venv each.

Every package is built (not only the released ones), because a wheel is
smoke-tested beside the wheels of the in-repo packages it requires: its
`e2b>=3.0.0,<4` must be met by the e2b about to be released, not by PyPI's.
Third-party dependencies come pinned by `requirements/dev.txt` (a constraint).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

from release.errors import Problem, ReleaseError
from release.packages import Package
from release.versions import Version

Say = Callable[[str], None]
CONSTRAINTS = "requirements/dev.txt"


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


def build_all(source_root: Path, packages: list[Package], out: Path, say: Say) -> dict[str, Built]:
    """sdist and wheel of every package, checked by twine and check-wheel-contents."""
    built: dict[str, Built] = {}
    for package in packages:
        dest = out / package.name
        say(f"build {package.name} {package.version}")
        _run(
            [sys.executable, "-m", "uv", "build", "--quiet", "--sdist", "--wheel", "--out-dir", str(dest)],
            what=f"building {package.name}",
            cwd=source_root / package.path,
        )
        wheels, sdists = sorted(dest.glob("*.whl")), sorted(dest.glob("*.tar.gz"))
        if len(wheels) != 1 or len(sdists) != 1:
            raise ReleaseError(Problem(f"expected one wheel and one sdist for {package.name}, found {wheels + sdists}"))
        name, version, _, _ = parse_wheel_filename(wheels[0].name)
        if canonicalize_name(name) != package.name or str(version) != str(package.version):
            raise ReleaseError(Problem(f"{wheels[0].name} is not {package.name} {package.version}"))
        built[package.name] = Built(package, wheels[0], sdists[0])
    files = [str(p) for b in built.values() for p in (b.wheel, b.sdist)]
    say("twine check --strict")
    _run([sys.executable, "-m", "twine", "check", "--strict", *files], what="twine check")
    say("check-wheel-contents")
    _run(
        [sys.executable, "-m", "check_wheel_contents", *(str(b.wheel) for b in built.values())],
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
