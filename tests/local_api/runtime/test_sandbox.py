"""One sandbox's process tree (runtime/sandbox.py): the per-sandbox process limit under concurrent spawns,
command lines too long to pass, and an agent that dies by itself.

The spawns are made in one event loop tick: each is past its checks and waiting
for the agent's answer before any answer is read, the case where every one of
them used to pass the limit.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from e2b_local_api.runtime import isolation, sandbox
from e2b_local_api.runtime.isolation import host_id, resolv_conf
from e2b_local_api.runtime.layout import Layout
from e2b_local_api.runtime.processes import ManagedProcess
from e2b_local_api.runtime.sandbox import SandboxError, SandboxRuntime, Spawn

from tests.local_api.sandboxes import RealServer, StreamEnded, real_server, wait_for

LIMIT = 3
DEADLINE = 10.0  # bounds a failure only


@pytest.fixture
def layout() -> Iterator[Layout]:
    """A sandbox folder under the system's temporary folder, which the sandbox's root can traverse (pytest's not)."""
    folder = Path(tempfile.mkdtemp(prefix="e2b-sandbox-test-"))
    folder.chmod(0o711)
    yield Layout(folder / "sandbox")
    shutil.rmtree(folder, ignore_errors=True)


def waiting_cat() -> Spawn:
    """A process that stays until its stdin closes: it holds its slot for the whole test."""
    return Spawn("/bin/cat", (), {}, None, "user", True, None, None, None)


def test_concurrent_spawns_past_the_limit_are_refused(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    found = isolation.probe()
    if not found.available:
        pytest.skip(f"sandboxes cannot run processes on this machine: {found.reason}")
    monkeypatch.setattr(sandbox, "MAX_PROCESSES", LIMIT)
    layout.create(resolv_conf=resolv_conf(found, False), host_id=lambda inside: host_id(found.mode, inside))

    async def run() -> tuple[list[ManagedProcess | BaseException], int]:
        runtime = SandboxRuntime("limit", layout=layout, isolation=found, env_vars={}, network=False)
        try:
            await runtime.start()
            failed = Spawn("/no/such/command", (), {}, None, "user", False, None, None, None)
            with pytest.raises(SandboxError) as refused:
                await asyncio.wait_for(runtime.spawn(failed), DEADLINE)
            assert refused.value.kind == "invalid_argument"  # and its slot is given back
            burst = [runtime.spawn(waiting_cat()) for _ in range(LIMIT + 2)]
            first = await asyncio.wait_for(asyncio.gather(*burst, return_exceptions=True), DEADLINE)
            # With one process gone, one more may start.
            started = [p for p in first if isinstance(p, ManagedProcess)]
            started[0].close_stdin()
            await asyncio.wait_for(started[0].done.wait(), DEADLINE)
            await asyncio.wait_for(runtime.spawn(waiting_cat()), DEADLINE)
            return first, len(runtime.processes)
        finally:
            runtime.kill()
            await runtime.wait_ended()

    first, running = asyncio.run(run())
    assert sum(isinstance(p, ManagedProcess) for p in first) == LIMIT
    refusals = [p for p in first if not isinstance(p, ManagedProcess)]
    assert [(type(r), getattr(r, "kind", None)) for r in refusals] == [(SandboxError, "resource_exhausted")] * 2
    assert running == LIMIT


@pytest.fixture(scope="module")
def server() -> Iterator[RealServer]:
    with real_server() as running:
        yield running


@pytest.mark.parametrize(
    ("process", "what"),
    [
        ({"cmd": "/bin/bash", "args": ["-c", "echo " + "a" * 1_100_000 + " | wc -c"]}, "argument 2 takes"),
        ({"cmd": "/bin/true", "envs": {"BIG": "a" * 1_100_000}}, "environment variable 'BIG' takes"),
        # Each under Linux's limit for one argument, together more than one message to the agent holds.
        ({"cmd": "/bin/true", "args": ["a" * 100_000] * 3}, "the command and its environment take"),
    ],
    ids=["argument", "environment", "total"],
)
def test_a_command_line_too_long_is_refused_and_the_sandbox_goes_on(
    server: RealServer, process: dict[str, Any], what: str
) -> None:
    envd = server.envd(server.create())
    with pytest.raises(StreamEnded) as refused, envd.stream("Start", {"process": process}) as events:
        list(events)
    assert refused.value.code == "invalid_argument"
    assert refused.value.message.startswith("argument list too long: ") and what in refused.value.message
    assert "through a file" in refused.value.message
    assert envd.run("echo alive")[1:3] == (b"alive\n", b"")


def test_a_sandbox_whose_agent_is_killed_ends_as_a_kill_ends_it(server: RealServer) -> None:
    sandbox = server.create()
    sandbox_id, envd = sandbox["sandboxID"], server.envd(sandbox)
    entry = server.runtimes.get(sandbox_id)
    assert entry is not None and entry.runtime.agent_pid is not None
    with (
        pytest.raises(StreamEnded) as ended,
        envd.stream("Start", {"process": {"cmd": "/bin/sleep", "args": ["300"]}}) as events,
    ):
        next(events)
        os.kill(entry.runtime.agent_pid, signal.SIGKILL)  # the sandbox's pid 1, from the host
        list(events)
    assert ended.value.code == "unavailable" and "its agent" in ended.value.message
    assert entry.runtime.state == "gone" and server.runtimes.get(sandbox_id) is None
    wait_for(lambda: server.api.get(f"/sandboxes/{sandbox_id}").status_code == 404, "the record to be removed")
    listed = server.api.get("/v2/sandboxes", params={"state": ["running", "paused"]})
    assert listed.status_code == 200 and sandbox_id not in {s["sandboxID"] for s in listed.json()}
    health = httpx.get(f"{server.url}/health", headers=envd.headers(), timeout=30)
    assert health.status_code == 502 and "was not found" in health.text


@pytest.mark.parametrize("swapped", ["root", "etc"])
def test_a_bound_folder_swapped_for_a_link_is_never_bound(layout: Layout, swapped: str, tmp_path: Path) -> None:
    """A sandbox's `/root` replaced on the host by a link to a host folder (the files service now refuses to
    do it; an old server's state, or another path, might): the sandbox does not start, and nothing of the
    host folder is reached."""
    found = isolation.probe()
    if not found.available:
        pytest.skip(f"sandboxes cannot run processes on this machine: {found.reason}")
    layout.create(resolv_conf=resolv_conf(found, False), host_id=lambda inside: host_id(found.mode, inside))
    host_folder = tmp_path / "host"
    host_folder.mkdir()
    (layout.root / swapped).rename(layout.root / "aside")
    (layout.root / swapped).symlink_to(host_folder)

    async def start() -> SandboxError:
        runtime = SandboxRuntime("swapped", layout=layout, isolation=found, env_vars={}, network=False)
        with pytest.raises(SandboxError) as refused:
            await runtime.start()
        await runtime.wait_ended()
        return refused.value

    error = asyncio.run(start())
    assert error.kind == "failed_precondition"
    assert str(error) == f"sandbox swapped could not start: the sandbox's /{swapped} is not a folder: Not a directory"
    assert list(host_folder.iterdir()) == []


def test_the_bound_folders_are_opened_without_following_a_link(layout: Layout) -> None:
    layout.create(resolv_conf="", host_id=lambda inside: inside)
    assert layout.root.stat().st_mode & 0o777 == 0o700  # the server user's alone: see layout.PRIVATE
    opened = layout.open_bound()
    try:
        assert sorted(opened) == ["etc", "home", "root", "tmp"]
        for name, fd in opened.items():
            assert os.path.samestat(os.fstat(fd), (layout.root / name).stat())
    finally:
        for fd in opened.values():
            os.close(fd)
    (layout.root / "tmp").rmdir()
    with pytest.raises(NotADirectoryError, match=r"^the sandbox's /tmp is not a folder: No such file or directory$"):
        layout.open_bound()
