"""`e2b_cli.stdio`: a closed or failing stdout or stderr, as the console script meets them, in a subprocess.

The streams are closed by a shell's `>&-` and `2>&-`, and made to fail by /dev/full (ENOSPC), as users do.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from e2b_cli import __version__
from e2b_cli.errors import ExitStatus

NEEDS_DEV_FULL = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")


def e2b_redirected(redirect: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m e2b_cli ARGS...` run by sh with REDIRECT (`>&-`, `2>&-`, `>/dev/full`); what it wrote elsewhere."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("E2B_")}
    return subprocess.run(
        ["sh", "-c", f'exec "$@" {redirect}', "sh", sys.executable, "-m", "e2b_cli", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**env, "E2B_API_KEY": "k", "NO_COLOR": "1"},
        timeout=60,
    )


def test_a_closed_stderr_does_not_fail_a_command_that_writes_to_stdout() -> None:
    done = e2b_redirected("2>&-", "--version")
    assert (done.returncode, done.stdout) == (ExitStatus.OK, f"e2b, version {__version__}\n")


def test_a_closed_stdout_is_one_line_on_stderr_and_status_1() -> None:
    done = e2b_redirected(">&-", "--version")
    assert (done.returncode, done.stderr) == (
        ExitStatus.FAILED,
        "Error: could not write to stdout: Bad file descriptor\n",
    )


def test_closed_stdout_and_stderr_leave_the_status_to_say_it() -> None:
    done = e2b_redirected(">&- 2>&-", "--help")
    assert (done.returncode, done.stdout, done.stderr) == (ExitStatus.FAILED, "", "")


def test_a_usage_error_with_stderr_closed_is_still_status_2() -> None:
    done = e2b_redirected("2>&-", "sandbox", "nosuchcommand")
    assert (done.returncode, done.stdout) == (ExitStatus.USAGE, "")


@NEEDS_DEV_FULL
def test_a_full_stdout_is_an_error_said_plainly_not_an_unexpected_one() -> None:
    done = e2b_redirected(">/dev/full", "--help")
    assert (done.returncode, done.stderr) == (
        ExitStatus.FAILED,
        "Error: could not write to stdout: No space left on device\n",
    )


def test_a_file_opened_after_a_closed_stdout_does_not_get_the_output() -> None:
    # Descriptor 1 closed: the first file opened would be 1, and print() would write into it.
    probe = (
        "import os, sys\n"
        "from e2b_cli.stdio import guard_stdio\n"
        "guard_stdio()\n"
        "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)\n"
        "try:\n"
        "    print('leak'); sys.stdout.flush()\n"
        "except OSError as e:\n"
        "    sys.stderr.write(f'{type(e).__name__} {e.errno} {fd}')\n"
        "sys.stderr.flush()\n"
        "os._exit(0)  # as the launcher ends: no flush at exit of what could not be written\n"
    )
    target = f"/dev/shm/e2b-stdio-{os.getpid()}"
    try:
        done = subprocess.run(
            ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-c", probe, target],
            capture_output=True,
            text=True,
            timeout=60,
        )
        with open(target) as written:
            assert written.read() == ""
    finally:
        os.unlink(target)
    name, errno, fd = done.stderr.split()
    assert (name, int(errno), int(fd) > 2) == ("OutputError", 9, True)
