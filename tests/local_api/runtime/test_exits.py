"""End events in envd's words: Go's `ProcessState` strings for exits and signals."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest
from e2b_local_api.runtime.exits import Exit, from_wait_status


def wait_status(command: str) -> int:
    child = subprocess.Popen(["/bin/sh", "-c", command])
    _, status = os.waitpid(child.pid, 0)
    child.returncode = 0  # reaped here
    return status


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("exit 0", Exit(0, True, "exit status 0", None)),
        ("exit 3", Exit(3, True, "exit status 3", "exit status 3")),
        ("kill -KILL $$", Exit(-1, False, "signal: killed", "signal: killed")),
        ("kill -TERM $$", Exit(-1, False, "signal: terminated", "signal: terminated")),
        ("kill -INT $$", Exit(-1, False, "signal: interrupt", "signal: interrupt")),
    ],
)
def test_real_wait_statuses(command: str, expected: Exit) -> None:
    assert from_wait_status(wait_status(command)) == expected


def test_core_dump_and_unknown_signal_numbers() -> None:
    assert from_wait_status(signal.SIGSEGV | 0x80).status == "signal: segmentation fault (core dumped)"
    assert from_wait_status(40).status == "signal: signal 40"
