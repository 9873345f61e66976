"""`e2b sandbox exec`, `connect` and `create` inside a sandbox of the local API server, as real processes.

The terminal sessions run in tmux (tests/cli/tmux.py). The tests that reach
into the sandbox skip, with the reason, while the SDK has no data plane
(`Sandbox.commands`, `Sandbox.pty`); the bad input ones run regardless.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import e2b
import httpx
import pytest
from e2b_cli.attach_terminal import KEEP_ALIVE_EVERY, TERMINAL_ONLY_TIMEOUT
from e2b_cli.errors import ExitStatus
from e2b_cli.exec_command import ALIVE_AHEAD

from tests.cli.local_api_process import DEV_KEY, E2B, NEEDS_SCRIPTS, server_process, serving
from tests.cli.tmux import NEEDS_TMUX, Tmux, terminal

pytestmark = NEEDS_SCRIPTS
NEEDS_DATA_PLANE = pytest.mark.skipif(
    not (hasattr(e2b, "PtySize") and hasattr(e2b.Sandbox, "commands") and hasattr(e2b.Sandbox, "pty")),
    reason="the SDK's data plane (Sandbox.commands, Sandbox.pty, e2b.PtySize) is not installed",
)
# A login shell's prompt ends with "$ " or "# ", whatever it shows before.
PROMPT = re.compile(r"[$#] ?$", flags=re.M)


class Server:
    def __init__(self, url: str) -> None:
        self.url = url

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("E2B_", "TMUX"))}
        return {**env, "E2B_API_URL": self.url, "E2B_API_KEY": DEV_KEY, "NO_COLOR": "1"}

    def e2b(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        assert E2B is not None
        return subprocess.run(
            [E2B, *args],
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=120,
        )

    def e2b_bytes(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        """`e2b ARGS...` with its stdout and stderr as the bytes it wrote."""
        assert E2B is not None
        return subprocess.run([E2B, *args], stdin=subprocess.DEVNULL, capture_output=True, env=self.env(), timeout=120)

    def e2b_redirected(self, redirect: str, *args: str) -> subprocess.CompletedProcess[str]:
        """`e2b ARGS...` run by sh with REDIRECT (`>&-`, `2>&-`, `>/dev/full`); what it wrote elsewhere."""
        assert E2B is not None
        return subprocess.run(
            ["sh", "-c", f'exec "$@" {redirect}', "sh", E2B, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=120,
        )

    def sandbox(self) -> str:
        created = self.e2b("sandbox", "create", "-d")
        assert created.returncode == 0, created.stderr
        return created.stdout.strip()


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with serving() as (url, _control):
        yield Server(url)


@pytest.fixture(scope="module")
def sandbox_id(server: Server) -> str:
    return server.sandbox()


# --- bad input: said before anything runs ----------------------------------------------


def test_an_unknown_sandbox_is_not_found(server: Server) -> None:
    done = server.e2b("sandbox", "exec", "nope", "--", "true")
    assert done.returncode == ExitStatus.FAILED, done.stderr
    assert done.stderr.splitlines() == [
        "Error: sandbox 'nope' not found",
        "Run `e2b sandbox list` to see your team's sandboxes.",
    ]


@pytest.mark.parametrize("args", [["--"], []])
def test_no_command_is_a_usage_error(server: Server, sandbox_id: str, args: list[str]) -> None:
    done = server.e2b("sandbox", "exec", sandbox_id, *args)
    assert done.returncode == ExitStatus.USAGE
    assert "Error: no command to run: e2b sandbox exec SANDBOX_ID -- COMMAND [ARG]..." in done.stderr


def test_a_malformed_env_is_a_usage_error(server: Server, sandbox_id: str) -> None:
    done = server.e2b("sandbox", "exec", "-e", "NOEQUALS", sandbox_id, "--", "true")
    assert done.returncode == ExitStatus.USAGE
    assert "Invalid value for '-e' / '--env': 'NOEQUALS' is not KEY=VALUE." in done.stderr


# --- exec ---------------------------------------------------------------------------------


@NEEDS_DATA_PLANE
def test_exec_streams_stdout_and_stderr_apart_and_exits_with_the_command_s_status(
    server: Server, sandbox_id: str
) -> None:
    done = server.e2b("sandbox", "exec", sandbox_id, "echo out; echo err >&2; exit 3")
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")
    assert server.e2b("sandbox", "exec", sandbox_id, "--", "echo", "a b", "$HOME").stdout == "a b $HOME\n"


@NEEDS_DATA_PLANE
def test_piped_stdin_reaches_the_command_and_is_closed(server: Server, sandbox_id: str) -> None:
    text = "".join(f"line {n}\n" for n in range(20_000))  # above one 64 KiB chunk
    done = server.e2b("sandbox", "exec", sandbox_id, "--", "cat", stdin=text)
    assert (done.returncode, done.stdout == text) == (0, True), done.stderr


@NEEDS_DATA_PLANE
def test_a_command_that_stops_reading_its_input_is_not_a_failure(server: Server, sandbox_id: str) -> None:
    done = server.e2b("sandbox", "exec", sandbox_id, "--", "head", "-c", "10", stdin="y\n" * 1_000_000)
    assert (done.returncode, done.stdout) == (0, "y\n" * 5), done.stderr
    assert done.stderr in ("", "e2b: the command exited before it read all of its input.\n")


@NEEDS_DATA_PLANE
def test_env_cwd_and_user(server: Server, sandbox_id: str) -> None:
    done = server.e2b(
        "sandbox", "exec", "-e", "A=1", "-e", "B=x=y", "-c", "/tmp", sandbox_id, "--", "sh", "-c", 'echo "$A $B $PWD"'
    )
    assert (done.returncode, done.stdout) == (0, "1 x=y /tmp\n"), done.stderr
    root = server.e2b("sandbox", "exec", "-u", "root", sandbox_id, "--", "id", "-u")
    assert (root.returncode, root.stdout) == (0, "0\n"), root.stderr


@NEEDS_DATA_PLANE
def test_exec_passes_binary_output_through_byte_for_byte(server: Server, sandbox_id: str) -> None:
    # Random bytes (every byte value, invalid UTF-8 throughout), kept in the sandbox to hash them there.
    line = "head -c 100000 /dev/urandom | tee /tmp/out.bin; head -c 50000 /dev/urandom | tee /tmp/err.bin >&2"
    done = server.e2b_bytes("sandbox", "exec", sandbox_id, line)
    assert (done.returncode, len(done.stdout), len(done.stderr)) == (0, 100_000, 50_000), done.stderr[-300:]
    hashed = server.e2b("sandbox", "exec", sandbox_id, "--", "sha256sum", "/tmp/out.bin", "/tmp/err.bin")
    assert hashed.stdout.split()[::2] == [
        hashlib.sha256(done.stdout).hexdigest(),
        hashlib.sha256(done.stderr).hexdigest(),
    ]


@NEEDS_DATA_PLANE
def test_exec_passes_bytes_that_are_not_utf_8_unreplaced(server: Server, sandbox_id: str) -> None:
    # A lone \xc3 opens a character that never ends: decoded, it would come out as U+FFFD.
    done = server.e2b_bytes("sandbox", "exec", sandbox_id, "--", "printf", "\\377\\376a\\303")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"\xff\xfea\xc3", b"")


@NEEDS_DATA_PLANE
@pytest.mark.parametrize(
    ("option", "refusal"),
    [
        (["-u", "nobodyxx"], "invalid username: 'nobodyxx'"),
        (["-c", "/nonexistent"], "error starting process '/bin/bash -l -c pwd': cwd '/nonexistent' does not exist"),
    ],
    ids=["user", "cwd"],
)
def test_the_sandbox_s_refusal_is_a_failure_said_as_the_sandbox_s(
    server: Server, sandbox_id: str, option: list[str], refusal: str
) -> None:
    done = server.e2b("sandbox", "exec", *option, sandbox_id, "--", "pwd")
    assert (done.returncode, done.stdout) == (ExitStatus.FAILED, "")
    assert done.stderr.splitlines() == [
        f"Error: the sandbox refused the request: {refusal}",
        "Check the user (-u) and the directory (-c): both must exist in the sandbox.",
    ]


@NEEDS_DATA_PLANE
def test_background_prints_the_pid_as_json(server: Server, sandbox_id: str) -> None:
    done = server.e2b("sandbox", "exec", "-b", "--json", sandbox_id, "--", "sleep", "30")
    assert done.returncode == 0, done.stderr
    started = json.loads(done.stdout)
    assert started["sandbox_id"] == sandbox_id and isinstance(started["pid"], int) and started["pid"] > 0
    listed = server.e2b("sandbox", "exec", sandbox_id, "--", "kill", str(started["pid"]))
    assert listed.returncode == 0, listed.stderr  # it was still running: the CLI left it so


# --- terminals ------------------------------------------------------------------------------


def _prompt(session: Tmux) -> None:
    session.wait_for("the remote shell's prompt", lambda screen: bool(PROMPT.search(screen.rstrip("\n "))))


@NEEDS_DATA_PLANE
@NEEDS_TMUX
def test_connect_opens_a_terminal_that_ctrl_d_ends(server: Server, sandbox_id: str, tmp_path: Path) -> None:
    assert E2B is not None
    with terminal([E2B, "sandbox", "connect", sandbox_id], tmp_path, server.env()) as session:
        _prompt(session)
        session.type("echo hi")
        session.wait_for_line("hi")
        session.wait_for_size(24, 80)
        session.resize(100, 30)
        session.wait_for_size(30, 100)
        session.keys("C-d")
        assert session.wait_for_file("status") == "0\n"
        session.wait_for_line(f"Closed the terminal on sandbox {sandbox_id}.")
        after, before = ((tmp_path / name).read_text() for name in ("after", "before"))
        size = re.compile(r"(rows|columns) \d+;")  # a resize changes it, and the lines' wrapping
        assert size.sub("", after).split() == size.sub("", before).split()


@NEEDS_DATA_PLANE
@NEEDS_TMUX
def test_connect_as_a_user_the_sandbox_does_not_have_is_its_refusal(
    server: Server, sandbox_id: str, tmp_path: Path
) -> None:
    assert E2B is not None
    with terminal([E2B, "sandbox", "connect", "-u", "nobodyxx", sandbox_id], tmp_path, server.env()) as session:
        assert session.wait_for_file("status") == f"{int(ExitStatus.FAILED)}\n"
        session.wait_for_line("Error: the sandbox refused the request: invalid username: 'nobodyxx'")


@NEEDS_DATA_PLANE
@NEEDS_TMUX
def test_create_opens_a_terminal_and_kills_the_sandbox_after_it(server: Server, tmp_path: Path) -> None:
    assert E2B is not None
    with terminal([E2B, "sandbox", "create"], tmp_path, server.env()) as session:
        _prompt(session)
        session.type("exit")
        assert session.wait_for_file("status") == "0\n"
        killed = session.wait_for("the kill", lambda screen: "Killed sandbox " in screen)
    found = re.search(r"Killed sandbox (\S+) ", killed)
    assert found is not None
    assert server.e2b("sandbox", "info", found.group(1)).returncode == ExitStatus.FAILED


@NEEDS_DATA_PLANE
@NEEDS_TMUX
@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM], ids=["SIGHUP", "SIGTERM"])
def test_a_signal_that_ends_create_s_terminal_kills_its_sandbox(
    server: Server, tmp_path: Path, signum: signal.Signals
) -> None:
    assert E2B is not None
    with terminal([E2B, "sandbox", "create"], tmp_path, server.env()) as session:
        _prompt(session)
        connecting = re.search(r"Terminal connecting to sandbox (\S+);", session.screen())
        assert connecting is not None
        os.kill(session.command_pid(), signum)  # as a closed window (SIGHUP) or a service manager (SIGTERM) does
        assert session.wait_for_file("status") == f"{128 + signum}\n"  # dead of the signal, as the shell says
    # Left running, the sandbox would live on until its deadline: at least this long after the CLI's end.
    expires_in = TERMINAL_ONLY_TIMEOUT - min(KEEP_ALIVE_EVERY, TERMINAL_ONLY_TIMEOUT / 3)
    deadline = time.monotonic() + expires_in / 2
    url = f"{server.url}/sandboxes/{connecting.group(1)}"
    with httpx.Client(headers={"X-API-Key": DEV_KEY}, timeout=10) as api:
        while (status := api.get(url).status_code) != 404 and time.monotonic() < deadline:
            time.sleep(0.1)
    assert status == 404, f"the sandbox was left running ({status}) after the CLI died of {signum.name}"


@NEEDS_DATA_PLANE
@pytest.mark.parametrize(
    ("line", "status"),
    [
        # envd says "signal: aborted (core dumped)": the core dump is no other status.
        ("ulimit -c unlimited; exec python3 -c 'import os; os.abort()'", 128 + 6),
        # A real-time signal has no name in Go's table: "signal: signal 40".
        ("exec python3 -c 'import os, signal; signal.signal(40, signal.SIG_DFL); os.kill(os.getpid(), 40)'", 128 + 40),
    ],
    ids=["core-dumped", "real-time"],
)
def test_a_command_killed_by_a_signal_exits_128_plus_its_number(
    server: Server, sandbox_id: str, line: str, status: int
) -> None:
    done = server.e2b("sandbox", "exec", "-c", "/tmp", sandbox_id, "--", "bash", "-c", line)
    assert done.returncode == status, done.stderr


def _running(server: Server, sandbox_id: str, marker: str) -> str:
    """The command lines of the sandbox's processes that are `marker`."""
    return server.e2b("sandbox", "exec", sandbox_id, f"ps -eo args | grep -x -F -- '{marker}' || true").stdout


