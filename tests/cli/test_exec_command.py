"""`e2b_cli.exec_command`: the command line sent, the exit status returned, what counts as piped stdin."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest
from e2b_cli.exec_command import command_line, exit_status


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (("ls | wc -l",), "ls | wc -l"),  # one argument: a shell line, as written
        (("echo", "a b", "$HOME"), "echo 'a b' '$HOME'"),  # several: each quoted, nothing expanded
        (("printf", "%s\\n", "it's"), "printf '%s\\n' 'it'\"'\"'s'"),
        (("true", ""), "true ''"),
    ],
)
def test_command_line(argv: tuple[str, ...], line: str) -> None:
    assert command_line(argv) == line


@pytest.mark.parametrize(
    ("code", "error", "status"),
    [
        (0, None, 0),
        (3, "exit status 3", 3),
        (255, None, 255),
        (-1, "signal: killed", 137),  # as a shell reports a SIGKILLed command
        (-1, "signal: terminated", 143),
        (-1, "signal: aborted (core dumped)", 134),  # os.abort() with `ulimit -c unlimited`
        (-1, "signal: segmentation fault (core dumped)", 139),
        (-1, "signal: signal 40", 168),  # a real-time signal: Go's table has no name for it
        (-1, "signal: signal 40 (core dumped)", 168),
        (-1, "signal: user defined signal 1", 138),  # Linux's number, whatever system runs the CLI
        (-1, "signal: no such thing", 255),
        (-1, "signal: signal 300", 255),  # 128+N would not be a status
        (-1, "exit status 3", 255),
        (-1, None, 255),
        (300, None, 255),
    ],
)
def test_exit_status(code: int, error: str | None, status: int) -> None:
    assert exit_status(code, error) == status


PROBE = "from e2b_cli.exec_command import stdin_is_piped; print(stdin_is_piped())"


def _probe(stdin: int | IO[Any]) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE], stdin=stdin, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_pipe_and_a_file_are_piped_input_dev_null_is_not(tmp_path: Path) -> None:
    assert _probe(subprocess.PIPE) == "True"
    data = tmp_path / "in.txt"
    data.write_text("x")
    with data.open("rb") as file:
        assert _probe(file) == "True"
    assert _probe(subprocess.DEVNULL) == "False"  # a character device, like a terminal
