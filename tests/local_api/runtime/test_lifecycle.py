"""The lifecycle is real: pause freezes, resume continues, kill and timeout end everything, files are copied."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.local_api.sandboxes import RealServer, StreamEnded, alive_named, real_server, wait_for


@pytest.fixture(scope="module")
def server() -> Iterator[RealServer]:
    with real_server() as running:
        yield running


def counter(server: RealServer, sandbox_id: str) -> Path:
    return server.runtimes.state / "sandboxes" / sandbox_id / "home" / "user" / "count"


def read_count(path: Path) -> int:
    try:
        return int(path.read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


COUNTER = "i=0; while true; do i=$((i+1)); echo $i > count.tmp; mv count.tmp count; sleep 0.02; done"


def test_pause_freezes_every_process_and_resume_continues(server: RealServer) -> None:
    sandbox = server.create()
    sandbox_id, envd = sandbox["sandboxID"], server.envd(sandbox)
    path = counter(server, sandbox_id)
    # One counter in the foreground, one that left for its own session: both must stop.
    body = {
        "process": {
            "cmd": "/bin/bash",
            "args": ["-c", f"setsid bash -c '{COUNTER.replace('count', 'other')}' & {COUNTER}"],
        },
        "stdin": False,
    }
    other = path.with_name("other")
    with pytest.raises(StreamEnded) as ended, envd.stream("Start", body) as events:
        next(events)
        wait_for(lambda: read_count(path) > 3 and read_count(other) > 3, "both counters to count")
        assert server.api.post(f"/sandboxes/{sandbox_id}/pause", json={}).status_code == 200
        list(events)
    assert ended.value.code == "canceled"  # the pause ended the open stream
    frozen, frozen_other = read_count(path), read_count(other)
    runtime = server.runtimes.get(sandbox_id)
    assert runtime is not None
    # Stopped, or a zombie: a counter's `sleep` or `mv` that exited just as the freeze came is
    # never reaped while its parent is stopped, and a zombie runs nothing (7 runs in 35 saw one).
    assert {_state(pid) for pid in runtime.runtime.members()} <= {"T", "Z"}
    # Stopped means stopped: half a second later (25 ticks of a running counter), the same counts.
    # A fixed wait is right here: it checks that nothing happens, and cannot fail by being slow.
    time.sleep(0.5)
    assert (read_count(path), read_count(other)) == (frozen, frozen_other)
    # Data-plane calls to a paused sandbox get the proxy's answer.
    response = envd.unary("List", {})
    assert response.status_code == 502 and "paused" in response.json()["message"]
    assert server.api.post(f"/sandboxes/{sandbox_id}/connect", json={"timeout": 60}).status_code == 201
    wait_for(lambda: read_count(path) > frozen + 3 and read_count(other) > frozen_other + 3, "both counters to go on")
    assert len(envd.call("List", {})["processes"]) == 1  # the same process, continued


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "T"  # gone


def test_pause_asks_the_agent_and_is_refused_when_it_does_not_answer(server: RealServer) -> None:
    sandbox = server.create()
    entry = server.runtimes.get(sandbox["sandboxID"])
    assert entry is not None and entry.runtime.agent_pid is not None
    os.kill(entry.runtime.agent_pid, signal.SIGSTOP)
    try:
        refused = server.api.post(f"/sandboxes/{sandbox['sandboxID']}/pause", json={})
        assert refused.status_code == 503, refused.text
        assert "did not answer" in refused.json()["message"]
        assert server.api.get(f"/sandboxes/{sandbox['sandboxID']}").json()["state"] == "running"
        forced = server.api.post(f"/sandboxes/{sandbox['sandboxID']}/pause", json={"force": True})
        assert forced.status_code == 200 and forced.json()["forced"] is True
    finally:
        os.kill(entry.runtime.agent_pid, signal.SIGCONT)


def test_the_fault_control_still_refuses_a_pause(server: RealServer) -> None:
    sandbox = server.create()
    response = server.api.patch(f"/_local/sandboxes/{sandbox['sandboxID']}", json={"agent_unresponsive": True})
    assert response.status_code == 200, response.text
    refused = server.api.post(f"/sandboxes/{sandbox['sandboxID']}/pause", json={})
    assert refused.status_code == 503 and refused.json()["code"] == 503


def test_kill_while_a_command_runs_ends_the_stream_and_every_process(server: RealServer) -> None:
    sandbox = server.create()
    envd = server.envd(sandbox)
    body = {"process": {"cmd": "/bin/bash", "args": ["-c", "setsid sleep 301 & sleep 302"]}, "stdin": False}
    with pytest.raises(StreamEnded) as ended, envd.stream("Start", body) as events:
        next(events)
        entry = server.runtimes.get(sandbox["sandboxID"])
        assert entry is not None
        members = wait_for(lambda: len(entry.runtime.members()) >= 3 and entry.runtime.members(), "the sleeps")
        assert server.api.delete(f"/sandboxes/{sandbox['sandboxID']}").status_code == 204
        list(events)
    assert ended.value.code == "unavailable" and "was not found" in ended.value.message
    wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in members), "every process of the sandbox to end")


def test_timeout_kills_the_sandbox(server: RealServer) -> None:
    sandbox = server.create(timeout=1)
    envd = server.envd(sandbox)
    with (
        pytest.raises(StreamEnded) as ended,
        envd.stream("Start", {"process": {"cmd": "/bin/sleep", "args": ["300"]}}) as events,
    ):
        next(events)
        list(events)
    assert ended.value.code == "unavailable"
    assert server.runtimes.get(sandbox["sandboxID"]) is None


def test_snapshot_and_fork_start_with_a_copy_of_the_files(server: RealServer) -> None:
    sandbox = server.create()
    envd = server.envd(sandbox)
    envd.run("echo kept > /home/user/note; sleep 300 >/dev/null 2>&1 &")
    snapshot = server.api.post(f"/sandboxes/{sandbox['sandboxID']}/snapshots", json={})
    assert snapshot.status_code == 201, snapshot.text
    envd.run("echo later > /home/user/note")
    from_snapshot = server.create(templateID=snapshot.json()["snapshotID"])
    _, out, _, _ = server.envd(from_snapshot).run("cat note; pgrep -c sleep || true")
    assert out == b"kept\n0\n"  # the files, not the processes
    forks = server.api.post(f"/sandboxes/{sandbox['sandboxID']}/fork", json={"count": 1})
    assert forks.status_code == 201, forks.text
    fork = forks.json()[0]["sandbox"]
    assert server.envd(fork).run("cat note")[1] == b"later\n"


def test_a_filesystem_only_pause_resumes_with_the_files_and_no_process(server: RealServer) -> None:
    sandbox = server.create(timeout=120)
    envd = server.envd(sandbox)
    envd.run("echo kept > note; sleep 300 >/dev/null 2>&1 &")
    with envd.stream("Start", {"process": {"cmd": "/bin/sleep", "args": ["301"]}, "stdin": False}) as events:
        next(events)
    assert len(envd.call("List", {})["processes"]) == 1
    assert server.api.post(f"/sandboxes/{sandbox['sandboxID']}/pause", json={"memory": False}).status_code == 200
    assert server.api.post(f"/sandboxes/{sandbox['sandboxID']}/connect", json={"timeout": 60}).status_code == 201
    assert envd.call("List", {}) == {}  # a cold boot: the processes are gone
    assert envd.run("cat note; pgrep -c sleep || true")[1] == b"kept\n0\n"


def test_pause_freezes_a_nested_pid_namespace_too(server: RealServer) -> None:
    """A process in a pid namespace of the sandbox's own making is not in the sandbox's namespace: the pause
    found it by namespace and left it running (a red-team finding)."""
    sandbox = server.create()
    sandbox_id, envd = sandbox["sandboxID"], server.envd(sandbox)
    _, out, _, _ = envd.run("unshare -Urpf true && echo nests")
    if out != b"nests\n":
        pytest.skip("this kernel lets no user namespace be made inside a sandbox")
    name = f"e2b-nested-{sandbox_id}"
    envd.run(f"nohup unshare -Urpf bash -c 'exec -a {name} sleep 1000' >/dev/null 2>&1 &")
    (nested,) = wait_for(lambda: alive_named(name), "the nested sleep")
    assert os.readlink(f"/proc/{nested}/ns/pid") != os.readlink(f"/proc/{os.getpid()}/ns/pid")
    assert server.api.post(f"/sandboxes/{sandbox_id}/pause", json={}).status_code == 200
    assert _state(nested) == "T"
    assert server.api.post(f"/sandboxes/{sandbox_id}/connect", json={"timeout": 60}).status_code == 201
    wait_for(lambda: _state(nested) == "S", "the nested sleep to go on")
    assert server.api.delete(f"/sandboxes/{sandbox_id}").status_code == 204
    wait_for(lambda: not alive_named(name), "the nested sleep to end with its sandbox")
