"""Read-only fixtures built once per test run, whatever the number of pytest-xdist workers.

A session fixture runs once per worker process; the expensive ones (the
rebuilt upstream, the regenerated project copy, the real-shape bump) are
folders that the tests only read or copy, so one worker builds each and the
others wait for it and reuse it. They meet in the run's base temporary folder
(with xdist, the folder that holds each worker's own), under a file lock.

A build that fails leaves no "done" mark: the next worker to ask builds again
from scratch, and fails the same way, so every worker reports the failure.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder shared by every worker of this run (without xdist: the base temp itself)."""
    base = tmp_path_factory.getbasetemp()
    # xdist gives worker gwN the base temp <the controller's base temp>/popen-gwN. The name is checked
    # too: a pytest that a test starts inherits PYTEST_XDIST_WORKER but has a base temp of its own.
    return base.parent if base.name == f"popen-{os.environ.get('PYTEST_XDIST_WORKER')}" else base


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (created if missing) between processes, for the block."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder `build(folder)` fills, built by the first worker that asks; the others get it as it is."""
    shared = run_dir(tmp_path_factory) / "once-per-run"
    shared.mkdir(exist_ok=True)
    folder, done = shared / name, shared / f"{name}.done"
    with locked(shared / f"{name}.lock"):
        if not done.exists():
            if folder.exists():  # an earlier build that failed half-way
                shutil.rmtree(folder)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


def copy_tree(source: Path, dest: Path) -> Path:
    """A copy of `source` at `dest` (links as links, modes and times kept): `shutil.copytree(symlinks=True)`.

    By `cp -a`, one process: the per-test copies of the project (700 files) took twice the time and CPU
    through copytree's calls per file, and the codegen and release tests make one each, hundreds a run.
    """
    if dest.exists():  # where copytree refuses, cp would copy into it
        raise FileExistsError(dest)
    subprocess.run(["cp", "-a", "--", str(source), str(dest)], check=True)
    return dest