@NEEDS_DATA_PLANE
@pytest.mark.parametrize(
    ("redirect", "line", "said"),
    [
        (">/dev/full", "echo hi; sleep 97.1", "Error: could not write to stdout: No space left on device\n"),
        (">&-", "echo hi; sleep 97.2", "Error: could not write to stdout: Bad file descriptor\n"),
        ("2>&-", "echo hi >&2; sleep 97.3", ""),  # nowhere to say it: the status does
    ],
    ids=["full", "stdout-closed", "stderr-closed"],
)
def test_output_that_cannot_be_written_is_an_error_and_ends_the_command(
    server: Server, sandbox_id: str, redirect: str, line: str, said: str
) -> None:
    done = server.e2b_redirected(redirect, "sandbox", "exec", sandbox_id, line)
    assert (done.returncode, done.stderr) == (ExitStatus.FAILED, said)
    assert _running(server, sandbox_id, line.rsplit("; ", 1)[1]) == ""  # killed before the CLI ended


@NEEDS_DATA_PLANE
def test_a_closed_stderr_does_not_fail_a_command_that_writes_none(server: Server, sandbox_id: str) -> None:
    done = server.e2b_redirected("2>&-", "sandbox", "exec", sandbox_id, "--", "echo", "hi")
    assert (done.returncode, done.stdout) == (0, "hi\n")


