"""`python -m codegen` outside its environment: one line saying how to get it, exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_missing_dependencies_are_one_line_and_exit_2() -> None:
    # -S leaves site-packages out: the standard library only, as on a fresh machine.
    done = subprocess.run(
        [sys.executable, "-S", "-m", "codegen", "check"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "missing git" in lines[0] and "nox -s codegen" in lines[0] and "requirements/codegen.txt" in lines[0]
