"""`e2b_cli.pty_session` in a real terminal (tmux): keys, resizes, the end, the terminal put back.

The sandbox's side is a local bash on a pty (`tests.cli.local_sandbox`):
what is tested here is this side of the session, through the console
script as users run it. The same session against the local server is in
tests/cli/test_sandbox_exec_local_api.py.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.local_sandbox import PROMPT
from tests.cli.tmux import NEEDS_TMUX, Tmux, raw, terminal, wait_for_state

pytestmark = NEEDS_TMUX
ROOT = Path(__file__).resolve().parents[2]


CONNECT = [sys.executable, "-m", "tests.cli.local_sandbox", "sandbox", "connect", "sbx_local"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("E2B_", "TMUX"))}
    # The repository first, for `tests.cli.local_sandbox`; the packages after it as the suite found them.
    path = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return {**env, "E2B_API_KEY": "e2b_test_key", "NO_COLOR": "1", "PYTHONPATH": path}


@pytest.fixture
def connected(tmp_path: Path) -> Iterator[Tmux]:
    with terminal(CONNECT, tmp_path, _env()) as session:
        session.wait_for("the prompt", lambda screen: PROMPT.rstrip() in screen)
        yield session


def _settings(stty: str) -> list[str]:
    """`stty -a`'s words without the window size, which a resize changes on purpose (and the wrapping with it)."""
    return re.sub(r"(rows|columns) \d+;", "", stty).split()


def test_keys_reach_the_shell_and_ctrl_d_ends_the_session_with_the_terminal_as_it_was(connected: Tmux) -> None:
    assert connected.screen().startswith("Terminal connecting to sandbox sbx_local")
    connected.type("echo hi")
    connected.wait_for_line("hi")  # the shell's output (the typed line itself reads "local$ echo hi")
    connected.keys("C-d")
    assert connected.wait_for_file("status") == "0\n"
    connected.wait_for_line("Closed the terminal on sandbox sbx_local.")
    assert (connected.folder / "after").read_text() == (connected.folder / "before").read_text()


def test_a_resize_reaches_the_pty(connected: Tmux) -> None:
    connected.wait_for_size(24, 80)
    connected.resize(100, 30)
    connected.wait_for_size(30, 100)
    connected.type("exit")
    assert connected.wait_for_file("status") == "0\n"
    after, before = ((connected.folder / name).read_text() for name in ("after", "before"))
    assert _settings(after) == _settings(before)


def test_ctrl_c_goes_to_the_remote_command_not_to_the_cli(connected: Tmux) -> None:
    connected.type("sleep 600; echo slept")
    connected.wait_for_line(f"{PROMPT}sleep 600; echo slept")
    connected.keys("C-c")  # raw mode: a byte for the remote shell, which interrupts its sleep
    connected.type("echo still here")
    connected.wait_for_line("still here")
    assert "slept" not in connected.screen().replace("echo slept", "")
    connected.keys("C-d")
    assert connected.wait_for_file("status") == "0\n"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_ends_the_cli_with_the_terminal_restored(connected: Tmux, signum: signal.Signals) -> None:
    os.kill(connected.command_pid(), signum)
    status = int(connected.wait_for_file("status"))
    # SIGINT: the launcher's "Interrupted.", 130; the others: dead of the signal, as the shell reports it.
    assert status == (130 if signum == signal.SIGINT else 128 + signum)
    assert (connected.folder / "after").read_text() == (connected.folder / "before").read_text()


@pytest.mark.parametrize(
    ("options", "after"),
    [
        ([], "Killed sandbox sbx_local (--timeout or -d keeps a sandbox)."),
        (["--timeout", "60"], "Sandbox sbx_local keeps running for 60 seconds."),
    ],
)
def test_create_opens_a_terminal_then_kills_the_sandbox_unless_given_a_timeout(
    tmp_path: Path, options: list[str], after: str
) -> None:
    argv = [sys.executable, "-m", "tests.cli.local_sandbox", "sandbox", "create", *options]
    with terminal(argv, tmp_path, _env()) as session:
        session.wait_for("the prompt", lambda screen: PROMPT.rstrip() in screen)
        session.type("exit")
        assert session.wait_for_file("status") == "0\n"
        session.wait_for_line(after)


@pytest.mark.parametrize("shell", [["dash", "-i"], ["bash", "--norc", "--noprofile", "-i"]], ids=["dash", "bash"])
def test_a_stop_gives_the_terminal_back_and_fg_resumes_the_session_raw_with_the_new_size(
    tmp_path: Path, shell: list[str]
) -> None:
    # A job control shell: a stop signal to a process group without one (orphaned) is discarded by the kernel.
    # PS1 set by `env`: the pane's own sh (dash, as root) would put back its default.
    with terminal(["env", "PS1=outer$ ", *shell], tmp_path, _env()) as session:
        session.wait_for_line("outer$")
        before = _settings(" ".join(session.stty()))  # dash edits no line: its prompt leaves the terminal as is
        session.type(shlex.join(CONNECT))
        session.wait_for("the prompt", lambda screen: PROMPT.rstrip() in screen)
        assert raw(session.stty())
        cli = session.command_pid(session.command_pid())  # the pane's shell runs the job shell, which runs the CLI
        os.kill(cli, signal.SIGTSTP)  # as `kill -TSTP` from another shell does
        wait_for_state(cli, "T")
        session.wait_for("the shell's word on the stopped job", lambda screen: "Stopped" in screen)
        # Stopped: the terminal is as the CLI found it (bash puts its own settings back too; dash does not).
        assert _settings(" ".join(session.stty())) == before
        # The window changes while the job is stopped: the SIGWINCH goes to the shell, the terminal's job now.
        session.resize(100, 30)
        session.type("fg")
        session.wait_for_mode("raw mode again", raw)
        session.wait_for_size(30, 100)  # sent on the continue: no SIGWINCH reached the CLI
        session.keys("C-d")
        session.wait_for("the end of the session", lambda screen: "Closed the terminal on sandbox sbx_local." in screen)
        session.type("exit")
        assert session.wait_for_file("status") == "0\n"
