"""`e2b_cli.terminal`: raw mode on a real pseudo-terminal (os.openpty), and its undoing."""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import termios
import threading
import time
from collections.abc import Iterator

import pytest
from e2b_cli.terminal import can_attach, raw_terminal, window_size


@pytest.fixture
def pty_pair() -> Iterator[tuple[int, int]]:
    main, other = os.openpty()
    try:
        yield main, other
    finally:
        os.close(main)
        os.close(other)


def _set_size(fd: int, rows: int, cols: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def test_raw_mode_is_on_in_the_block_and_restored_after_an_exception(pty_pair: tuple[int, int]) -> None:
    _, fd = pty_pair
    before = termios.tcgetattr(fd)
    with pytest.raises(RuntimeError, match="boom"), raw_terminal(fd, lambda: None):
        inside = termios.tcgetattr(fd)
        assert not inside[3] & termios.ECHO and not inside[3] & termios.ICANON and not inside[3] & termios.ISIG
        raise RuntimeError("boom")
    assert termios.tcgetattr(fd) == before


def test_a_resize_calls_back_and_the_handlers_are_put_back(pty_pair: tuple[int, int]) -> None:
    _, fd = pty_pair
    resized = threading.Event()
    previous = signal.getsignal(signal.SIGWINCH)
    with raw_terminal(fd, resized.set):
        os.kill(os.getpid(), signal.SIGWINCH)  # this is the main thread: the handler runs before the wait
        assert resized.wait(10)
    assert signal.getsignal(signal.SIGWINCH) == previous


def test_sigterm_restores_the_terminal_before_the_previous_handler_runs(pty_pair: tuple[int, int]) -> None:
    _, fd = pty_pair
    before = termios.tcgetattr(fd)
    seen: list[list[object]] = []

    def previous(_signum: int, _frame: object) -> None:
        seen.append(termios.tcgetattr(fd))

    old = signal.signal(signal.SIGTERM, previous)
    try:
        with raw_terminal(fd, lambda: None):
            os.kill(os.getpid(), signal.SIGTERM)
            deadline = time.monotonic() + 10  # the handler runs between two bytecodes of this thread
            while not seen and time.monotonic() < deadline:
                time.sleep(0.01)
    finally:
        signal.signal(signal.SIGTERM, old)
    assert seen == [before]


def test_window_size(pty_pair: tuple[int, int]) -> None:
    _, fd = pty_pair
    _set_size(fd, 30, 100)
    assert window_size(fd) == (30, 100)
    _set_size(fd, 0, 0)  # a terminal that does not say: the usual 24x80
    assert window_size(fd) == (24, 80)


def test_no_terminal_under_pytest_capture() -> None:
    assert can_attach() is False
