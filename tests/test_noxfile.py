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