@NEEDS_DATA_PLANE
def test_a_background_pid_that_cannot_be_printed_ends_the_command(server: Server, sandbox_id: str) -> None:
    done = server.e2b_redirected(">&-", "sandbox", "exec", "-b", sandbox_id, "--", "sleep", "97.4")
    assert (done.returncode, done.stderr) == (
        ExitStatus.FAILED,
        "Error: could not write to stdout: Bad file descriptor\n",
    )
    assert _running(server, sandbox_id, "sleep 97.4") == ""


def test_a_listing_with_stdout_closed_is_one_line_and_status_1(server: Server) -> None:
    done = server.e2b_redirected(">&-", "sandbox", "list")
    assert (done.returncode, done.stderr) == (
        ExitStatus.FAILED,
        "Error: could not write to stdout: Bad file descriptor\n",
    )


@NEEDS_DATA_PLANE
@NEEDS_TMUX
@pytest.mark.parametrize("options", [[], ["--timeout", "600"]], ids=["killed-after", "kept-after"])
def test_create_leaves_a_sandbox_paused_under_its_terminal_paused(
    server: Server, tmp_path: Path, options: list[str]
) -> None:
    assert E2B is not None
    with terminal([E2B, "sandbox", "create", *options], tmp_path, server.env()) as session:
        _prompt(session)
        connecting = re.search(r"Terminal connecting to sandbox (\S+);", session.screen())
        assert connecting is not None
        sandbox_id = connecting.group(1)
        paused = server.e2b("sandbox", "pause", sandbox_id)  # from another shell: the snapshot is wanted
        assert paused.returncode == 0, paused.stderr
        session.wait_for_file("status")
        said = f"Sandbox {sandbox_id} was paused meanwhile: left paused; `e2b sandbox connect {sandbox_id}` resumes it."
        screen = session.wait_for("the word on the pause", lambda screen: said in screen.replace("\n", ""))
    assert "Killed sandbox" not in screen and "keeps running" not in screen
    info = server.e2b("sandbox", "info", "--json", sandbox_id)
    assert (info.returncode, json.loads(info.stdout)["state"] if info.stdout else None) == (0, "paused"), info.stderr
    server.e2b("sandbox", "kill", sandbox_id)


