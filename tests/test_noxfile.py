"""The noxfile keeps codegen's exit statuses: `nox -s generated-files` says 2 when the check could not run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("nox") is None, reason="nox is not on PATH (install requirements/nox.txt)")
def test_generated_files_exits_2_when_the_check_cannot_run() -> None:
    env = {**os.environ, "E2B_RUNTIME_REF": "not-a-commit"}
    done = subprocess.run(
        ["nox", "-s", "generated-files", "-R"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2, done.stderr
    assert "E2B_RUNTIME_REF" in done.stdout + done.stderr  # nox passes the tool's output on


@pytest.mark.skipif(os.environ.get("NOX_CURRENT_SESSION") != "tests", reason="run by `nox -s tests` only")
def test_nox_s_tests_caches_bytecode_in_its_own_folder_never_in_the_tree() -> None:
    import importlib.util
    import sys

    assert sys.pycache_prefix is not None and not sys.flags.dont_write_bytecode
    assert Path(sys.pycache_prefix) == Path(sys.prefix) / "pycache"  # in the session's virtualenv
    cached = Path(importlib.util.cache_from_source(str(ROOT / "codegen" / "cli.py")))
    assert cached.is_relative_to(sys.pycache_prefix), cached
