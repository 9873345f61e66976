"""Every benchmark session runs on a fresh clone, so that none can rot unseen.

Each `nox -s bench-*` runs with `-- --smoke` (each benchmark's one round of its fewest runs: the
run is tested, its figures mean nothing) in one copy of this tree: its files as git lists them,
in a new repository, without .nox, so that each session builds its environment as on a new
machine; the real-shape spec lies beside it, where tests/fixtures.py looks for it.
`nox -s bench-smoke` runs these; `nox -s tests` leaves them out.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.command_blocks import ROOT, environment, needs_nox
from tests.fixtures import REAL_SPEC, needs_real_spec
from tests.once_per_run import build_once

# `nox -s bench-smoke` runs these, CI beside the suite: `nox -s tests` leaves them out (noxfile.py).
pytestmark = pytest.mark.bench_smoke

# Every bench-* session that noxfile.py names, but the one that runs these.
SESSIONS = [
    name
    for name in re.findall(r'^@nox\.session\(name="(bench-[\w-]+)"', (ROOT / "noxfile.py").read_text(), flags=re.M)
    if name != "bench-smoke"
]
# A line each prints only when it ran to its end.
LAST_WORDS = {
    "bench-codegen": "full / codegen:",
    "bench-bump": "nox bump / nox codegen:",
    "bench-transport": "from e2b import Sandbox:",
    "bench-cli": "e2b sandbox list / import httpx:",
    "bench-dataplane": "from e2b import Sandbox, this / released:",
}
GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _git(cwd: Path, *args: str) -> None:
    person = ["-c", "user.name=tests", "-c", "user.email=tests@example.invalid"]
    subprocess.run(["git", *person, *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True)


def _clone(folder: Path) -> None:
    """This tree as git sees it (tracked files as they are now, new files not ignored), committed anew."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, env=GIT_ENV, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    repo = folder / "repo"
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():  # a tracked file deleted in the tree is not copied
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "a fresh clone")
    if REAL_SPEC.is_file():
        (folder / "shared" / "fixtures").mkdir(parents=True)
        shutil.copy2(REAL_SPEC, folder / "shared" / "fixtures" / REAL_SPEC.name)


@pytest.fixture(scope="session")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_once(tmp_path_factory, "bench-clone", _clone) / "repo"


@pytest.mark.slow
@needs_nox
@pytest.mark.parametrize(
    "session", [pytest.param(s, marks=needs_real_spec) if s == "bench-bump" else s for s in sorted(SESSIONS)]
)
def test_the_benchmark_session_runs_on_a_fresh_clone(session: str, clone: Path) -> None:
    assert session in LAST_WORDS, f"noxfile.py's {session} needs its line in LAST_WORDS"
    env = {k: v for k, v in environment().items() if k not in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
    command = ["python3", "-m", "nox", "-s", session, "--", "--smoke"]
    done = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True, timeout=900)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert LAST_WORDS[session] in done.stdout, output[-3000:]
