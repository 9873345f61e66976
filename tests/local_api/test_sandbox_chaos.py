"""The stress round of `nox -s stress`: random sandbox kills, pauses and server SIGTERMs while commands stream.

Each run starts `e2b-local-api` in a process of its own, creates a few sandboxes
with this repository's SDK, starts in each a command that streams without end
(followed by a thread waiting on its handle) and a foreground command, then, in an
order and at moments drawn from the run's seed, kills some sandboxes, pauses others
(resuming some and killing them after), and in some runs sends the server SIGTERM
in the middle. Every call must end within STREAM_BOUND of what ended it, and once
the server has exited no process of any sandbox (the server's descendants, read
from /proc) may be left. tests/stress.py sets E2B_STRESS_DATAPLANE_RUNS; the normal
suite skips it (a run takes seconds, the round dozens of them).
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.conformance.server_process import ServerProcess, alive, start_server, stop_server

RUNS = int(os.environ.get("E2B_STRESS_DATAPLANE_RUNS") or 0)
SANDBOXES = 3
STREAM_BOUND = 20.0  # seconds for a call to end after its sandbox was killed or paused, or the server stopped
EXIT_BOUND = 30.0  # seconds for the server to exit after SIGTERM, and for its sandboxes' processes to be gone
STREAM = "while true; do echo tick; sleep 0.01; done"
API_KEY = "e2b_local_dev_key"


class Call(threading.Thread):
    """One SDK call that blocks while a command streams; records when and how it ended."""

    def __init__(self, what: str, body: Callable[[], Any]) -> None:
        super().__init__(daemon=True, name=what)
        self.what = what
        self.body = body
        self.ended_at: float | None = None
        self.outcome = ""
        self.done = threading.Event()

    def run(self) -> None:
        try:
            self.body()
            self.outcome = "returned"
        except Exception as err:  # every ending is recorded; which ones are right is the test's to say
            self.outcome = f"{type(err).__name__}: {err}"
        finally:
            self.ended_at = time.monotonic()
            self.done.set()


def sdk(server: ServerProcess, monkeypatch: pytest.MonkeyPatch) -> Any:
    """This repository's SDK, pointed at the server as the released SDK's users point theirs."""
    for name, value in (("E2B_API_URL", server.url), ("E2B_SANDBOX_URL", server.url), ("E2B_API_KEY", API_KEY)):
        monkeypatch.setenv(name, value)
    import e2b

    return e2b


def streaming(e2b: Any) -> tuple[Any, list[Call]]:
    """A sandbox with a background command and a foreground one streaming, each followed by a thread."""
    sandbox = e2b.Sandbox.create(timeout=300)
    handle = sandbox.commands.run(STREAM, background=True)
    calls = [
        Call(f"{sandbox.sandbox_id} background wait", handle.wait),
        Call(f"{sandbox.sandbox_id} foreground run", lambda: sandbox.commands.run(STREAM, timeout=0)),
    ]
    for call in calls:
        call.start()
    return sandbox, calls


def wait_for(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.skipif(not RUNS, reason="a round of `nox -s stress` (E2B_STRESS_DATAPLANE_RUNS)")
@pytest.mark.parametrize("number", range(max(RUNS, 1)))
def test_random_kills_pauses_and_sigterms_while_commands_stream(number: int, monkeypatch: pytest.MonkeyPatch) -> None:
    chance = random.Random(number)
    server = start_server()
    try:
        e2b = sdk(server, monkeypatch)
        started = [streaming(e2b) for _ in range(SANDBOXES)]
        every_call = [call for _, calls in started for call in calls]
        # Both commands of each sandbox run: the server's descendants now include them.
        assert wait_for(lambda: len(server.descendants()) > 2 * SANDBOXES, STREAM_BOUND), "the commands never started"
        sigterm_after = chance.randrange(SANDBOXES + 1) if number % 2 else None  # every other run: SIGTERM somewhere
        for index, (sandbox, calls) in enumerate(chance.sample(started, len(started))):
            if index == sigterm_after:
                break
            action = chance.choice(["kill", "pause", "pause-resume-kill"])
            time.sleep(chance.uniform(0, 0.3))  # streams are mid-output at any moment
            acted = time.monotonic()
            if action == "kill":
                sandbox.kill()
            else:
                sandbox.pause()
            for call in calls:
                assert call.done.wait(STREAM_BOUND), f"run {number}: {call.what} outlived the {action}"
                assert call.outcome != "returned", f"run {number}: {call.what} returned after the {action}"
                assert call.ended_at is not None and call.ended_at - acted < STREAM_BOUND
            if action == "pause-resume-kill":
                e2b.Sandbox.connect(sandbox.sandbox_id, timeout=60)
                assert [p for p in sandbox.commands.list() if STREAM in p.args[-1]], (
                    "the resumed sandbox lost its commands"
                )
                sandbox.kill()
        descendants = server.descendants()
        signalled = time.monotonic()
        status = stop_server(server, EXIT_BOUND)  # SIGTERM: mid-stream for the sandboxes not yet acted on
        assert time.monotonic() - signalled < EXIT_BOUND, f"run {number}: the server took too long to exit"
        assert status in (0, -15, 143), f"run {number}: the server exited {status} on SIGTERM"
        for call in every_call:
            assert call.done.wait(STREAM_BOUND), f"run {number}: {call.what} outlived the server"
        assert wait_for(lambda: not alive(descendants), EXIT_BOUND), (
            f"run {number}: processes outlived the server: {sorted(alive(descendants))}"
        )
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()
