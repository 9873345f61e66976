"""The sync flavour, `Sandbox`, as codegen derives it from the async sources, against the test envd.

It must behave as e2b 2.x's `Sandbox`: iteration, `wait()` with callbacks,
`stream_input` from an iterable, the polling `WatchHandle`, Ctrl-C.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2b import (
    CommandExitException,
    ConnectionConfig,
    FileNotFoundException,
    FilesystemEventType,
    PtySize,
    Sandbox,
    WatchHandle,
)

from ._envd_server import PROMPTLY, EnvdServer


@pytest.fixture
def sandbox(envd: EnvdServer) -> Sandbox:
    """A `Sandbox` whose API is on 127.0.0.1: its envd is the same server."""
    config = ConnectionConfig(api_key="e2b_test", api_url=envd.url, request_timeout=30)
    return Sandbox(
        "sbxtest", connection_config=config, envd_version="0.6.4", envd_access_token="token", sandbox_domain="e2b.app"
    )


def test_run_iterate_wait_and_stdin(sandbox: Sandbox) -> None:
    result = sandbox.commands.run("printf 'a\\303'; sleep 0.2; printf '\\251'; echo e >&2")
    assert (result.stdout, result.stderr) == ("aé", "e\n")
    with pytest.raises(CommandExitException) as caught:
        sandbox.commands.run("exit 4")
    assert caught.value.exit_code == 4
    handle = sandbox.commands.run("echo one; echo two", background=True)
    assert "".join(out for out, _, _ in handle if out) == "one\ntwo\n"  # 2.x's `for stdout, stderr, pty in handle`
    assert handle.wait().stdout == "one\ntwo\n"
    seen: list[str] = []
    piped = sandbox.commands.run("cat", background=True, stdin=True)
    piped.send_stdin("x")
    piped.close_stdin()
    assert piped.wait(on_stdout=seen.append).stdout == "x"
    assert seen == ["x"]
    streamed = sandbox.commands.run("cat", background=True, stdin=True)
    sandbox.commands.stream_input(streamed.pid, ["a", b"b", "c"])
    sandbox.commands.close_stdin(streamed.pid)
    assert streamed.wait().stdout == "abc"


def test_a_second_loop_goes_on_where_the_first_stopped(sandbox: Sandbox) -> None:
    """2.x's `for ... in handle` can be left and entered again: each loop reads on from the last one's place."""
    handle = sandbox.commands.run("echo one; sleep 0.2; echo two; sleep 0.2; echo three", background=True)
    first = next(out for out, _, _ in handle if out)
    rest = "".join(out for out, _, _ in handle if out)
    assert first + rest == "one\ntwo\nthree\n"
    assert handle.wait().stdout == "one\ntwo\nthree\n"


def test_files_and_the_polling_watch(sandbox: Sandbox, tmp_path: Path) -> None:
    def chunks() -> Iterator[bytes]:
        yield b"it"
        yield b"erable"

    sandbox.files.write(str(tmp_path / "a"), chunks())
    sandbox.files.write(str(tmp_path / "b"), io.BytesIO(b"file"), gzip=True)
    assert sandbox.files.read(str(tmp_path / "a")) == "iterable"
    with sandbox.files.read(str(tmp_path / "b"), format="stream") as stream:
        assert b"".join(stream) == b"file"
    with pytest.raises(FileNotFoundException):
        sandbox.files.get_info(str(tmp_path / "none"))
    watcher = sandbox.files.watch_dir(str(tmp_path))
    assert isinstance(watcher, WatchHandle)
    (tmp_path / "c").write_text("x")
    events = watcher.get_new_events()
    assert [(e.name, e.type) for e in events] == [("c", FilesystemEventType.CREATE)]
    watcher.stop()


def test_a_file_of_many_chunks_reads_back_whole(sandbox: Sandbox, tmp_path: Path) -> None:
    noise = os.urandom(5 << 20)
    (tmp_path / "noise").write_bytes(noise)
    got = sandbox.files.read(str(tmp_path / "noise"), format="bytes")
    assert type(got) is bytearray and got == noise
    (tmp_path / "text").write_text("é" * (3 << 20), encoding="utf-8")
    assert sandbox.files.read(str(tmp_path / "text")) == "é" * (3 << 20)


class _ProducerFailed(Exception):
    """The caller's own failure, raised by the data it hands to `files.write`."""


