"""Data-plane calls of the released `e2b` SDK, run by its own interpreter against a local server.

`python -I released_commands.py --url URL --api-key KEY GROUP`: both E2B_API_URL
and E2B_SANDBOX_URL are URL, as docs/users/local-server.md says. Each group
asserts what it sees and prints one JSON line: the group and how many SDK calls
of each kind it made. Nothing here imports this repository.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

CALLS: Counter[str] = Counter()


def sdk() -> Any:
    """The released `e2b`, imported at run time and typed Any: mypy checks this file against this
    repository's SDK, which is not the one that runs it."""
    return importlib.import_module("e2b")


def count(kind: str) -> None:
    CALLS[kind] += 1


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def commands() -> None:
    e2b = sdk()
    CommandExitException, Sandbox, TimeoutException = e2b.CommandExitException, e2b.Sandbox, e2b.TimeoutException

    sandbox = Sandbox.create(timeout=120, envs={"FROM_CREATE": "yes"})
    try:
        out: list[str] = []
        err: list[str] = []
        result = sandbox.commands.run(
            "echo $FROM_CREATE $OWN; echo oops >&2; pwd",
            envs={"OWN": "mine"},
            cwd="/tmp",
            on_stdout=out.append,
            on_stderr=err.append,
        )
        count("run")
        assert result.exit_code == 0 and result.stdout == "yes mine\n/tmp\n", result
        assert "".join(out) == result.stdout and "".join(err) == "oops\n"
        assert sandbox.commands.run("id -un", user="root").stdout == "root\n"
        assert sandbox.commands.run("id -un").stdout == "user\n"
        count("run")
        count("run")
        try:
            sandbox.commands.run("echo bad >&2; exit 3")
            raise AssertionError("a non-zero exit must raise")
        except CommandExitException as exit_error:
            assert exit_error.exit_code == 3 and exit_error.stderr == "bad\n"
        count("run")
        try:
            sandbox.commands.run("sleep 30", timeout=1)
            raise AssertionError("the command's timeout must raise")
        except TimeoutException:
            pass
        count("run")

        background = sandbox.commands.run("sleep 300", background=True)
        count("run")
        listed = sandbox.commands.list()
        count("list")
        assert background.pid in [p.pid for p in listed], listed
        assert sandbox.commands.kill(background.pid) is True
        count("kill")
        assert sandbox.commands.kill(99999) is False
        count("kill")

        reader = sandbox.commands.run("read a; read b; echo got $a $b; cat", background=True, stdin=True)
        count("run")
        sandbox.commands.send_stdin(reader.pid, "one\n")
        reader.send_stdin("two\n")
        sandbox.commands.stream_input(reader.pid, iter(["three ", b"four"]))
        count("send_stdin")
        count("send_stdin")
        count("stream_input")
        reader.close_stdin()
        count("close_stdin")
        done = reader.wait()
        assert done.stdout == "got one two\nthree four", done

        waiting = sandbox.commands.run("read x; echo after $x", background=True, stdin=True)
        count("run")
        again = sandbox.commands.connect(waiting.pid)
        count("connect")
        sandbox.commands.send_stdin(waiting.pid, "connect\n")
        count("send_stdin")
        assert again.wait().stdout == "after connect\n"
    finally:
        sandbox.kill()


def pty() -> None:
    e2b = sdk()
    PtySize, Sandbox = e2b.PtySize, e2b.Sandbox

    sandbox = Sandbox.create(timeout=120)
    try:
        terminal = sandbox.pty.create(PtySize(rows=24, cols=80))
        count("pty.create")
        output = bytearray()

        def read_until(marker: bytes) -> None:
            for _, _, chunk in terminal:
                if chunk:
                    output.extend(chunk)
                    if marker in output:
                        del output[: output.index(marker) + len(marker)]
                        return
            raise AssertionError(f"{marker!r} never came")

        sandbox.pty.send_stdin(terminal.pid, b"stty size\n")
        count("pty.send_stdin")
        read_until(b"24 80")
        sandbox.pty.resize(terminal.pid, PtySize(rows=40, cols=120))
        count("pty.resize")
        sandbox.pty.send_stdin(terminal.pid, b"stty size\n")
        count("pty.send_stdin")
        read_until(b"40 120")
        terminal.disconnect()
        follower = sandbox.pty.connect(terminal.pid)
        count("pty.connect")
        sandbox.pty.send_stdin(terminal.pid, b"echo $((6*7))\n")
        count("pty.send_stdin")
        terminal = follower
        read_until(b"42")
        assert sandbox.pty.kill(terminal.pid) is True
        count("pty.kill")
    finally:
        sandbox.kill()


def lifecycle() -> None:
    e2b = sdk()
    Sandbox, TimeoutException = e2b.Sandbox, e2b.TimeoutException

    sandbox = Sandbox.create(timeout=120)
    counter = sandbox.commands.run(
        "i=0; while true; do i=$((i+1)); echo $i > /tmp/n.new; mv /tmp/n.new /tmp/n; sleep 0.02; done", background=True
    )
    count("run")
    # The background run returns once the process starts, before its first write: until then
    # there is no /tmp/n, and `cat` alone would exit 1 and raise.
    wait_until(
        lambda: int(sandbox.commands.run("cat /tmp/n 2>/dev/null || true").stdout or 0) > 3, "the counter to count"
    )
    sandbox.pause()
    count("pause")
    resumed = Sandbox.connect(sandbox.sandbox_id)
    count("connect")
    before = int(resumed.commands.run("cat /tmp/n").stdout)
    wait_until(lambda: int(resumed.commands.run("cat /tmp/n").stdout) > before + 3, "the counter to go on")
    assert counter.pid in [p.pid for p in resumed.commands.list()]
    count("list")

    handle = resumed.commands.run("sleep 300", background=True)
    count("run")
    resumed.kill()
    count("kill")
    try:
        handle.wait()
        raise AssertionError("a command of a killed sandbox must raise")
    except TimeoutException as killed:
        assert "killed" in str(killed), killed


def async_commands() -> None:
    AsyncSandbox = sdk().AsyncSandbox

    async def main() -> None:
        sandbox = await AsyncSandbox.create(timeout=120)
        try:
            seen: list[str] = []
            result = await sandbox.commands.run("echo a; echo b", on_stdout=seen.append)
            count("async.run")
            assert result.stdout == "a\nb\n" and "".join(seen) == "a\nb\n"
            handle = await sandbox.commands.run("cat", background=True, stdin=True)
            count("async.run")
            await sandbox.commands.send_stdin(handle.pid, "echoed")
            count("async.send_stdin")
            await sandbox.commands.close_stdin(handle.pid)
            count("async.close_stdin")
            assert (await handle.wait()).stdout == "echoed"
        finally:
            await sandbox.kill()

    asyncio.run(main())


GROUPS: dict[str, Callable[[], None]] = {
    "commands": commands,
    "pty": pty,
    "lifecycle": lifecycle,
    "async_commands": async_commands,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--api-key")
    parser.add_argument("group", choices=list(GROUPS))
    args = parser.parse_args()
    os.environ["E2B_API_URL"] = os.environ["E2B_SANDBOX_URL"] = args.url
    os.environ["E2B_API_KEY"] = args.api_key
    GROUPS[args.group]()
    print(json.dumps({"group": args.group, "calls": dict(CALLS)}), flush=True)
    # No interpreter finalization, as in tests/conformance/released_calls.py: a read the released SDK's
    # pyqwest client still has in flight may call into the interpreter as it shuts down, which aborts it.
    os._exit(0)


if __name__ == "__main__":
    main()
