"""`tests.signal_dispositions`: a signal test passes however the suite was started (here: all three ignored)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.signal_dispositions import default_dispositions, dispositions

# The child says what it was handed, then waits for a line on stdin and says it lived to read it.
CHILD = (
    "import signal, sys\n"
    "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, int(signal.getsignal(signal.SIGTERM)),\n"
    "      int(signal.getsignal(signal.SIGHUP)))\n"
    "sys.stdout.flush()\n"
    "sys.stdin.readline()\n"
    "print('alive')\n"
)


@pytest.fixture
def started_as_a_background_job() -> Iterator[None]:
    """What `nohup nox -s tests &` in a script hands down: SIGINT and SIGHUP ignored, SIGTERM too (`trap '' TERM`)."""
    with dispositions(dict.fromkeys((signal.SIGINT, signal.SIGTERM, signal.SIGHUP), signal.SIG_IGN)):
        yield


def _child() -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


@pytest.mark.usefixtures("started_as_a_background_job")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_child_started_inside_gets_the_defaults_and_dies_of_the_signal(sig: signal.Signals) -> None:
    with default_dispositions():
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert signal.getsignal(signal.SIGTERM) == signal.getsignal(signal.SIGHUP) == signal.SIG_DFL
        proc = _child()
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # put back after the block
    assert proc.stdout is not None
    assert proc.stdout.readline() == f"True {int(signal.SIG_DFL)} {int(signal.SIG_DFL)}\n"
    proc.send_signal(sig)  # while it waits on stdin, which stays open until it is gone
    proc.wait(timeout=30)
    # An uncaught KeyboardInterrupt makes Python die of SIGINT, as a C program would.
    assert proc.returncode == -sig


@pytest.mark.usefixtures("started_as_a_background_job")
def test_without_them_the_child_ignores_sigint() -> None:
    """Why the tests set them: what a child inherits otherwise (the failure this module prevents)."""
    proc = _child()
    assert proc.stdout is not None
    assert proc.stdout.readline() == f"False {int(signal.SIG_IGN)} {int(signal.SIG_IGN)}\n"
    proc.send_signal(signal.SIGINT)  # discarded when sent: an ignored signal is never queued
    out, _ = proc.communicate("go\n", timeout=30)
    assert (proc.returncode, out) == (0, "alive\n")


@pytest.mark.usefixtures("started_as_a_background_job")
def test_in_process_sigint_raises_keyboard_interrupt_inside() -> None:
    with default_dispositions(), pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
    signal.raise_signal(signal.SIGINT)  # ignored again: nothing happens
