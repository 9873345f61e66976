"""`e2b_cli.launcher`: the console script as users run it, in a subprocess.

Ctrl-C is sent at points the test knows the process has reached (a server
that accepted the connection, an import that announced itself), never after
a guessed delay.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2b_cli.errors import ExitStatus

E2B = [sys.executable, "-m", "e2b_cli"]

# The Ctrl-C sent here must reach the CLI as a terminal's would, however the suite was started.
pytestmark = pytest.mark.usefixtures("default_signals")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("E2B_")}
    return {**env, "E2B_API_KEY": "k", "NO_COLOR": "1", **extra}


@pytest.fixture
def silent_server() -> Iterator[socket.socket]:
    """Accepts connections and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock


def _url(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_ctrl_c_during_a_request_exits_130_with_one_line(silent_server: socket.socket) -> None:
    proc = subprocess.Popen(
        [*E2B, "sandbox", "list", "--request-timeout", "60"],
        env=_env(E2B_API_URL=_url(silent_server)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    silent_server.settimeout(30)
    connection, _ = silent_server.accept()  # the request is in flight, inside the HTTP stack
    with connection:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)  # not the 60 s of the request timeout
    assert proc.returncode == ExitStatus.INTERRUPTED
    assert (out, err) == ("", "Interrupted.\n")


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_the_command_and_the_threads_it_starts_never_take_the_ctrl_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the main thread may get SIGINT: one taken by another thread left it waiting (2 runs in 25, busy machine)."""
    import e2b_cli.main
    from e2b_cli import launcher

    masks: dict[str, set[int | signal.Signals]] = {}

    def command() -> int:
        masks["command"] = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        started = threading.Thread(target=lambda: masks.update(started=signal.pthread_sigmask(signal.SIG_BLOCK, [])))
        started.start()  # as pyqwest's runtime starts its threads: from the command's
        started.join()
        return 0

    monkeypatch.setattr(e2b_cli.main, "main", command)
    status: list[int] = []
    worker = threading.Thread(target=launcher._run_command, args=(status,))
    worker.start()
    worker.join()
    assert status == [0]
    assert signal.SIGINT in masks["command"] and signal.SIGINT in masks["started"]
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # the caller's own mask is untouched


def test_ctrl_c_while_click_is_being_imported(tmp_path: Path) -> None:
    # A stand-in for click that announces its import, then takes its time.
    (tmp_path / "click.py").write_text(
        "import sys, time\nsys.stderr.write('importing click\\n')\nsys.stderr.flush()\ntime.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [*E2B, "--version"],
        env=_env(PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path])),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    assert proc.stderr.readline() == "importing click\n"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == ExitStatus.INTERRUPTED
    assert (out, err) == ("", "Interrupted.\n")


@pytest.mark.parametrize("args", [["--help"], ["sandbox", "create", "--help"], ["--version"]])
def test_a_closed_stdout_exits_quietly(args: list[str]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # `| head -0`: the reader is gone before anything is written
    try:
        proc = subprocess.run(
            [*E2B, *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (ExitStatus.CLOSED_PIPE, "")


def test_a_server_that_never_answers_is_reported_truthfully(silent_server: socket.socket) -> None:
    started = time.monotonic()
    proc = subprocess.run(
        [*E2B, "sandbox", "list", "--request-timeout", "1"],
        env=_env(E2B_API_URL=_url(silent_server)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    wall = time.monotonic() - started
    assert proc.returncode == ExitStatus.NO_ANSWER, proc.stderr
    first, hint = proc.stderr.splitlines()
    match = re.fullmatch(
        r"Error: no answer from the API at http://127\.0\.0\.1:\d+ \(gave up after (\d+\.\d) s\)\.", first
    )
    assert match, first
    # The time stated is the time waited (the process also spent its start-up),
    # the whole timeout: no shorter limit ends the wait for an answer.
    assert 0.95 <= float(match.group(1)) <= wall
    assert hint == "Retry, or allow longer with --request-timeout SECONDS (now 1 s; 0 means no limit)."


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_still_end_the_process_by_the_signal(silent_server: socket.socket, signum: int) -> None:
    """The launcher handles them only to run a command's undo hooks (none here): the death is the signal's."""
    proc = subprocess.Popen(
        [*E2B, "sandbox", "list", "--request-timeout", "60"],
        env=_env(E2B_API_URL=_url(silent_server)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    silent_server.settimeout(30)
    connection, _ = silent_server.accept()
    with connection:
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == -signum, (out, err)
    assert out == "" and "Traceback" not in err