@NEEDS_DATA_PLANE
def test_exec_keeps_a_sandbox_alive_past_its_timeout_while_the_command_runs(server: Server) -> None:
    created = server.e2b("sandbox", "create", "-d", "--timeout", "5")
    assert created.returncode == 0, created.stderr
    sandbox_id = created.stdout.strip()
    # Longer than the sandbox's timeout and than exec's own margin: only the refreshes keep it.
    done = server.e2b("sandbox", "exec", sandbox_id, f"sleep {ALIVE_AHEAD + 10}; echo done")
    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr
    server.e2b("sandbox", "kill", sandbox_id)


@NEEDS_DATA_PLANE
def test_exec_moves_a_short_timeout_no_further_than_its_margin(server: Server) -> None:
    created = server.e2b("sandbox", "create", "-d", "--timeout", "10")
    assert created.returncode == 0, created.stderr
    sandbox_id = created.stdout.strip()
    assert server.e2b("sandbox", "exec", sandbox_id, "--", "true").returncode == 0
    info = server.e2b("sandbox", "info", "--json", sandbox_id)
    assert info.returncode == 0, info.stderr
    left = datetime.datetime.fromisoformat(json.loads(info.stdout)["end_at"]) - datetime.datetime.now(datetime.UTC)
    # The SDK's default would have made it 300 s.
    assert left.total_seconds() <= ALIVE_AHEAD + 15, left
    server.e2b("sandbox", "kill", sandbox_id)


