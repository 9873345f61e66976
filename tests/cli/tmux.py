"""A real terminal for the CLI's tests: a tmux server of the test's own, 80x24, read from its screen.

Each wait polls the screen (or a file) until a condition holds, with a
generous deadline: never a fixed sleep. Skips when tmux is not installed
(`.ci/run` installs Debian's).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

TMUX = shutil.which("tmux")
NEEDS_TMUX = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)")
DEADLINE = 60.0  # seconds: the machine is shared and loaded; a pass takes a fraction of it
V = TypeVar("V")


class Tmux:
    """One session, `main`, running a shell line; `stty -a` is saved before and after it in `folder`."""

    def __init__(self, socket: str, folder: Path) -> None:
        self.socket = socket
        self.folder = folder

    def tmux(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, (args, done.stderr)
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "main")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "main", *keys)

    def type(self, text: str) -> None:
        """`text` typed as it is (-l: no key names), then Enter."""
        self.tmux("send-keys", "-t", "main", "-l", text)
        self.keys("Enter")

    def resize(self, cols: int, rows: int) -> None:
        self.tmux("resize-window", "-t", "main", "-x", str(cols), "-y", str(rows))

    def wait_for(self, what: str, check: Callable[[str], bool]) -> str:
        """The screen once `check` accepts it; fails, showing the screen, after `DEADLINE`."""
        return poll(self.screen, check, lambda screen: f"waited {DEADLINE:.0f} s for {what}; the screen:\n{screen}")

    def wait_for_line(self, line: str) -> str:
        return self.wait_for(repr(line), lambda screen: line in (row.rstrip() for row in screen.splitlines()))

    def wait_for_size(self, rows: int, cols: int) -> None:
        """Ask the shell in the terminal for its size until it says `rows` `cols`.

        A resize travels as a signal, then a request, while typed keys travel
        on their own: a question typed right after a resize may be answered
        before the resize lands. Each question is numbered, and its own answer is waited for.
        """
        deadline = time.monotonic() + DEADLINE
        for attempt in range(1, 1000):
            self.type(f'echo "size{attempt}: $(stty size)"')
            label = f"size{attempt}: "
            screen = self.wait_for(f"answer {attempt}", _contains(label))
            if f"{label}{rows} {cols}" in screen:
                return
            if time.monotonic() > deadline:
                break
        pytest.fail(f"the terminal never said {rows} {cols}; the screen:\n{self.screen()}")

    def wait_for_file(self, name: str) -> str:
        path = self.folder / name
        return poll(
            lambda: path.read_text() if path.exists() else "",
            lambda text: text.endswith("\n"),
            lambda _: f"waited {DEADLINE:.0f} s for {name}; the screen:\n{self.screen()}",
        )

    def command_pid(self, parent: int | None = None) -> int:
        """The pid of the command the pane's shell (or the process `parent`) runs: its one child."""
        shell = parent or int(self.tmux("display-message", "-p", "-t", "main", "#{pane_pid}").strip())
        children = poll(
            lambda: Path(f"/proc/{shell}/task/{shell}/children").read_text().split(),
            bool,
            lambda _: f"the process {shell} started no command",
        )
        return int(children[0])

    def stty(self) -> list[str]:
        """`stty -a`'s words for the pane's terminal now, read from outside (whoever holds it)."""
        tty = self.tmux("display-message", "-p", "-t", "main", "#{pane_tty}").strip()
        done = subprocess.run(["stty", "-a", "-F", tty], capture_output=True, text=True, timeout=30, check=True)
        return done.stdout.split()

    def wait_for_mode(self, what: str, check: Callable[[list[str]], bool]) -> list[str]:
        """The terminal's `stty -a` words once `check` accepts them; fails after `DEADLINE`."""
        return poll(
            self.stty, check, lambda words: f"waited {DEADLINE:.0f} s for {what}; stty -a says: {' '.join(words)}"
        )


def raw(words: list[str]) -> bool:
    """Whether `stty -a` words say raw mode: no line editing, no echo, no signals from keys."""
    return {"-icanon", "-echo", "-isig"} <= set(words)


def wait_for_state(pid: int, state: str) -> None:
    """Until /proc says the process `pid` is in `state` (`T`: stopped); fails after `DEADLINE`."""
    poll(
        lambda: Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0],
        lambda now: now == state,
        lambda now: f"waited {DEADLINE:.0f} s for process {pid} to be in state {state}: it is {now}",
    )


def poll(read: Callable[[], V], check: Callable[[V], bool], failure: Callable[[V], str]) -> V:
    """`read()`'s first value that `check` accepts, read every 50 ms; fails with `failure(last)` after `DEADLINE`."""
    deadline = time.monotonic() + DEADLINE
    while True:
        value = read()
        if check(value):
            return value
        if time.monotonic() > deadline:
            pytest.fail(failure(value))
        time.sleep(0.05)


def _contains(text: str) -> Callable[[str], bool]:
    return lambda screen: text in screen


@contextmanager
def terminal(argv: list[str], folder: Path, env: Mapping[str, str]) -> Iterator[Tmux]:
    """`argv` in a new 80x24 terminal; `before`/`after` get `stty -a`, `status` its exit status."""
    socket = f"e2b-test-{uuid.uuid4().hex[:12]}"
    session = Tmux(socket, folder)
    line = (
        f"stty -a > {folder}/before; {shlex.join(argv)}; echo $? > {folder}/status.tmp; "
        f"stty -a > {folder}/after; mv {folder}/status.tmp {folder}/status; exec sleep 3600"
    )
    assert TMUX is not None
    # The tmux server is started by this call, with `env`: the session's commands inherit it.
    subprocess.run(
        [TMUX, "-L", socket, "-f", os.devnull, "new-session", "-d", "-x", "80", "-y", "24", "-s", "main", line],
        env=dict(env),
        check=True,
        timeout=30,
    )
    try:
        yield session
    finally:
        subprocess.run([TMUX, "-L", socket, "kill-server"], capture_output=True, timeout=30)
