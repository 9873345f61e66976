"""Random kills and pauses while commands stream: every stream ends, no process survives.

Each round starts a few sandboxes whose command streams without end, follows
each stream from a thread, then, in a seeded random order, kills some, pauses
and resumes others, pauses some and kills them paused. A stream must end
(`unavailable` for a kill, `canceled` for a pause) within a bound, never hang;
at the end, every process of every sandbox is gone. `nox -s stress` runs this
beside busy cores.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.local_api.sandboxes import Envd, RealServer, StreamEnded, real_server, wait_for

SANDBOXES = 4
STREAM_BOUND = 30.0  # seconds for a stream to end after its sandbox was killed or paused


@pytest.fixture(scope="module")
def server() -> Iterator[RealServer]:
    with real_server() as running:
        yield running


class Follower(threading.Thread):
    """Reads one sandbox's endless stream until it ends; records how."""

    def __init__(self, envd: Envd) -> None:
        super().__init__(daemon=True)
        self.envd = envd
        self.started = threading.Event()
        self.ended = threading.Event()
        self.code: str | None = None

    def run(self) -> None:
        body = {"process": {"cmd": "/bin/bash", "args": ["-c", "while true; do echo tick; sleep 0.01; done"]}}
        try:
            with self.envd.stream("Start", {**body, "stdin": False}) as events:
                for event in events:
                    if "data" in event:
                        self.started.set()
        except StreamEnded as error:
            self.code = error.code
        finally:
            self.ended.set()


def follow(server: RealServer) -> tuple[str, Follower]:
    sandbox = server.create(timeout=300)
    follower = Follower(server.envd(sandbox))
    follower.start()
    assert follower.started.wait(STREAM_BOUND), "the stream never carried output"
    return sandbox["sandboxID"], follower


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_kills_and_pauses_while_streaming(server: RealServer, seed: int) -> None:
    chance = random.Random(seed)
    followed = [follow(server) for _ in range(SANDBOXES)]
    members = {
        sandbox_id: list(entry.runtime.members())
        for sandbox_id, _ in followed
        if (entry := server.runtimes.get(sandbox_id)) is not None
    }
    for sandbox_id, follower in chance.sample(followed, len(followed)):
        action = chance.choice(["kill", "pause-resume", "pause-kill"])
        if action == "kill":
            assert server.api.delete(f"/sandboxes/{sandbox_id}").status_code == 204
            assert follower.ended.wait(STREAM_BOUND), f"{sandbox_id}: the stream outlived the kill"
            assert follower.code == "unavailable"
            continue
        assert server.api.post(f"/sandboxes/{sandbox_id}/pause", json={}).status_code == 200
        assert follower.ended.wait(STREAM_BOUND), f"{sandbox_id}: the stream outlived the pause"
        assert follower.code == "canceled"
        if action == "pause-resume":
            assert server.api.post(f"/sandboxes/{sandbox_id}/connect", json={"timeout": 60}).status_code == 201
            # The command goes on: it is listed, and a new follower gets its output.
            again = Follower(server.envd(server.api.get(f"/sandboxes/{sandbox_id}").json()))
            pids = [int(p["pid"]) for p in again.envd.call("List", {})["processes"]]
            assert len(pids) == 1
            with again.envd.stream("Connect", {"process": {"pid": pids[0]}}) as events:
                next(events)
                assert "data" in next(events)
        assert server.api.delete(f"/sandboxes/{sandbox_id}").status_code == 204
    every = [pid for pids in members.values() for pid in pids]
    wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in every), "every sandbox process to end")