def test_the_data_producers_own_exception_reaches_the_caller_as_itself(sandbox: Sandbox, tmp_path: Path) -> None:
    def broken() -> Iterator[bytes]:
        yield b"first chunk"
        raise _ProducerFailed("the generator broke")

    with pytest.raises(_ProducerFailed, match="generator broke"):
        sandbox.files.write(str(tmp_path / "g"), broken())
    assert sandbox.files.write(str(tmp_path / "g"), iter([b"after"])).path == str(tmp_path / "g")  # nothing left stuck


def test_a_terminal(sandbox: Sandbox) -> None:
    output = bytearray()
    terminal = sandbox.pty.create(PtySize(24, 80), on_data=output.extend)
    sandbox.pty.send_stdin(terminal.pid, b"stty size; exit\n")
    assert terminal.wait().exit_code == 0
    assert b"24 80" in output


def test_a_terminal_without_on_data_as_2x_sync_code_opens_it(sandbox: Sandbox) -> None:
    """2.x's sync `pty.create(size)` took no callback: the output comes from `wait()` (or iterating the handle)."""
    terminal = sandbox.pty.create(PtySize(24, 80), cwd="/")
    sandbox.pty.send_stdin(terminal.pid, b"stty size; exit\n")
    output = bytearray()
    assert terminal.wait(on_pty=output.extend).exit_code == 0
    assert b"24 80" in output
    with pytest.raises(TypeError, match="pass user and the rest as keywords"):
        sandbox.pty.create(PtySize(24, 80), "root")  # type: ignore[arg-type]  # 2.x's positional user


SYNC_CTRL_C = """
import sys
from e2b import ConnectionConfig, Sandbox

config = ConnectionConfig(api_key="e2b_test", api_url=sys.argv[1])
sbx = Sandbox("sbxtest", connection_config=config, envd_version="0.6.4", sandbox_domain="e2b.app")
try:
    sbx.commands.run("echo started; sleep 60", on_stdout=lambda s: print(s, end="", flush=True))
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


@pytest.mark.slow
def test_ctrl_c_ends_a_sync_run_promptly(envd: EnvdServer) -> None:
    root = Path(__file__).resolve().parents[3]
    child = subprocess.Popen(
        [sys.executable, "-c", SYNC_CTRL_C, envd.url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=root,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "started\n"
        child.send_signal(signal.SIGINT)
        began = time.monotonic()
        # The call has ended when the child says so; its interpreter's exit after that is not the call's.
        said = child.stdout.readline()
        took = time.monotonic() - began
        out, err = child.communicate(timeout=30)
    finally:
        child.kill()
    assert (child.returncode, said, out) == (130, "interrupted\n", ""), err
    assert took < PROMPTLY


SYNC_CTRL_C_QUIET = """
import sys
from e2b import ConnectionConfig, Sandbox

config = ConnectionConfig(api_key="e2b_test", api_url=sys.argv[1])
sbx = Sandbox("sbxtest", connection_config=config, envd_version="0.6.4", sandbox_domain="e2b.app")
try:
    sbx.commands.run(": quiet-run; sleep 60")
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


@pytest.mark.slow
def test_ctrl_c_ends_a_sync_run_without_callbacks_which_waits_in_one_step(envd: EnvdServer) -> None:
    """Without callbacks the whole run waits in one step on the worker: Ctrl-C ends it all the same."""
    root = Path(__file__).resolve().parents[3]
    child = subprocess.Popen(
        [sys.executable, "-c", SYNC_CTRL_C_QUIET, envd.url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=root,
    )
    try:
        deadline = time.monotonic() + 30  # a failure bound: the command starts at once
        while not any("quiet-run" in proc.config.args[-1] for proc in envd.app.process.procs.values()):
            assert time.monotonic() < deadline and child.poll() is None, child.stderr
            time.sleep(0.01)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)  # the command itself would take 60 s
    finally:
        child.kill()
    assert (child.returncode, out) == (130, "interrupted\n"), err
