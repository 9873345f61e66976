"""What a sandbox's processes see and reach: their own pids, files, users and (no) network."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.local_api.sandboxes import RealServer, real_server


@pytest.fixture(scope="module")
def server() -> Iterator[RealServer]:
    with real_server() as running:
        yield running


def test_own_pid_namespace(server: RealServer) -> None:
    envd = server.envd(server.create())
    _, out, _, _ = envd.run("cat /proc/1/comm; ls /proc | grep -c '^[0-9]'")
    first, count = out.decode().splitlines()
    assert first.startswith("python3")  # pid 1 is the sandbox's agent, not the host's init
    assert int(count) <= 4  # the agent, bash, ls, grep: nothing of the host


def test_paths_are_the_sandbox_paths_and_host_files_are_out_of_sight(server: RealServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    envd = server.envd(server.create())
    _, out, _, _ = envd.run(
        "cd ~ && realpath .; ls /root 2>&1 | head -1; test -e /work && echo host-work-visible; "
        "cat /etc/hostname; grep -c . /etc/passwd; touch /usr/x 2>/dev/null || echo usr-read-only"
    )
    lines = out.decode().splitlines()
    assert lines[0] == "/home/user"
    assert "Permission denied" in lines[1]  # user cannot read root's home
    assert "host-work-visible" not in lines
    assert lines[2] == "e2b.local" and int(lines[3]) == 3 and lines[-1] == "usr-read-only"


def test_root_inside_is_not_root_outside(server: RealServer) -> None:
    if not server.runtimes.isolation.has_root:
        pytest.skip("an unprivileged server has no root inside its sandboxes")
    envd = server.envd(server.create())
    body = {
        "process": {
            "cmd": "/bin/bash",
            "args": [
                "-c",
                "id -u; mount -o remount,rw /usr 2>&1 || echo refused; "
                "f=/proc/sys/kernel/printk_ratelimit; v=$(cat $f); (echo $v > $f) 2>/dev/null || echo sysctl-refused",
            ],
        },
        "stdin": False,
    }
    import base64

    from tests.local_api.sandboxes import decode

    root = base64.b64encode(b"root:").decode()
    with envd.stream("Start", body, Authorization=f"Basic {root}") as events:
        out = b"".join(
            decode(e["data"].get("stdout", "")) + decode(e["data"].get("stderr", "")) for e in events if "data" in e
        )
    text = out.decode()
    assert text.startswith("0\n")
    assert "refused" in text and "sysctl-refused" in text


def test_no_network_without_internet_access(server: RealServer) -> None:
    envd = server.envd(server.create(allow_internet_access=False))
    _, out, _, _ = envd.run("ls /sys/class/net 2>/dev/null | tr '\\n' ' '; cat /proc/net/dev | grep -c ':'")
    # Only the loopback device: nothing leaves the sandbox (and the server's port is out of reach).
    assert out.decode().split()[-1] == "1"
    _, out, _, _ = envd.run(
        f"exec 3<>/dev/tcp/127.0.0.1/{server.url.rsplit(':', 1)[1]} && echo reached || echo unreachable"
    )
    assert out == b"unreachable\n"


def test_one_sandbox_cannot_see_or_signal_another(server: RealServer) -> None:
    a, b = server.envd(server.create()), server.envd(server.create())
    with b.stream("Start", {"process": {"cmd": "/bin/sleep", "args": ["300"]}, "stdin": False}) as events:
        pid_in_b = int(next(events)["start"]["pid"])
        _, out, _, _ = a.run(f"pgrep -c sleep || true; kill -9 {pid_in_b} 2>&1 || echo cannot")
        assert out.decode().splitlines()[0] == "0"
        # The pid names a process of a's own namespace, if any: b's sleep is out of reach.
        assert pid_in_b in [int(p["pid"]) for p in b.call("List", {})["processes"]]
        b.call("SendSignal", {"process": {"pid": pid_in_b}, "signal": "SIGNAL_SIGKILL"})
