"""envd's process service over the wire: streams, input, signals, terminals, errors, bounds."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from e2b_local_api.runtime import processes, sandbox

from tests.local_api.sandboxes import Envd, RealServer, StreamEnded, decode, real_server, wait_for


@pytest.fixture(scope="module")
def server() -> Iterator[RealServer]:
    with real_server() as running:
        yield running


@pytest.fixture
def envd(server: RealServer) -> Envd:
    return server.envd(server.create(envVars={"FROM_CREATE": "yes"}, timeout=300))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def pids(envd: Envd) -> list[int]:
    return [int(p["pid"]) for p in envd.call("List", {}).get("processes", [])]


def test_stream_starts_with_the_pid_and_ends_with_the_exit(envd: Envd) -> None:
    pid, out, err, end = envd.run("echo out; echo err >&2; exit 0")
    assert pid > 1
    assert (out, err) == (b"out\n", b"err\n")
    # proto3 JSON leaves defaults out: exit code 0 and no error are absent.
    assert end == {"exited": True, "status": "exit status 0"}


def test_non_zero_exit_and_signals_as_envd_reports_them(envd: Envd) -> None:
    assert envd.run("exit 7")[3] == {"exitCode": 7, "exited": True, "status": "exit status 7", "error": "exit status 7"}
    end = envd.run("kill -TERM $$")[3]
    assert end == {"exitCode": -1, "status": "signal: terminated", "error": "signal: terminated"}


def test_environment_user_and_working_directory(envd: Envd) -> None:
    command = "echo $FROM_CREATE $OWN $HOME $USER; id -un; pwd"
    process = {"cmd": "/bin/bash", "args": ["-l", "-c", command], "envs": {"OWN": "mine"}, "cwd": "/tmp"}
    _, out, _, _ = envd.run(command, process=process)
    assert out == b"yes mine /home/user user\nuser\n/tmp\n"
    root = base64.b64encode(b"root:").decode()
    body = {"process": {"cmd": "/bin/bash", "args": ["-c", "id -u; pwd"]}, "stdin": False}
    with envd.stream("Start", body, Authorization=f"Basic {root}") as events:
        output = b"".join(decode(e["data"]["stdout"]) for e in events if "data" in e)
    assert output == b"0\n/root\n"


def test_a_missing_cwd_and_an_unknown_user_are_refused(envd: Envd) -> None:
    body = {"process": {"cmd": "/bin/true", "cwd": "/nowhere"}}
    with pytest.raises(StreamEnded) as refused, envd.stream("Start", body) as events:
        list(events)
    assert refused.value.code == "invalid_argument" and "/nowhere" in refused.value.message
    bad = base64.b64encode(b"mallory:").decode()
    with (
        pytest.raises(StreamEnded) as refused,
        envd.stream("Start", {"process": {"cmd": "/bin/true"}}, Authorization=f"Basic {bad}") as events,
    ):
        list(events)
    assert refused.value.code == "unauthenticated"


def test_stdin_send_close_and_list(envd: Envd) -> None:
    body = {"process": {"cmd": "/bin/cat"}, "stdin": True, "tag": "reader"}
    with envd.stream("Start", body) as events:
        pid = int(next(events)["start"]["pid"])
        listed = envd.call("List", {})["processes"]
        assert [(int(p["pid"]), p.get("tag"), p["config"]["cmd"]) for p in listed] == [(pid, "reader", "/bin/cat")]
        envd.call("SendInput", {"process": {"pid": pid}, "input": {"stdin": b64(b"hello ")}})
        envd.call("SendInput", {"process": {"tag": "reader"}, "input": {"stdin": b64(b"world")}})
        envd.call("CloseStdin", {"process": {"pid": pid}})
        output = b""
        for event in events:
            if "data" in event:
                output += decode(event["data"]["stdout"])
            if "end" in event:
                break
    assert output == b"hello world"
    wait_for(lambda: pid not in pids(envd), "the ended process to leave the list")


def test_stdin_closed_by_default_of_the_sdk_reads_eof(envd: Envd) -> None:
    assert envd.run("cat; echo done")[1] == b"done\n"


def test_stream_input_in_order(envd: Envd, server: RealServer) -> None:
    import httpx

    from tests.local_api.sandboxes import envelope

    with envd.stream("Start", {"process": {"cmd": "/bin/cat"}, "stdin": True}) as events:
        pid = int(next(events)["start"]["pid"])
        chunks = [envelope({"start": {"process": {"pid": pid}}})]
        chunks += [envelope({"data": {"input": {"stdin": b64(f"{i},".encode())}}}) for i in range(50)]
        chunks.append(envelope({"keepalive": {}}))
        response = httpx.post(
            f"{server.url}/process.Process/StreamInput",
            content=b"".join(chunks),
            headers=envd.headers(**{"Content-Type": "application/connect+json"}),
        )
        assert response.status_code == 200
        envd.call("CloseStdin", {"process": {"pid": pid}})
        output = b"".join(decode(e["data"]["stdout"]) for e in events if "data" in e)
    assert output == "".join(f"{i}," for i in range(50)).encode()


def test_connect_follows_from_the_next_event_and_leaving_never_kills(envd: Envd) -> None:
    body = {"process": {"cmd": "/bin/bash", "args": ["-c", "read line; echo got $line"]}, "stdin": True}
    with envd.stream("Start", body) as events:
        pid = int(next(events)["start"]["pid"])
    # The starting client left: the process is still there.
    assert pid in pids(envd)
    with envd.stream("Connect", {"process": {"pid": pid}}) as events:
        assert int(next(events)["start"]["pid"]) == pid
        envd.call("SendInput", {"process": {"pid": pid}, "input": {"stdin": b64(b"x\n")}})
        seen = list(events)
    assert decode(seen[0]["data"]["stdout"]) == b"got x\n"
    assert seen[-1]["end"]["status"] == "exit status 0"
    # A late Connect still learns how it ended (envd keeps the end for 30 s).
    with envd.stream("Connect", {"process": {"pid": pid}}) as events:
        late = list(events)
    assert int(late[0]["start"]["pid"]) == pid and "end" in late[1]


def test_send_signal_kills_the_process_group(envd: Envd) -> None:
    body = {"process": {"cmd": "/bin/bash", "args": ["-c", "sleep 300 & sleep 300; wait"]}, "stdin": False}
    with envd.stream("Start", body) as events:
        pid = int(next(events)["start"]["pid"])
        envd.call("SendSignal", {"process": {"pid": pid}, "signal": "SIGNAL_SIGKILL"})
        end = next(e for e in events if "end" in e)["end"]
    assert end["status"] == "signal: killed"
    # No sleep survives: its group went with it.
    assert envd.run("pgrep -c sleep || true")[1] == b"0\n"


def test_a_pid_that_does_not_exist_and_a_signal_not_in_the_enum(envd: Envd) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("SendSignal", {"process": {"pid": 99999}, "signal": "SIGNAL_SIGKILL"}),
        ("SendInput", {"process": {"pid": 99999}, "input": {"stdin": ""}}),
        ("CloseStdin", {"process": {"pid": 99999}}),
        ("Update", {"process": {"pid": 99999}, "pty": {"size": {"cols": 1, "rows": 1}}}),
    ]
    for method, body in calls:
        response = envd.unary(method, body)
        assert response.status_code == 404 and response.json()["code"] == "not_found", (method, response.text)
    with pytest.raises(StreamEnded) as refused, envd.stream("Connect", {"process": {"pid": 99999}}) as events:
        list(events)
    assert refused.value.code == "not_found"
    with envd.stream("Start", {"process": {"cmd": "/bin/sleep", "args": ["30"]}}) as events:
        pid = int(next(events)["start"]["pid"])
        # Not SIGKILL or SIGTERM, by number or by a name the enum lacks (dropped as unknown, as
        # connect-go's JSON codec does): envd's "invalid signal", unimplemented.
        for signal in (1, "SIGNAL_SIGHUP"):
            response = envd.unary("SendSignal", {"process": {"pid": pid}, "signal": signal})
            assert response.status_code == 501 and response.json()["code"] == "unimplemented", response.text
        envd.call("SendSignal", {"process": {"pid": pid}, "signal": "SIGNAL_SIGTERM"})
        assert next(e for e in events if "end" in e)["end"]["status"] == "signal: terminated"


def test_pty_input_resize_and_kill(envd: Envd) -> None:
    body = {
        "process": {"cmd": "/bin/bash", "args": ["-i", "-l"], "envs": {"TERM": "xterm", "PS1": "$ "}},
        "pty": {"size": {"cols": 80, "rows": 24}},
    }
    with envd.stream("Start", body) as events:
        pid = int(next(events)["start"]["pid"])
        output = b""

        def until(marker: bytes) -> None:
            nonlocal output
            if marker in output:
                output = output[output.index(marker) + len(marker) :]
                return
            for event in events:
                if "data" in event:
                    output += decode(event["data"]["pty"])
                    if marker in output:
                        output = output[output.index(marker) + len(marker) :]
                        return
            raise AssertionError(f"{marker!r} never came: {output!r}")

        envd.call("SendInput", {"process": {"pid": pid}, "input": {"pty": b64(b"stty size; tty\n")}})
        until(b"24 80")
        until(b"/dev/pts/")
        envd.call("Update", {"process": {"pid": pid}, "pty": {"size": {"cols": 100, "rows": 30}}})
        envd.call("SendInput", {"process": {"pid": pid}, "input": {"pty": b64(b"stty size\n")}})
        until(b"30 100")
        # A terminal's input is not stdin: closing it is refused, as envd does.
        response = envd.unary("CloseStdin", {"process": {"pid": pid}})
        assert response.status_code != 200
        envd.call("SendSignal", {"process": {"pid": pid}, "signal": "SIGNAL_SIGKILL"})
        end = next(e for e in events if "end" in e)["end"]
    assert end["status"] == "signal: killed"


def test_start_deadline_kills_the_process(envd: Envd) -> None:
    body = {"process": {"cmd": "/bin/sleep", "args": ["300"]}, "stdin": False}
    with pytest.raises(StreamEnded) as ended, envd.stream("Start", body, **{"Connect-Timeout-Ms": "500"}) as events:
        pid = int(next(events)["start"]["pid"])
        list(events)
    assert ended.value.code == "deadline_exceeded"
    wait_for(lambda: pid not in pids(envd), "the process to be killed at its deadline")


def test_keepalives_while_idle(envd: Envd) -> None:
    body = {"process": {"cmd": "/bin/bash", "args": ["-c", "sleep 2.5; echo late"]}, "stdin": False}
    with envd.stream("Start", body, **{"Keepalive-Ping-Interval": "1"}) as events:
        kinds = [next(iter(e)) for e in events]
    assert kinds[0] == "start" and kinds[-1] == "end"
    assert "keepalive" in kinds[1 : kinds.index("data")]


def test_a_slow_subscriber_loses_its_stream_not_the_process(
    server: RealServer, envd: Envd, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(processes, "STALL_SECONDS", 1.0)
    monkeypatch.setattr(processes, "HIGH_WATER", 256 << 10)
    entry = server.runtimes.get(envd.sandbox_id)
    assert entry is not None
    with envd.stream("Start", {"process": {"cmd": "/usr/bin/yes"}, "stdin": False}) as slow:
        pid = int(next(slow)["start"]["pid"])
        process = entry.runtime.processes[pid]
        # This client reads nothing more: its queue fills, the server stops reading the process,
        # and after STALL_SECONDS drops this subscriber instead of holding the process longer.
        wait_for(lambda: process.subscribers == 0, "the slow subscriber to be dropped", timeout=60)
        with pytest.raises(StreamEnded) as dropped:
            for _ in slow:
                pass
    assert dropped.value.code == "resource_exhausted"
    assert "too slowly" in dropped.value.message
    # The process goes on, and its output flows again to whoever follows it.
    with envd.stream("Connect", {"process": {"pid": pid}}) as events:
        next(events)
        assert "data" in next(events)
    envd.call("SendSignal", {"process": {"pid": pid}, "signal": "SIGNAL_SIGKILL"})


def test_process_limit_per_sandbox(envd: Envd, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "MAX_PROCESSES", 2)
    for _ in range(2):
        with envd.stream("Start", {"process": {"cmd": "/bin/sleep", "args": ["300"]}}) as events:
            next(events)
    with pytest.raises(StreamEnded) as refused, envd.stream("Start", {"process": {"cmd": "/bin/true"}}) as events:
        list(events)
    assert refused.value.code == "resource_exhausted" and "limit" in refused.value.message


def test_one_sandbox_streaming_does_not_stall_another(server: RealServer) -> None:
    loud, quiet = server.envd(server.create()), server.envd(server.create())
    stop = threading.Event()
    received = [0]

    def flood() -> None:
        body = {"process": {"cmd": "/bin/bash", "args": ["-c", "yes 0123456789abcdef"]}, "stdin": False}
        with loud.stream("Start", body) as events:
            for event in events:
                received[0] += len(event.get("data", {}).get("stdout", ""))
                if stop.is_set():
                    return

    thread = threading.Thread(target=flood)
    thread.start()
    try:
        wait_for(lambda: received[0] > 1 << 20, "the loud sandbox to stream")
        for _ in range(5):
            assert quiet.run("echo ok")[1] == b"ok\n"
    finally:
        stop.set()
        thread.join(timeout=30)
