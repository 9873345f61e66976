"""`sbx.commands` (async flavour) against a real Connect envd running real processes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time

import anyio
import pytest
from connectrpc.code import Code
from e2b import (
    AsyncSandbox,
    AuthenticationException,
    CommandExitException,
    CommandResult,
    InvalidArgumentException,
    NotFoundException,
    RateLimitException,
    SandboxException,
    SandboxNotRunningException,
    SandboxUnreachableException,
    TemplateException,
    TimeoutException,
    UnexpectedResponseException,
)

from ._envd_server import PROMPTLY, EnvdServer
from .conftest import sandbox

pytestmark = pytest.mark.anyio


async def test_a_foreground_command_answers_its_output_and_exit(sbx: AsyncSandbox, envd: EnvdServer) -> None:
    result = await sbx.commands.run("echo out; echo err >&2; echo $GREETING; pwd", envs={"GREETING": "hi"}, cwd="/tmp")
    assert result == CommandResult(stdout="out\nhi\n/tmp\n", stderr="err\n", exit_code=0, error=None)
    headers = envd.faults.headers["Start"]
    # The routing headers, the token and the keep-alive; no user named for a current envd.
    assert headers["e2b-sandbox-id"] == "sbxtest"
    assert headers["e2b-sandbox-port"] == "49983"
    assert headers["x-access-token"] == "token"
    assert headers["keepalive-ping-interval"] == "50"
    assert "authorization" not in headers


async def test_a_user_is_sent_as_basic_credentials_and_an_old_envd_gets_the_default(envd: EnvdServer) -> None:
    await sandbox(envd).commands.run("true", user="root")
    assert envd.faults.headers["Start"]["authorization"] == "Basic cm9vdDo="  # "root:"
    await sandbox(envd, envd_version="0.3.0").commands.run("true")
    assert envd.faults.headers["Start"]["authorization"] == "Basic dXNlcjo="  # "user:"


async def test_a_non_zero_exit_raises_with_the_result(sbx: AsyncSandbox) -> None:
    with pytest.raises(CommandExitException) as caught:
        await sbx.commands.run("echo partial; echo oops >&2; exit 3")
    assert (caught.value.exit_code, caught.value.stdout, caught.value.stderr) == (3, "partial\n", "oops\n")
    assert isinstance(caught.value, SandboxException)
    assert "exited with code 3" in str(caught.value)


async def test_a_missing_command_is_bash_s_127_not_an_sdk_crash(sbx: AsyncSandbox) -> None:
    with pytest.raises(CommandExitException) as caught:
        await sbx.commands.run("no-such-command-e2b")
    assert caught.value.exit_code == 127
    assert "not found" in caught.value.stderr


async def test_a_missing_cwd_is_the_server_s_invalid_argument(sbx: AsyncSandbox) -> None:
    with pytest.raises(InvalidArgumentException, match="does not exist"):
        await sbx.commands.run("true", cwd="/no/such/dir/e2b")


async def test_utf8_split_across_chunks_decodes_whole_and_bad_bytes_become_replacements(sbx: AsyncSandbox) -> None:
    pieces: list[str] = []
    # The sleep makes the two halves of "é" two chunks of the stream.
    result = await sbx.commands.run(r"printf 'a\303'; sleep 0.3; printf '\251|\377'", on_stdout=pieces.append)
    assert result.stdout == "aé|\ufffd"
    assert "".join(pieces) == "aé|\ufffd"  # no half character became a replacement on the way
    # (tests/python_sdk/sandbox/test_command_handle.py splits the bytes exactly where it wants)


async def test_retain_output_false_gives_the_callbacks_only(sbx: AsyncSandbox) -> None:
    seen: list[str] = []
    result = await sbx.commands.run("seq 1 3", on_stdout=seen.append, retain_output=False)
    assert (result.stdout, result.stderr, result.exit_code) == (None, None, 0)
    assert "".join(seen) == "1\n2\n3\n"


async def test_async_callbacks_are_awaited(sbx: AsyncSandbox) -> None:
    seen: list[str] = []

    async def on_stderr(text: str) -> None:
        await asyncio.sleep(0)
        seen.append(text)

    await sbx.commands.run("echo e >&2", on_stderr=on_stderr)
    assert seen == ["e\n"]


async def test_a_background_handle_iterates_then_waits(sbx: AsyncSandbox) -> None:
    handle = await sbx.commands.run("echo a; echo b >&2", background=True)
    assert handle.pid > 0
    events = [event async for event in handle]
    assert ("a\n", None, None) in events and (None, "b\n", None) in events
    result = await handle.wait()
    assert (result.exit_code, handle.exit_code, handle.stdout, handle.stderr) == (0, 0, "a\n", "b\n")


async def test_a_background_handle_with_callbacks_reads_before_wait(sbx: AsyncSandbox) -> None:
    seen: list[str] = []
    handle = await sbx.commands.run("echo early; sleep 30", background=True, on_stdout=seen.append)
    with anyio.fail_after(20):
        while not seen:  # the pump reads in the background, as e2b 2.x's async handle
            await asyncio.sleep(0.01)
    assert await handle.kill() is True
    with pytest.raises(CommandExitException) as caught:
        await handle.wait()
    assert caught.value.exit_code == -1
    assert caught.value.error == "signal: SIGKILL"
    assert [event async for event in handle] == []  # a loop after the end has nothing left to follow


async def test_stdout_fills_without_wait_as_in_2_x(sbx: AsyncSandbox) -> None:
    handle = await sbx.commands.run("echo early; sleep 30", background=True)
    with anyio.fail_after(20):
        while handle.stdout != "early\n":
            await asyncio.sleep(0.01)
    assert handle.exit_code is None
    await handle.kill()


async def test_a_loop_follows_the_output_while_callbacks_get_it_too(sbx: AsyncSandbox) -> None:
    seen: list[str] = []
    handle = await sbx.commands.run(
        "for i in 1 2 3; do echo $i; sleep 0.05; done", background=True, on_stdout=seen.append
    )
    followed = "".join([out async for out, _, _ in handle if out])
    assert followed == "1\n2\n3\n" == "".join(seen) == handle.stdout


async def test_disconnect_leaves_the_command_running_and_connect_reads_it_again(
    sbx: AsyncSandbox, envd: EnvdServer
) -> None:
    handle = await sbx.commands.run("read line; echo got $line", background=True, stdin=True)
    await handle.disconnect()
    assert any(p.pid == handle.pid for p in await sbx.commands.list())
    again = await sbx.commands.connect(handle.pid)
    await sbx.commands.send_stdin(handle.pid, "x\n")
    result = await again.wait()
    assert result.stdout == "got x\n"


async def test_stdin_is_sent_and_closed(sbx: AsyncSandbox) -> None:
    handle = await sbx.commands.run("cat", background=True, stdin=True)
    await handle.send_stdin("hello ")
    await handle.send_stdin(b"world")
    await handle.close_stdin()
    assert (await handle.wait()).stdout == "hello world"


async def test_stream_input_sends_chunks_in_order_with_keepalives(sbx: AsyncSandbox, envd: EnvdServer) -> None:
    envd.app.process.inputs.clear()
    handle = await sbx.commands.run("cat", background=True, stdin=True)
    stream = sbx.commands.stream_input(handle.pid)
    stream._keepalive = 0.05  # a quiet caller: keep-alives go out meanwhile
    await stream.send("one ")
    await asyncio.sleep(0.3)
    await stream.send(b"two")
    await stream.close()
    with pytest.raises(SandboxException, match="closed"):
        await stream.send("late")
    await handle.close_stdin()
    assert (await handle.wait()).stdout == "one two"
    assert envd.app.process.inputs[0] == "start" and "keepalive" in envd.app.process.inputs


async def test_stream_input_to_a_missing_process_fails_on_close(sbx: AsyncSandbox) -> None:
    stream = sbx.commands.stream_input(999_999)
    with pytest.raises(NotFoundException, match="999999"):  # from send() when the failure came first
        await stream.send("x")
        await stream.close()


async def test_list_kill_and_unknown_pids(sbx: AsyncSandbox) -> None:
    handle = await sbx.commands.run("sleep 30", background=True)
    listed = {p.pid: p for p in await sbx.commands.list()}
    assert listed[handle.pid].cmd == "/bin/bash"
    assert listed[handle.pid].args == ["-l", "-c", "sleep 30"]
    assert await sbx.commands.kill(handle.pid) is True
    with pytest.raises(CommandExitException):
        await handle.wait()
    assert await sbx.commands.kill(handle.pid) is False
    with pytest.raises(NotFoundException):
        await sbx.commands.connect(handle.pid)


async def test_old_envds_refuse_what_they_cannot_do(envd: EnvdServer) -> None:
    old = sandbox(envd, envd_version="0.2.4")
    with pytest.raises(TemplateException, match="stdin=False"):
        await old.commands.run("true", stdin=False)
    with pytest.raises(TemplateException, match="closing stdin"):
        await old.commands.close_stdin(1)
    assert envd.faults.starts == 0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"cmd": "echo \x00"}, "cmd"),
        ({"cmd": ""}, "cmd"),
        ({"cmd": "true", "timeout": -1}, "timeout"),
        ({"cmd": "true", "timeout": float("nan")}, "timeout"),
        ({"cmd": "true", "cwd": "/tmp\x00x"}, "cwd"),
        ({"cmd": "true", "envs": {"A=B": "c"}}, "envs"),
        ({"cmd": "true", "envs": {"A": 1}}, "envs"),
        ({"cmd": "true", "request_timeout": -2}, "request_timeout"),
    ],
)
async def test_bad_values_are_refused_before_any_request(
    sbx: AsyncSandbox, envd: EnvdServer, kwargs: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidArgumentException, match=field):
        await sbx.commands.run(**kwargs)  # type: ignore[call-overload]
    assert envd.faults.starts == 0


async def test_an_unknown_keyword_is_a_type_error_before_any_request(sbx: AsyncSandbox, envd: EnvdServer) -> None:
    with pytest.raises(TypeError):
        await sbx.commands.run("true", backgrund=True)  # type: ignore[call-overload]
    assert envd.faults.starts == 0


async def test_timeout_zero_is_no_limit_and_a_short_one_ends_the_command(sbx: AsyncSandbox) -> None:
    assert (await sbx.commands.run("sleep 0.2; echo done", timeout=0)).stdout == "done\n"
    with anyio.fail_after(20), pytest.raises(TimeoutException, match="timeout"):
        await sbx.commands.run("sleep 30", timeout=0.5)


async def test_request_timeout_bounds_the_wait_for_the_start(sbx: AsyncSandbox, envd: EnvdServer) -> None:
    envd.faults.slow_start = 5
    began = time.monotonic()
    with anyio.fail_after(20), pytest.raises(TimeoutException, match="request_timeout"):
        await sbx.commands.run("true", request_timeout=0.3)
    assert time.monotonic() - began < 4
    assert envd.faults.starts == 1


async def test_a_dropped_stream_is_not_started_again(sbx: AsyncSandbox, envd: EnvdServer) -> None:
    envd.faults.drop_after_start = True
    with anyio.fail_after(30), pytest.raises(SandboxUnreachableException, match="dropped"):
        await sbx.commands.run("sleep 1")
    assert envd.faults.starts == 1
    assert ("GET", "/health", envd.app.requests[-1][2]) == envd.app.requests[-1]  # probed once, after


async def test_a_dropped_stream_of_a_gone_sandbox_says_it_is_not_running(sbx: AsyncSandbox, envd: EnvdServer) -> None:
    envd.faults.drop_after_start = True
    envd.faults.health = (502, b'{"message": "sandbox sbxtest was not found"}')
    with anyio.fail_after(30), pytest.raises(SandboxNotRunningException, match="killed, paused"):
        await sbx.commands.run("sleep 1")
    assert envd.faults.starts == 1


async def test_a_garbage_stream_is_a_clear_sdk_exception(sbx: AsyncSandbox, envd: EnvdServer) -> None:
    envd.faults.garbage_stream = True
    with anyio.fail_after(30), pytest.raises(SandboxException) as caught:
        await sbx.commands.run("true")
    assert type(caught.value) in (UnexpectedResponseException, SandboxException, SandboxUnreachableException)
    assert envd.faults.starts == 1


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        (Code.INVALID_ARGUMENT, "bad", InvalidArgumentException),
        (Code.UNAUTHENTICATED, "who", AuthenticationException),
        (Code.NOT_FOUND, "none", NotFoundException),
        (Code.RESOURCE_EXHAUSTED, "slow down", RateLimitException),
        (Code.DEADLINE_EXCEEDED, "late", TimeoutException),
        (Code.CANCELED, "gone", TimeoutException),
        (Code.UNAVAILABLE, "sandbox sbxtest was not found", SandboxNotRunningException),
        (Code.UNAVAILABLE, "port is not open", SandboxUnreachableException),
        (Code.INTERNAL, "boom", SandboxException),
    ],
)
async def test_connect_codes_map_to_the_sdk_s_exceptions(
    sbx: AsyncSandbox, envd: EnvdServer, sleeps: list[float], code: Code, message: str, expected: type
) -> None:
    envd.faults.errors["List"] = (code, message)
    with pytest.raises(expected) as caught:
        await sbx.commands.list()
    assert type(caught.value) is expected
    assert message in str(caught.value)
    if code is Code.CANCELED:
        assert "paused or killed" in str(caught.value)


async def test_idempotent_calls_are_retried_on_a_busy_answer(
    sbx: AsyncSandbox, envd: EnvdServer, sleeps: list[float]
) -> None:
    envd.faults.errors["List"] = (Code.UNAVAILABLE, "busy")
    envd.faults.error_times["List"] = 2
    assert isinstance(await sbx.commands.list(), list)
    assert envd.faults.calls["List"] == 3 and len(sleeps) == 2
    # A gone sandbox is not retried: the answer would not change.
    envd.faults.errors["List"] = (Code.UNAVAILABLE, "sandbox sbxtest was not found")
    envd.faults.error_times.pop("List")
    with pytest.raises(SandboxNotRunningException):
        await sbx.commands.list()
    assert envd.faults.calls["List"] == 4


async def test_start_is_never_retried(sbx: AsyncSandbox, envd: EnvdServer, sleeps: list[float]) -> None:
    envd.faults.errors["Start"] = (Code.UNAVAILABLE, "busy")
    with pytest.raises(SandboxUnreachableException):
        await sbx.commands.run("true")
    assert envd.faults.starts == 1 and sleeps == []


CTRL_C_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from e2b import AsyncSandbox, ConnectionConfig

    async def main():
        config = ConnectionConfig(api_key="e2b_test", api_url=sys.argv[1])
        sbx = AsyncSandbox("sbxtest", envd_version="0.6.4", connection_config=config)
        await sbx.commands.run("echo started; sleep 60", on_stdout=lambda s: print(s, end="", flush=True))

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
    """
)