@NEEDS_DATA_PLANE
@NEEDS_TMUX
@pytest.mark.parametrize(
    ("command", "typing"),
    [("connect", False), ("connect", True), ("create", True)],
    ids=["connect-idle", "connect-typing", "create-typing"],
)
def test_a_server_gone_silent_ends_the_terminal_with_exit_3_and_the_terminal_restored(
    tmp_path: Path, command: str, typing: bool
) -> None:
    assert E2B is not None
    # A server of its own: this one is stopped (SIGSTOP), its connections left open and unanswered.
    with server_process() as (url, _control, proc):
        silent = Server(url)
        argv = [E2B, "sandbox", command, "--request-timeout", "5"]
        argv += [silent.sandbox()] if command == "connect" else []
        with terminal(argv, tmp_path, silent.env()) as session:
            _prompt(session)
            connecting = re.search(r"Terminal connecting to sandbox (\S+);", session.screen())
            assert connecting is not None
            os.kill(proc.pid, signal.SIGSTOP)
            try:
                if typing:  # the keys' own request goes unanswered; idle, the CLI asks after a quiet spell
                    session.type("echo hi")
                assert session.wait_for_file("status") == f"{int(ExitStatus.NO_ANSWER)}\n"
                screen = session.screen().replace("\n", "")
            finally:
                os.kill(proc.pid, signal.SIGCONT)
    assert re.search(r"Error: the sandbox did not answer for \d+ s: closed the terminal\.", screen), screen
    assert f"run `e2b sandbox connect {connecting.group(1)}` again" in screen
    if command == "create":  # nothing more asked of a server that does not answer
        assert f"Sandbox {connecting.group(1)} was left as it is, until its timeout" in screen
    size = re.compile(r"(rows|columns) \d+;")
    after, before = ((tmp_path / name).read_text() for name in ("after", "before"))
    assert size.sub("", after).split() == size.sub("", before).split()
