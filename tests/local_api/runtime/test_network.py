"""slirp4netns connecting a sandbox's own network and its loopback guard: what a failure says, and that it leaves
nothing half made."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2b_local_api.runtime import network
from e2b_local_api.runtime.isolation import Isolation, Mode, probe

from tests.local_api.sandboxes import Envd, RealServer, real_server, wait_for

SLIRP = shutil.which("slirp4netns")
needs_slirp = pytest.mark.skipif(SLIRP is None, reason="slirp4netns is not installed (apt-get install slirp4netns)")
NO_SUCH_PID = 2**22 + 1  # above Linux's largest pid (pid_max is at most 2^22)


@needs_slirp
def test_a_namespace_that_is_not_there_is_a_link_error_in_slirp4netns_s_words() -> None:
    assert SLIRP is not None
    with pytest.raises(network.LinkError) as failed:
        asyncio.run(network.attach(SLIRP, NO_SUCH_PID, 10))
    assert str(failed.value)  # slirp4netns's own words (or its exit status), not an empty message
    assert network.attach_blocking(SLIRP, NO_SUCH_PID, 10)


def test_a_missing_slirp4netns_is_a_link_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "slirp4netns")
    with pytest.raises(network.LinkError, match="does not start"):
        asyncio.run(network.attach(missing, 1, 10))
    assert "does not start" in str(network.attach_blocking(missing, 1, 10))


def test_a_guard_that_cannot_start_is_a_guard_error(tmp_path: Path) -> None:
    with pytest.raises(network.GuardError, match="tc does not start"):
        asyncio.run(network.guard((str(tmp_path / "nsenter"), "tc"), 1, 10))


def test_a_guard_tc_refuses_is_a_guard_error_in_tc_s_words() -> None:
    found = probe()
    if found.guard is None:
        pytest.skip(f"no loopback guard here: {found.unguarded_reason or found.shared_network_reason}")
    # A namespace of its own without tap0 (never the host's: the guard would change its queue).
    holder = subprocess.Popen(["unshare", "--net", "--", "sleep", "60"])
    try:
        wait_for(lambda: os.readlink(f"/proc/{holder.pid}/exe").endswith("sleep"), "the namespace's sleep to run")
        with pytest.raises(network.GuardError, match=r"tc could not set tap0's queue \(.*tap0"):
            asyncio.run(network.guard(found.guard, holder.pid, 10))
    finally:
        holder.kill()
        holder.wait()


def test_no_command_runs_before_the_sandbox_s_network_is_guarded(tmp_path: Path) -> None:
    """A connect during the create hands the sandbox out (its record exists): a command then waits for the start,
    network and guard included (a red-team finding: it ran before tap0's queue was set)."""
    found = probe()
    if found.guard is None:
        pytest.skip(f"no loopback guard here: {found.unguarded_reason or found.shared_network_reason}")
    nsenter, tc = found.guard
    held = tmp_path / "tc"  # the guard's tc, held until the test lets it go
    held.write_text(f'#!/bin/sh\n: > "$0.waiting"\nwhile [ ! -e "$0.go" ]; do sleep 0.01; done\nexec {tc} "$@"\n')
    held.chmod(0o755)
    with real_server(dataclasses.replace(found, guard=(nsenter, str(held)))) as server:
        creating = threading.Thread(target=server.create)
        creating.start()
        wait_for(lambda: (tmp_path / "tc.waiting").exists(), "the create to reach the guard")
        (entry,) = server.runtimes.entries()
        sandbox_id = entry.runtime.sandbox_id
        answer = server.api.post(f"/sandboxes/{sandbox_id}/connect", json={"timeout": 60})
        assert answer.status_code in (200, 201), answer.text
        envd = Envd(server.url, sandbox_id, answer.json()["envdAccessToken"])
        shown: list[bytes] = []
        running = threading.Thread(target=lambda: shown.append(envd.run("tc qdisc show dev tap0")[1]))
        running.start()
        wait_for(lambda: entry.runtime.waiting_for_start == 1, "the command to wait for the sandbox's start")
        assert not entry.runtime.processes
        (tmp_path / "tc.go").touch()
        creating.join(60)
        running.join(60)
    assert shown and b"qdisc htb 1: root" in shown[0], shown


def test_the_start_line_says_when_networked_sandboxes_are_not_guarded() -> None:
    unguarded = Isolation(
        Mode.MAPPED_ROOT, "/usr/bin/bwrap", "/usr/bin/python3", slirp="/usr/bin/slirp4netns", unguarded_reason="no tc"
    )
    said = unguarded.describe_network()
    assert "bound to its tap0 still reach the host's loopback: no tc" in said
    guarded = dataclasses.replace(unguarded, guard=("/usr/bin/nsenter", "/usr/sbin/tc"), unguarded_reason="")
    assert "without the host's loopback" in guarded.describe_network()


def test_bubblewrap_s_info_is_read_whole_or_not_at_all() -> None:
    read, write = os.pipe()
    os.write(write, b'{\n    "child-pid": 4')
    os.write(write, b"2\n}\n")
    assert network.read_info(read, 5) == 42
    os.close(write)
    assert network.read_info(read, 5) is None  # the writer gone before a whole object: no pid
    os.close(read)


# --- a server whose slirp4netns fails: nothing stays half made --------------------------------------


@pytest.fixture
def failing_server(tmp_path: Path) -> Iterator[tuple[RealServer, Path]]:
    """A server whose slirp4netns works once (the first sandbox), then fails; `marker` exists once it failed."""
    found = probe()
    if found.slirp is None:
        pytest.skip(f"networked sandboxes do not go through slirp4netns here: {found.shared_network_reason}")
    script = tmp_path / "slirp4netns"
    script.write_text(
        '#!/bin/sh\nif [ -e "$0.used" ]; then echo "no network here" >&2; exit 1; fi\n'
        f': > "$0.used"\nexec {found.slirp} "$@"\n'
    )
    script.chmod(0o755)
    with real_server(dataclasses.replace(found, slirp=str(script))) as server:
        yield server, tmp_path / "slirp4netns.used"


def _folders(server: RealServer) -> set[str]:
    folder = server.runtimes.state / "sandboxes"
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def _listed(server: RealServer) -> set[str]:
    return {s["sandboxID"] for s in server.api.get("/v2/sandboxes").json()}


def test_a_create_that_cannot_get_its_network_leaves_nothing(failing_server: tuple[RealServer, Path]) -> None:
    server, used = failing_server
    used.touch()  # the first call fails too
    answer = server.api.post("/sandboxes", json={"templateID": "base"})
    assert answer.status_code == 500, answer.text
    assert "could not be given its network: no network here" in answer.json()["message"]
    assert _listed(server) == set() and _folders(server) == set()


def test_a_fork_that_cannot_get_its_network_keeps_no_fork(failing_server: tuple[RealServer, Path]) -> None:
    server, _ = failing_server
    source = server.create()
    answer = server.api.post(f"/sandboxes/{source['sandboxID']}/fork", json={"count": 2})
    assert answer.status_code == 500, answer.text
    assert _listed(server) == {source["sandboxID"]}
    wait_for(lambda: _folders(server) == {source["sandboxID"]}, "the forks' folders to go")
    assert server.envd(source).run("echo still")[1] == b"still\n"


def test_a_cold_resume_that_cannot_get_its_network_is_a_kill(failing_server: tuple[RealServer, Path]) -> None:
    server, _ = failing_server
    sandbox_id = server.create()["sandboxID"]
    assert server.api.post(f"/sandboxes/{sandbox_id}/pause", json={"memory": False}).status_code == 200
    answer = server.api.post(f"/sandboxes/{sandbox_id}/connect", json={"timeout": 60})
    assert answer.status_code == 500, answer.text
    assert answer.json()["message"].endswith("; it was killed")
    assert server.api.get(f"/sandboxes/{sandbox_id}").status_code == 404
    wait_for(lambda: _folders(server) == set(), "its folder to go")