@pytest.mark.slow
def test_ctrl_c_ends_run_promptly_and_the_command_keeps_running(envd: EnvdServer) -> None:
    child = subprocess.Popen(
        [sys.executable, "-X", "faulthandler", "-c", CTRL_C_SCRIPT, envd.url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "started\n"
        pid = next(p for p, proc in envd.app.process.procs.items() if "sleep 60" in proc.config.args[-1])
        child.send_signal(signal.SIGINT)
        began = time.monotonic()
        out, err = child.communicate(timeout=30)
        took = time.monotonic() - began
    finally:
        child.kill()
    assert child.returncode == 130, (out, err)
    assert out == "interrupted\n"
    assert "Traceback" not in err
    assert took < PROMPTLY
    assert not envd.app.process.procs[pid].done  # as in e2b 2.x: the remote command goes on
    os.killpg(pid, signal.SIGKILL)


async def test_wait_returns_though_a_loop_over_the_handle_was_left_half_way(sbx: AsyncSandbox) -> None:
    """A loop that took one piece and was neither closed nor read on must not hold the reading that `wait()` needs."""
    # A pause between lines makes each its own piece of output: more pieces than a loop's queue holds.
    handle = await sbx.commands.run("for i in $(seq 300); do echo line $i; sleep 0.002; done", background=True)
    loop = handle.__aiter__()
    await loop.__anext__()
    with anyio.fail_after(30):  # a failure bound: the command ends at once
        result = await handle.wait()
    assert result.stdout.count("\n") == 300
    left = [out async for out, _, _ in loop if out]  # the loop still gets the rest, in order
    assert "".join(left).endswith("line 300\n")
