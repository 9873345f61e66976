"""`e2b sandbox ...` through CliRunner, against a scripted API behind the SDK's transport."""

from __future__ import annotations

import datetime
import json
import re
from urllib.parse import parse_qs

import httpx
import pytest
from click.testing import Result
from e2b_cli.errors import ExitStatus
from e2b_cli.main import main

from tests.cli.conftest import API_KEY, SANDBOX_ID, Invoke, MockApi, assert_clean_error, error, sandbox_json

PAUSE = f"/sandboxes/{SANDBOX_ID}/pause"
INFO = f"/sandboxes/{SANDBOX_ID}"
CONNECT = f"/sandboxes/{SANDBOX_ID}/connect"
TIMEOUT = f"/sandboxes/{SANDBOX_ID}/timeout"
LIST = "/v2/sandboxes"
METRICS = f"/sandboxes/{SANDBOX_ID}/metrics"
SNAPSHOTS = f"/sandboxes/{SANDBOX_ID}/snapshots"
SNAPSHOT_LIST = "/snapshots"
SNAPSHOT_ID = "snap_test123"
SNAPSHOT = f"/templates/{SNAPSHOT_ID}"
REFUSAL = "pause refused, the sandbox keeps running: the sandbox's guest agent did not answer the health check"

# Every command about a sandbox (and list) with the request it sends, to run the shared failure cases over all of them.
COMMANDS: list[tuple[list[str], str, str]] = [
    (["sandbox", "list"], "GET", LIST),
    (["sandbox", "info", SANDBOX_ID], "GET", INFO),
    (["sandbox", "kill", SANDBOX_ID], "DELETE", INFO),
    (["sandbox", "connect", SANDBOX_ID], "POST", CONNECT),
    (["sandbox", "timeout", SANDBOX_ID, "60"], "POST", TIMEOUT),
    (["sandbox", "pause", SANDBOX_ID], "POST", PAUSE),
    (["sandbox", "metrics", SANDBOX_ID], "GET", METRICS),
    (["sandbox", "snapshot", "create", SANDBOX_ID], "POST", SNAPSHOTS),
]
IDS = [c[0][1] if c[0][1] != "snapshot" else f"snapshot-{c[0][2]}" for c in COMMANDS]
# The snapshot commands that name no sandbox: every shared failure but "sandbox not found".
SNAPSHOT_COMMANDS: list[tuple[list[str], str, str]] = [
    (["sandbox", "snapshot", "list"], "GET", SNAPSHOT_LIST),
    (["sandbox", "snapshot", "delete", SNAPSHOT_ID], "DELETE", SNAPSHOT),
]
EVERY = COMMANDS + SNAPSHOT_COMMANDS
EVERY_IDS = [*IDS, "snapshot-list", "snapshot-delete"]


# --- pause ---------------------------------------------------------------------------


def test_pause_default_omits_force(api: MockApi, run: Invoke) -> None:
    api.on("POST", PAUSE, httpx.Response(200, json={"forced": False}))
    result = run("sandbox", "pause", SANDBOX_ID)
    assert result.exit_code == ExitStatus.OK
    assert result.stdout == f"Paused sandbox {SANDBOX_ID}.\n"
    assert result.stderr == ""
    body = api.bodies()[0]
    assert "force" not in (body or {})
    assert api.requests[0].headers["X-API-Key"] == API_KEY


@pytest.mark.parametrize("flag", ["--force", "-f"])
def test_pause_force_sends_force_and_reports_forced(api: MockApi, run: Invoke, flag: str) -> None:
    api.on("POST", PAUSE, httpx.Response(200, json={"forced": True}))
    result = run("sandbox", "pause", SANDBOX_ID, flag)
    assert result.exit_code == ExitStatus.OK
    assert api.bodies()[0]["force"] is True
    lines = result.stdout.splitlines()
    assert lines[0] == f"Paused sandbox {SANDBOX_ID}."
    assert "forced" in lines[1]
    assert f"e2b sandbox connect {SANDBOX_ID} --on-resume reboot" in lines[1]


def test_pause_force_requested_but_not_forced(api: MockApi, run: Invoke) -> None:
    # A forced request that joined a normal pause in flight: the API reports forced=false.
    api.on("POST", PAUSE, httpx.Response(200, json={"forced": False}))
    result = run("sandbox", "pause", "-f", SANDBOX_ID)
    assert result.exit_code == ExitStatus.OK
    assert "--on-resume reboot" not in result.stdout
    assert "did not report a forced snapshot" in result.stdout


def test_pause_older_api_204(api: MockApi, run: Invoke) -> None:
    api.on("POST", PAUSE, httpx.Response(204))
    result = run("sandbox", "pause", SANDBOX_ID)
    assert result.exit_code == ExitStatus.OK
    assert result.stdout == f"Paused sandbox {SANDBOX_ID}.\n"


def test_pause_already_paused_is_success(api: MockApi, run: Invoke) -> None:
    api.on("POST", PAUSE, error(409, f"sandbox {SANDBOX_ID!r} is already paused", "sandbox_already_paused"))
    result = run("sandbox", "pause", SANDBOX_ID)
    assert result.exit_code == ExitStatus.OK
    assert result.stdout == f"Sandbox {SANDBOX_ID} was already paused.\n"
    assert result.stderr == ""


@pytest.mark.parametrize("force", [False, True])
def test_pause_refused_prints_api_message_verbatim(api: MockApi, run: Invoke, force: bool) -> None:
    api.on("POST", PAUSE, error(503, REFUSAL, "sandbox_pause_refused"))
    result = run("sandbox", "pause", SANDBOX_ID, *(["--force"] if force else []))
    assert_clean_error(result, ExitStatus.FAILED, lines=(1,))
    assert result.stderr == REFUSAL + "\n"
    assert len(api.requests) == 1  # a refusal is never retried


def test_pause_refused_long_message_stays_one_line(api: MockApi, run: Invoke) -> None:
    message = "pause refused, the sandbox keeps running: " + "the node is very busy " * 20
    api.on("POST", PAUSE, error(503, message, "sandbox_pause_refused"))
    result = run("sandbox", "pause", SANDBOX_ID)
    assert_clean_error(result, ExitStatus.FAILED, lines=(1,))
    assert result.stderr == message + "\n"


@pytest.mark.parametrize(("forced", "paused_status"), [(True, 200), (False, 200), (False, 409)])
def test_pause_json(api: MockApi, run: Invoke, forced: bool, paused_status: int) -> None:
    answer = (
        httpx.Response(200, json={"forced": forced})
        if paused_status == 200
        else error(409, "already paused", "sandbox_already_paused")
    )
    api.on("POST", PAUSE, answer)
    result = run("sandbox", "pause", SANDBOX_ID, "--json")
    assert result.exit_code == ExitStatus.OK
    assert json.loads(result.stdout) == {"sandbox_id": SANDBOX_ID, "paused": paused_status == 200, "forced": forced}


def test_pause_usage_errors(run: Invoke) -> None:
    assert run("sandbox", "pause").exit_code == ExitStatus.USAGE
    assert run("sandbox", "pause", SANDBOX_ID, "--force=yes").exit_code == ExitStatus.USAGE
    assert run("sandbox", "pause", SANDBOX_ID, "--bogus").exit_code == ExitStatus.USAGE


# --- list ----------------------------------------------------------------------------


def test_list_table(api: MockApi, run: Invoke) -> None:
    api.on("GET", LIST, httpx.Response(200, json=[sandbox_json(), sandbox_json("sbx_other", state="paused")]))
    result = run("sandbox", "list")
    assert result.exit_code == ExitStatus.OK
    assert "SANDBOX ID" in result.stdout
    assert SANDBOX_ID in result.stdout
    assert "sbx_other" in result.stdout
    assert "paused" in result.stdout
    assert "team=qa" in result.stdout


def test_list_json_and_filters(api: MockApi, run: Invoke) -> None:
    api.on("GET", LIST, httpx.Response(200, json=[sandbox_json()]))
    result = run("sandbox", "list", "--state", "running", "--state", "paused", "--limit", "5", "--json")
    assert result.exit_code == ExitStatus.OK
    data = json.loads(result.stdout)
    assert [s["sandbox_id"] for s in data] == [SANDBOX_ID]
    assert data[0]["started_at"] == "2025-01-02T03:04:05+00:00"
    assert data[0]["metadata"] == {"team": "qa"}
    params = api.requests[0].url.params
    assert params["limit"] == "5"
    assert "running" in params["state"] and "paused" in params["state"]


def test_list_follows_pages_up_to_limit(api: MockApi, run: Invoke) -> None:
    page1 = httpx.Response(200, json=[sandbox_json("a"), sandbox_json("b")], headers={"X-Next-Token": "t1"})
    page2 = httpx.Response(200, json=[sandbox_json("c"), sandbox_json("d")], headers={"X-Next-Token": "t2"})
    api.on("GET", LIST, page1, page2)
    result = run("sandbox", "list", "--limit", "3", "--json")
    assert result.exit_code == ExitStatus.OK
    assert [s["sandbox_id"] for s in json.loads(result.stdout)] == ["a", "b", "c"]
    assert len(api.requests) == 2
    assert api.requests[1].url.params["nextToken"] == "t1"


def test_list_empty(api: MockApi, run: Invoke) -> None:
    api.on("GET", LIST, httpx.Response(200, json=[]))
    assert run("sandbox", "list").stdout == "No sandboxes.\n"
    assert json.loads(run("sandbox", "list", "--json").stdout) == []


def test_list_sends_every_filter(api: MockApi, run: Invoke) -> None:
    api.on("GET", LIST, httpx.Response(200, json=[sandbox_json()]))
    result = run(
        "sandbox",
        "list",
        "--state",
        "running,paused",
        "--metadata",
        "team=qa",
        "--metadata",
        "url=a=b&c",
        "--template",
        "base",
        "--started-after",
        "2025-01-02T03:04:05+01:00",
        "--order",
        "asc",
        "--json",
    )
    assert result.exit_code == ExitStatus.OK, result.stderr
    assert [s["sandbox_id"] for s in json.loads(result.stdout)] == [SANDBOX_ID]
    params = api.requests[0].url.params
    assert params["state"] == "running,paused"
    # One parameter holding the pairs, URL-encoded as the API reads them.
    assert parse_qs(params["metadata"]) == {"team": ["qa"], "url": ["a=b&c"]}
    assert params["template"] == "base"
    assert datetime.datetime.fromisoformat(params["startedAfter"]) == datetime.datetime(
        2025, 1, 2, 2, 4, 5, tzinfo=datetime.UTC
    )
    assert params["order"] == "asc"


def test_list_without_filters_sends_none(api: MockApi, run: Invoke) -> None:
    api.on("GET", LIST, httpx.Response(200, json=[]))
    assert run("sandbox", "list").exit_code == ExitStatus.OK
    params = api.requests[0].url.params
    assert not {"state", "metadata", "template", "startedAfter", "order"} & set(params)


def test_list_started_after_without_offset_is_utc(api: MockApi, run: Invoke) -> None:
    api.on("GET", LIST, httpx.Response(200, json=[]))
    assert run("sandbox", "list", "--started-after", "2025-01-02").exit_code == ExitStatus.OK
    sent = datetime.datetime.fromisoformat(api.requests[0].url.params["startedAfter"])
    assert sent == datetime.datetime(2025, 1, 2, tzinfo=datetime.UTC)


def test_list_repeated_state_and_order_desc(api: MockApi, run: Invoke) -> None:
    api.on("GET", LIST, httpx.Response(200, json=[]))
    assert run("sandbox", "list", "--state", "paused", "--state", "paused", "--order", "desc").exit_code == 0
    params = api.requests[0].url.params
    assert (params["state"], params["order"]) == ("paused", "desc")


def test_list_filters_follow_every_page(api: MockApi, run: Invoke) -> None:
    page1 = httpx.Response(200, json=[sandbox_json("a")], headers={"X-Next-Token": "t1"})
    page2 = httpx.Response(200, json=[sandbox_json("b")])
    api.on("GET", LIST, page1, page2)
    result = run("sandbox", "list", "--template", "base", "--order", "asc", "--json")
    assert [s["sandbox_id"] for s in json.loads(result.stdout)] == ["a", "b"]
    assert [r.url.params.get("nextToken") for r in api.requests] == [None, "t1"]
    assert all(r.url.params["template"] == "base" and r.url.params["order"] == "asc" for r in api.requests)


def test_list_limit_above_a_page_reads_several(api: MockApi, run: Invoke) -> None:
    page = [sandbox_json(f"s{i}") for i in range(100)]
    api.on("GET", LIST, httpx.Response(200, json=page, headers={"X-Next-Token": "t1"}), httpx.Response(200, json=page))
    result = run("sandbox", "list", "--limit", "150", "--json")
    assert len(json.loads(result.stdout)) == 150
    assert [r.url.params["limit"] for r in api.requests] == ["100", "100"]


def test_list_json_has_the_sdk_fields(api: MockApi, run: Invoke) -> None:
    api.on("GET", LIST, httpx.Response(200, json=[sandbox_json(alias="py")]))
    record = json.loads(run("sandbox", "list", "--json").stdout)[0]
    assert record["name"] == record["alias"] == "py"  # `alias`: the 2.0 key, kept
    assert record["disk_size_mb"] == 1024 and record["envd_version"] == "0.2.0"
    assert record["state"] == "running" and record["volume_mounts"] == []


@pytest.mark.parametrize(
    "args",
    [
        ["--state", "gone"],
        ["--state", "running,"],
        ["--limit", "0"],
        ["--limit", "x"],
        ["--metadata", "team"],
        ["--metadata", "=qa"],
        ["--template", ""],
        ["--started-after", "yesterday"],
        ["--started-after", "2025-02-30"],
        ["--order", "newest"],
    ],
)
def test_list_usage_errors(api: MockApi, run: Invoke, args: list[str]) -> None:
    result = run("sandbox", "list", *args)
    assert result.exit_code == ExitStatus.USAGE, result.stderr
    assert "Traceback" not in result.stderr
    assert api.requests == []


def test_list_usage_error_with_json_is_json(api: MockApi, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "list", "--started-after", "soon", "--json"]) == ExitStatus.USAGE
    out, err = capsys.readouterr()
    error = json.loads(out)["error"]
    assert err == ""
    assert (error["status"], error["error_code"]) == (None, None) and "--started-after" in error["message"]
    assert api.requests == []


# --- info ----------------------------------------------------------------------------


def test_info_table_and_json(api: MockApi, run: Invoke) -> None:
    api.on("GET", INFO, httpx.Response(200, json=sandbox_json(alias="my-alias")))
    table = run("sandbox", "info", SANDBOX_ID)
    assert table.exit_code == ExitStatus.OK
    assert SANDBOX_ID in table.stdout and "my-alias" in table.stdout and "512 MB" in table.stdout
    data = json.loads(run("sandbox", "info", SANDBOX_ID, "--json").stdout)
    assert data["sandbox_id"] == SANDBOX_ID
    assert data["envd_version"] == "0.2.0"
    assert data["state"] == "running"


def test_info_usage_error(run: Invoke) -> None:
    assert run("sandbox", "info").exit_code == ExitStatus.USAGE


# --- kill ----------------------------------------------------------------------------


def test_kill_several(api: MockApi, run: Invoke) -> None:
    api.on("DELETE", "/sandboxes/a", httpx.Response(204))
    api.on("DELETE", "/sandboxes/b", httpx.Response(204))
    result = run("sandbox", "kill", "a", "b")
    assert result.exit_code == ExitStatus.OK
    assert result.stdout == "Killed sandbox a.\nKilled sandbox b.\n"


def test_kill_unknown_tries_all_then_fails(api: MockApi, run: Invoke) -> None:
    api.on("DELETE", "/sandboxes/a", error(404, "sandbox 'a' not found", "sandbox_not_found"))
    api.on("DELETE", "/sandboxes/b", httpx.Response(204))
    result = run("sandbox", "kill", "a", "b")
    assert result.exit_code == ExitStatus.FAILED
    assert result.stdout == "Killed sandbox b.\n"
    assert result.stderr.splitlines()[0] == "Error: sandbox 'a' not found"
    assert "Traceback" not in result.stderr


def test_kill_usage_error(run: Invoke) -> None:
    assert run("sandbox", "kill").exit_code == ExitStatus.USAGE


# --- connect -------------------------------------------------------------------------


def test_connect_resume(api: MockApi, run: Invoke) -> None:
    api.on("POST", CONNECT, httpx.Response(201, json=sandbox_json()))
    result = run("sandbox", "connect", SANDBOX_ID)
    assert result.exit_code == ExitStatus.OK
    assert result.stdout == f"Sandbox {SANDBOX_ID} is running.\n"
    assert api.bodies()[0] == {"timeout": 300}


def test_connect_on_resume_reboot(api: MockApi, run: Invoke) -> None:
    api.on("POST", CONNECT, httpx.Response(201, json=sandbox_json()))
    result = run("sandbox", "connect", SANDBOX_ID, "--on-resume", "reboot", "--timeout", "60")
    assert result.exit_code == ExitStatus.OK
    assert "cold-booted" in result.stdout
    assert api.bodies()[0] == {"timeout": 60, "memory": False}  # the API's word for a cold boot


@pytest.mark.parametrize("on_resume", ["restore", "memory"])  # memory: e2b-cli 2.0's name for restore
def test_connect_on_resume_restore_is_the_api_default(api: MockApi, run: Invoke, on_resume: str) -> None:
    api.on("POST", CONNECT, httpx.Response(201, json=sandbox_json()))
    result = run("sandbox", "connect", SANDBOX_ID, "--on-resume", on_resume)
    assert result.exit_code == ExitStatus.OK, result.stderr
    assert result.stdout == f"Sandbox {SANDBOX_ID} is running.\n"
    assert api.bodies()[0] == {"timeout": 300}


def test_connect_usage_error(run: Invoke) -> None:
    assert run("sandbox", "connect", SANDBOX_ID, "--on-resume", "warm").exit_code == ExitStatus.USAGE


@pytest.mark.parametrize(
    ("args", "said"),
    [
        # 0 would resume a paused sandbox only for it to expire at once.
        (["connect", SANDBOX_ID, "--timeout", "0"], "Invalid value for '--timeout': 0 is not in the range x>=1."),
        # 0 would end the sandbox at once: `kill` is the command for that.
        (["timeout", SANDBOX_ID, "0"], "Invalid value for 'SECONDS': 0 is not in the range x>=1."),
    ],
    ids=["connect", "timeout"],
)
def test_a_zero_timeout_is_refused_before_asking(api: MockApi, run: Invoke, args: list[str], said: str) -> None:
    result = run("sandbox", *args)
    assert_clean_error(result, ExitStatus.USAGE, lines=range(1, 6))
    assert said in result.stderr
    assert api.requests == []


# --- timeout -------------------------------------------------------------------------


def test_timeout(api: MockApi, run: Invoke) -> None:
    api.on("POST", TIMEOUT, httpx.Response(204))
    result = run("sandbox", "timeout", SANDBOX_ID, "3600")
    assert result.exit_code == ExitStatus.OK
    assert result.stdout == f"Sandbox {SANDBOX_ID} now expires in 3600 seconds.\n"
    assert api.bodies()[0] == {"timeout": 3600}


@pytest.mark.parametrize("args", [[SANDBOX_ID], [SANDBOX_ID, "soon"], [SANDBOX_ID, "--", "-5"]])
def test_timeout_usage_errors(run: Invoke, args: list[str]) -> None:
    assert run("sandbox", "timeout", *args).exit_code == ExitStatus.USAGE


# --- every command: the shared failures ----------------------------------------------


@pytest.mark.parametrize(("args", "method", "path"), COMMANDS, ids=IDS)
def test_not_found(api: MockApi, run: Invoke, args: list[str], method: str, path: str) -> None:
    api.on(method, path, error(404, f"sandbox {SANDBOX_ID!r} not found", "sandbox_not_found"))
    result = run(*args)
    assert_clean_error(result, ExitStatus.FAILED)
    assert result.stderr.startswith("Error: ")
    if args[1] != "list":
        assert SANDBOX_ID in result.stderr.splitlines()[0]
        assert "e2b sandbox list" in result.stderr
    else:  # the hint would send the user back to the command that failed
        assert "e2b sandbox list" not in result.stderr


@pytest.mark.parametrize(("args", "method", "path"), EVERY, ids=EVERY_IDS)
def test_missing_api_key_is_a_usage_error(
    api: MockApi, run: Invoke, monkeypatch: pytest.MonkeyPatch, args: list[str], method: str, path: str
) -> None:
    monkeypatch.delenv("E2B_API_KEY")
    result = run(*args)
    assert_clean_error(result, ExitStatus.USAGE, lines=(2,))
    assert result.stderr.splitlines() == [
        "Error: no API key.",
        "Set the E2B_API_KEY environment variable or pass --api-key.",
    ]
    assert api.requests == []


@pytest.mark.parametrize(("args", "method", "path"), EVERY, ids=EVERY_IDS)
def test_invalid_api_key(api: MockApi, run: Invoke, args: list[str], method: str, path: str) -> None:
    api.on(method, path, error(401, "invalid API key in the X-API-Key header"))
    result = run(*args)
    assert_clean_error(result, ExitStatus.FAILED, lines=(2,))
    assert "invalid API key in the X-API-Key header" in result.stderr
    assert "--api-key" in result.stderr.splitlines()[1]


@pytest.mark.parametrize(("args", "method", "path"), EVERY, ids=EVERY_IDS)
def test_network_failure(api: MockApi, run: Invoke, args: list[str], method: str, path: str) -> None:
    api.on(method, path, httpx.ConnectError("connection refused"))
    result = run(*args, "--api-url", "http://127.0.0.1:9")
    assert_clean_error(result, ExitStatus.NO_ANSWER, lines=(2,))
    first, hint = result.stderr.splitlines()
    assert first == "Error: could not reach the API at http://127.0.0.1:9: connection refused"
    assert "network" in hint


@pytest.mark.parametrize(("args", "method", "path"), EVERY, ids=EVERY_IDS)
def test_timeout_failure(api: MockApi, run: Invoke, args: list[str], method: str, path: str) -> None:
    api.on(method, path, httpx.ReadTimeout("timed out"))
    result = run(*args, "--request-timeout", "5")
    assert_clean_error(result, ExitStatus.NO_ANSWER, lines=(2,))
    first, hint = result.stderr.splitlines()
    assert re.fullmatch(r"Error: no answer from the API at https://api\.e2b\.app \(gave up after \d+\.\d s\)\.", first)
    assert hint == "Retry, or allow longer with --request-timeout SECONDS (now 5 s; 0 means no limit)."


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (error(429, "rate limited", "rate_limited"), "wait a little"),
        (error(503, "node busy"), "try again in a minute"),
        (error(400, "timeout must be at most 86400", "invalid_request"), "invalid"),
        (error(500, "internal error"), None),
        (httpx.Response(502, text="<html>bad gateway</html>"), None),
    ],
    ids=["429", "503", "400", "500", "502-html"],
)
@pytest.mark.parametrize(("args", "method", "path"), EVERY, ids=EVERY_IDS)
def test_other_api_errors(
    api: MockApi, run: Invoke, args: list[str], method: str, path: str, answer: httpx.Response, expected: str | None
) -> None:
    api.on(method, path, answer)
    result = run("--quiet", *args)  # busy answers are retried first: test_progress says so
    assert_clean_error(result, ExitStatus.FAILED)
    assert result.stderr.startswith("Error: ")
    if expected:
        assert expected in result.stderr


@pytest.mark.parametrize(("args", "method", "path"), EVERY, ids=EVERY_IDS)
def test_help_has_an_example(run: Invoke, args: list[str], method: str, path: str) -> None:
    command = args[:3] if args[1] == "snapshot" else args[:2]
    result = run(*command, "--help")
    assert result.exit_code == ExitStatus.OK
    assert "Examples:" in result.stdout
    assert f"e2b {' '.join(command)}" in result.stdout.split("Examples:")[1]


# --- metrics -------------------------------------------------------------------------


def metric_json(timestamp: int, **extra: object) -> dict[str, object]:
    return {
        "timestamp": datetime.datetime.fromtimestamp(timestamp, datetime.UTC).isoformat(),
        "timestampUnix": timestamp,
        "cpuCount": 2,
        "cpuUsedPct": 12.34,
        "memUsed": 256 * 1024 * 1024,
        "memTotal": 512 * 1024 * 1024,
        "memCache": 1024,
        "diskUsed": 1536 * 1024 * 1024,
        "diskTotal": 10 * 1024**3,
        **extra,
    }


T0 = 1735787045  # 2025-01-02T03:04:05Z


def test_metrics_table(api: MockApi, run: Invoke) -> None:
    api.on("GET", METRICS, httpx.Response(200, json=[metric_json(T0), metric_json(T0 + 5, cpuUsedPct=99.96)]))
    result = run("sandbox", "metrics", SANDBOX_ID)
    assert result.exit_code == ExitStatus.OK, result.stderr
    header, _rule, first, second = result.stdout.splitlines()
    assert header.split() == ["TIME", "CPUS", "CPU", "%", "MEMORY", "USED", "/", "TOTAL", "DISK", "USED", "/", "TOTAL"]
    assert first.split() == "2025-01-02 03:04:05Z 2 12.3 256.0 MiB / 512.0 MiB 1.5 GiB / 10.0 GiB".split()
    assert "2025-01-02 03:04:10Z" in second and "100.0" in second
    assert api.requests[0].url.params == httpx.QueryParams()  # no interval: the API's choice


def test_metrics_json_and_interval(api: MockApi, run: Invoke) -> None:
    api.on("GET", METRICS, httpx.Response(200, json=[metric_json(T0)]))
    result = run(
        "sandbox",
        "metrics",
        SANDBOX_ID,
        "--start",
        "2025-01-02T03:04:05Z",
        "--end",
        "2025-01-02T05:04:05+01:00",
        "--json",
    )
    assert result.exit_code == ExitStatus.OK, result.stderr
    assert json.loads(result.stdout) == [
        {
            "cpu_count": 2,
            "cpu_used_pct": 12.34,
            "disk_total": 10 * 1024**3,
            "disk_used": 1536 * 1024 * 1024,
            "mem_total": 512 * 1024 * 1024,
            "mem_used": 256 * 1024 * 1024,
            "mem_cache": 1024,
            "timestamp": "2025-01-02T03:04:05+00:00",
        }
    ]
    params = api.requests[0].url.params
    assert (params["start"], params["end"]) == (str(T0), str(T0 + 3600))


def test_metrics_none(api: MockApi, run: Invoke) -> None:
    api.on("GET", METRICS, httpx.Response(200, json=[]))
    assert run("sandbox", "metrics", SANDBOX_ID).stdout == "No metrics.\n"
    assert json.loads(run("sandbox", "metrics", SANDBOX_ID, "--json").stdout) == []


@pytest.mark.parametrize(
    "args",
    [
        [],
        [SANDBOX_ID, "--start", "yesterday"],
        [SANDBOX_ID, "--end", "2025-01-02T03:04:05+25:00"],
        [SANDBOX_ID, "--start", "2025-01-02T00:00:01Z", "--end", "2025-01-02T00:00:00Z"],
        [SANDBOX_ID, "--start", "1969-12-31T23:59:59Z"],
    ],
)
def test_metrics_usage_errors(api: MockApi, run: Invoke, args: list[str]) -> None:
    result = run("sandbox", "metrics", *args)
    assert result.exit_code == ExitStatus.USAGE, result.stderr
    assert "Traceback" not in result.stderr
    assert api.requests == []


# --- snapshots -----------------------------------------------------------------------


def test_snapshot_create_prints_the_id_alone(api: MockApi, run: Invoke) -> None:
    api.on("POST", SNAPSHOTS, httpx.Response(201, json={"snapshotID": SNAPSHOT_ID, "names": []}))
    result = run("sandbox", "snapshot", "create", SANDBOX_ID)
    assert result.exit_code == ExitStatus.OK, result.stderr
    assert result.stdout == f"{SNAPSHOT_ID}\n"
    assert api.bodies()[0] == {}  # no name, the API's default mode


@pytest.mark.parametrize(("mode", "memory"), [("full", True), ("filesystem", False)])
def test_snapshot_create_name_mode_and_json(api: MockApi, run: Invoke, mode: str, memory: bool) -> None:
    taken = {"snapshotID": "team/ready:default", "names": ["team/ready:default", "team/ready:v2"]}
    api.on("POST", SNAPSHOTS, httpx.Response(201, json=taken))
    result = run("sandbox", "snapshot", "create", SANDBOX_ID, "--name", "ready", "--mode", mode, "--json")
    assert result.exit_code == ExitStatus.OK, result.stderr
    assert json.loads(result.stdout) == {"snapshot_id": "team/ready:default", "names": taken["names"]}
    assert api.bodies()[0] == {"name": "ready", "memory": memory}


@pytest.mark.parametrize(
    "args", [[], [SANDBOX_ID, "--mode", "memory"], [SANDBOX_ID, "--name", ""], [SANDBOX_ID, "extra"]]
)
def test_snapshot_create_usage_errors(api: MockApi, run: Invoke, args: list[str]) -> None:
    assert run("sandbox", "snapshot", "create", *args).exit_code == ExitStatus.USAGE
    assert api.requests == []


SNAPSHOTS_PAGE = [
    {"snapshotID": "snap_a", "names": ["team/ready:default", "team/ready:v2"]},
    {"snapshotID": "snap_b", "names": []},
]


def test_snapshot_list_table(api: MockApi, run: Invoke) -> None:
    api.on("GET", SNAPSHOT_LIST, httpx.Response(200, json=SNAPSHOTS_PAGE))
    result = run("sandbox", "snapshot", "list")
    assert result.exit_code == ExitStatus.OK, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["SNAPSHOT", "ID", "NAMES"]
    assert lines[2].split() == ["snap_a", "team/ready:default,", "team/ready:v2"]
    assert lines[3].split() == ["snap_b"]
    assert not {"sandboxID", "name"} & set(api.requests[0].url.params)


def test_snapshot_list_filters_json_and_pages(api: MockApi, run: Invoke) -> None:
    page1 = httpx.Response(200, json=SNAPSHOTS_PAGE, headers={"X-Next-Token": "t1"})
    page2 = httpx.Response(200, json=[{"snapshotID": "snap_c", "names": ["team/ready:default"]}])
    api.on("GET", SNAPSHOT_LIST, page1, page2)
    result = run("sandbox", "snapshot", "list", "--sandbox", SANDBOX_ID, "--name", "ready", "--limit", "3", "--json")
    assert result.exit_code == ExitStatus.OK, result.stderr
    assert [s["snapshot_id"] for s in json.loads(result.stdout)] == ["snap_a", "snap_b", "snap_c"]
    assert json.loads(result.stdout)[0] == {"snapshot_id": "snap_a", "names": SNAPSHOTS_PAGE[0]["names"]}
    first, second = (r.url.params for r in api.requests)
    assert (first["sandboxID"], first["name"], first["limit"]) == (SANDBOX_ID, "ready", "3")
    assert second["nextToken"] == "t1"


def test_snapshot_list_limit_stops_reading_pages(api: MockApi, run: Invoke) -> None:
    api.on("GET", SNAPSHOT_LIST, httpx.Response(200, json=SNAPSHOTS_PAGE, headers={"X-Next-Token": "t1"}))
    result = run("sandbox", "snapshot", "list", "--limit", "1", "--json")
    assert [s["snapshot_id"] for s in json.loads(result.stdout)] == ["snap_a"]
    assert len(api.requests) == 1


def test_snapshot_list_empty(api: MockApi, run: Invoke) -> None:
    api.on("GET", SNAPSHOT_LIST, httpx.Response(200, json=[]))
    assert run("sandbox", "snapshot", "list").stdout == "No snapshots.\n"
    assert json.loads(run("sandbox", "snapshot", "list", "--json").stdout) == []


@pytest.mark.parametrize("args", [["--limit", "0"], ["--sandbox", ""], ["--name", " "], ["extra"]])
def test_snapshot_list_usage_errors(api: MockApi, run: Invoke, args: list[str]) -> None:
    assert run("sandbox", "snapshot", "list", *args).exit_code == ExitStatus.USAGE
    assert api.requests == []


def test_snapshot_delete(api: MockApi, run: Invoke) -> None:
    api.on("DELETE", SNAPSHOT, httpx.Response(204))
    result = run("sandbox", "snapshot", "delete", SNAPSHOT_ID)
    assert result.exit_code == ExitStatus.OK, result.stderr
    assert result.stdout == f"Deleted snapshot {SNAPSHOT_ID}.\n"
    json_result = run("sandbox", "snapshot", "delete", SNAPSHOT_ID, "--json")
    assert json.loads(json_result.stdout) == {"snapshot_id": SNAPSHOT_ID, "deleted": True}


@pytest.mark.parametrize("error_code", ["template_not_found", "sandbox_not_found"])
def test_snapshot_delete_unknown(api: MockApi, run: Invoke, error_code: str | None) -> None:
    api.on("DELETE", SNAPSHOT, error(404, "the API's own words", error_code))
    result = run("sandbox", "snapshot", "delete", SNAPSHOT_ID)
    assert_clean_error(result, ExitStatus.FAILED, lines=(2,))
    assert result.stderr.splitlines() == [
        f"Error: snapshot {SNAPSHOT_ID!r} not found",
        "Run `e2b sandbox snapshot list` to see your team's snapshots.",
    ]
    as_json = run("sandbox", "snapshot", "delete", SNAPSHOT_ID, "--json")
    assert as_json.exit_code == ExitStatus.FAILED
    assert _json_error(as_json) == {"status": 404, "error_code": None, "message": f"snapshot {SNAPSHOT_ID!r} not found"}


def test_snapshot_delete_of_a_404_that_is_not_the_api_s_says_so(api: MockApi, run: Invoke) -> None:
    api.on("DELETE", SNAPSHOT, error(404, "no such path"))  # no error_code: a wrong API URL
    result = run("sandbox", "snapshot", "delete", SNAPSHOT_ID)
    assert_clean_error(result, ExitStatus.FAILED, lines=(1,))
    assert result.stderr.startswith("Error: the answer is not the API's: DELETE https://api.e2b.app/templates/")
    assert "not found" not in result.stderr and "snapshot list" not in result.stderr


def test_snapshot_delete_sends_a_namespaced_id_as_one_segment(api: MockApi, run: Invoke) -> None:
    api.on("DELETE", "/templates/team/ready:default", httpx.Response(204))
    result = run("sandbox", "snapshot", "delete", "team/ready:default")
    assert result.exit_code == ExitStatus.OK, result.stderr
    assert api.requests[0].url.raw_path == b"/templates/team%2Fready%3Adefault"


def test_snapshot_delete_usage_error(api: MockApi, run: Invoke) -> None:
    assert run("sandbox", "snapshot", "delete").exit_code == ExitStatus.USAGE
    assert run("sandbox", "snapshot", "delete", "a", "b").exit_code == ExitStatus.USAGE
    assert api.requests == []


def test_snapshot_alone_shows_its_commands(run: Invoke) -> None:
    result = run("sandbox", "snapshot", "--help")
    assert result.exit_code == ExitStatus.OK
    assert all(f"  {name} " in result.stdout for name in ("create", "list", "delete"))


# --- create --------------------------------------------------------------------------

CREATED = {"sandboxID": "sbx_new", "templateID": "base", "clientID": "client", "envdVersion": "0.2.0"}


def test_create_prints_the_id_alone(api: MockApi, run: Invoke) -> None:
    api.on("POST", "/sandboxes", httpx.Response(201, json=CREATED))
    result = run("sandbox", "create")
    assert result.exit_code == ExitStatus.OK
    assert result.stdout == "sbx_new\n"
    assert api.bodies()[0]["templateID"] == "base" and api.bodies()[0]["timeout"] == 300


def test_create_template_timeout_and_json(api: MockApi, run: Invoke) -> None:
    api.on("POST", "/sandboxes", httpx.Response(201, json={**CREATED, "templateID": "py"}))
    result = run("sandbox", "create", "py", "--timeout", "60", "--json")
    assert result.exit_code == ExitStatus.OK
    assert json.loads(result.stdout) == {"sandbox_id": "sbx_new", "template_id": "py", "envd_version": "0.2.0"}
    assert api.bodies()[0]["templateID"] == "py" and api.bodies()[0]["timeout"] == 60


@pytest.mark.parametrize("args", [["--timeout", "-1"], ["--timeout", "soon"], ["a", "b"], ["-d", "--timeout", "0"]])
def test_create_usage_errors(api: MockApi, run: Invoke, args: list[str]) -> None:
    assert run("sandbox", "create", *args).exit_code == ExitStatus.USAGE
    assert api.requests == []


def test_create_refuses_a_zero_timeout_before_asking(api: MockApi, run: Invoke) -> None:
    # A sandbox that expires as it is made: its id would be printed, and gone when a script used it.
    result = run("sandbox", "create", "-d", "--timeout", "0")
    assert_clean_error(result, ExitStatus.USAGE, lines=range(1, 6))
    assert "Invalid value for '--timeout': 0 is not in the range x>=1." in result.stderr


# --- --json failures: one object on stdout, the same exit statuses ---------------------

JSON_COMMANDS = [c for c in COMMANDS if c[0][1] in ("list", "info", "pause", "metrics", "snapshot")] + [
    (["sandbox", "create"], "POST", "/sandboxes")
]


def _json_error(result: Result) -> dict[str, object]:
    assert result.stderr == ""
    body = json.loads(result.stdout)
    assert list(body) == ["error"] and set(body["error"]) == {"status", "error_code", "message"}
    error: dict[str, object] = body["error"]
    return error


def test_pause_json_refusal(api: MockApi, run: Invoke) -> None:
    api.on("POST", PAUSE, error(503, REFUSAL, "sandbox_pause_refused"))
    result = run("sandbox", "pause", SANDBOX_ID, "--json")
    assert result.exit_code == ExitStatus.FAILED
    assert _json_error(result) == {"status": 503, "error_code": "sandbox_pause_refused", "message": REFUSAL}


@pytest.mark.parametrize(("args", "method", "path"), JSON_COMMANDS, ids=[" ".join(c[0][1:3]) for c in JSON_COMMANDS])
def test_json_failures(api: MockApi, run: Invoke, args: list[str], method: str, path: str) -> None:
    api.on(method, path, error(404, "whatever the API says", "sandbox_not_found"))
    not_found = run(*args, "--json")
    assert not_found.exit_code == ExitStatus.FAILED
    expected = f"sandbox {SANDBOX_ID!r} not found" if len(args) > 2 else "whatever the API says"
    assert _json_error(not_found) == {"status": 404, "error_code": "sandbox_not_found", "message": expected}
    api.on(method, path, httpx.ConnectError("connection refused"))
    unreachable = run(*args, "--json", "--api-url", "http://127.0.0.1:9")
    assert unreachable.exit_code == ExitStatus.NO_ANSWER
    assert _json_error(unreachable)["status"] is None


@pytest.mark.parametrize(("args", "method", "path"), COMMANDS[1:], ids=IDS[1:])  # all but list
def test_not_found_reads_the_same_from_every_command(
    api: MockApi, run: Invoke, args: list[str], method: str, path: str
) -> None:
    api.on(method, path, error(404, "the API's own words", "sandbox_not_found"))
    result = run(*args)
    assert result.stderr.splitlines()[0] == f"Error: sandbox {SANDBOX_ID!r} not found"


@pytest.mark.parametrize(("args", "method", "path"), EVERY, ids=EVERY_IDS)
def test_a_web_page_instead_of_json_names_status_and_content_type(
    api: MockApi, run: Invoke, args: list[str], method: str, path: str
) -> None:
    page = httpx.Response(200, text="<html>Sign in to the proxy</html>", headers={"content-type": "text/html"})
    api.on(method, path, page)
    result = run(*args)
    assert_clean_error(result, ExitStatus.FAILED, lines=(1,))
    assert result.stderr == (
        "Error: the answer is not the API's: the API answered 200 with text/html, not JSON: "
        "is the API URL right, or is a proxy answering?\n"
    )


@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000 + b"]" * 100_000, b'"\xff\xfe"', b"9" * 5000, b'"a string"'],
    ids=["deep", "not-utf-8", "huge-integer", "wrong-kind"],
)
@pytest.mark.parametrize(("args", "method", "path"), EVERY, ids=EVERY_IDS)
def test_a_success_that_is_not_the_api_s_is_a_failure_not_a_crash(
    api: MockApi, run: Invoke, args: list[str], method: str, path: str, body: bytes
) -> None:
    status = {"POST": 201, "GET": 200, "DELETE": 204}[method]
    if path in (CONNECT, PAUSE):
        status = 200
    if status == 204:
        pytest.skip("a 204's body is never parsed")
    api.on(method, path, httpx.Response(status, content=body, headers={"content-type": "application/json"}))
    result = run(*args)
    assert_clean_error(result, ExitStatus.FAILED, lines=(1,))
    assert result.stderr.startswith("Error: the answer is not the API's: "), result.stderr
    assert "unexpected error" not in result.stderr and "report it" not in result.stderr


def test_a_huge_metadata_value_is_cut_in_the_table_and_whole_elsewhere(api: MockApi, run: Invoke) -> None:
    huge = "v" * 100_000
    listed = [sandbox_json(metadata={"big": huge}), sandbox_json("b", metadata={"team": "qa"})]
    api.on("GET", LIST, httpx.Response(200, json=listed))
    api.on("GET", INFO, httpx.Response(200, json=sandbox_json(metadata={"big": huge})))
    table = run("sandbox", "list")
    assert table.exit_code == ExitStatus.OK
    lines = table.stdout.splitlines()
    assert len(lines) == 4 and max(map(len, lines)) < 300  # not 100,000 columns on every row
    assert lines[2].rstrip().endswith("big=" + "v" * 59 + "…")  # the value cut at 60 columns
    assert lines[3].rstrip().endswith("team=qa")
    whole = json.loads(run("sandbox", "list", "--json").stdout)
    assert whole[0]["metadata"] == {"big": huge}
    assert huge in run("sandbox", "info", SANDBOX_ID).stdout
    assert json.loads(run("sandbox", "info", SANDBOX_ID, "--json").stdout)["metadata"] == {"big": huge}


# --- values refused before any request -------------------------------------------------

BAD_IDS = ["", " ", "sbx/pause", "sbx?x=1", "sbx#x", "..", "sbx\x1b[2J", "sbx\n"]
ID_COMMANDS = [args for args, _, _ in COMMANDS[1:]] + [["sandbox", "snapshot", "list", "--sandbox", SANDBOX_ID]]


@pytest.mark.parametrize("args", ID_COMMANDS, ids=[*IDS[1:], "snapshot-list"])
@pytest.mark.parametrize("bad", BAD_IDS)
def test_a_malformed_sandbox_id_is_a_usage_error(api: MockApi, run: Invoke, args: list[str], bad: str) -> None:
    result = run(*[bad if arg == SANDBOX_ID else arg for arg in args])
    assert result.exit_code == ExitStatus.USAGE, result.output
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith("Error: Invalid value for ")
    assert "\x1b" not in result.stderr
    assert api.requests == []


@pytest.mark.parametrize("bad", ["", "snap?x", "snap#x", "team/snap name", "snap\r"])
def test_a_malformed_snapshot_id_is_a_usage_error(api: MockApi, run: Invoke, bad: str) -> None:
    result = run("sandbox", "snapshot", "delete", bad)
    assert result.exit_code == ExitStatus.USAGE, result.output
    assert result.stderr.splitlines()[-1].startswith("Error: Invalid value for 'SNAPSHOT_ID': the id ")
    assert api.requests == []


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
@pytest.mark.parametrize("where", ["flag", "environment"])
def test_an_api_key_s_line_break_is_dropped(api: MockApi, run: Invoke, ending: str, where: str) -> None:
    # `--api-key "$(cat key)"` loses the newline in the shell; `E2B_API_KEY` from a CRLF .env keeps the "\r".
    api.on("GET", INFO, httpx.Response(200, json=sandbox_json()))
    args = ["--api-key", API_KEY + ending] if where == "flag" else []
    result = run("sandbox", "info", SANDBOX_ID, *args, env={"E2B_API_KEY": API_KEY + ending})
    assert result.exit_code == ExitStatus.OK, result.output
    assert api.requests[0].headers["X-API-Key"] == API_KEY


@pytest.mark.parametrize(("where", "name"), [("flag", "api_key"), ("environment", "E2B_API_KEY")])
def test_an_api_key_no_header_can_carry_is_a_usage_error_that_never_shows_it(
    api: MockApi, run: Invoke, where: str, name: str
) -> None:
    key = "e2b_\x1b[2J" + API_KEY  # argv and the environment cannot hold a NUL
    args = ["--api-key", key] if where == "flag" else []
    for extra in ([], ["--json"]):
        result = run("sandbox", "info", SANDBOX_ID, *args, *extra, env={"E2B_API_KEY": key})
        assert result.exit_code == ExitStatus.USAGE, result.output
        shown = result.stdout + result.stderr
        assert API_KEY not in shown and "network" not in shown
        assert f"{name} holds a line break, a control character or a non-ASCII character" in shown
    assert api.requests == []


def test_the_listing_hint_does_not_follow_the_listing_s_own_failure(api: MockApi, run: Invoke) -> None:
    api.on("GET", LIST, error(404, "no such path: GET /v1/sandboxes"))  # a wrong API URL: no error_code
    result = run("sandbox", "list")
    assert_clean_error(result, ExitStatus.FAILED, lines=(1,))
    assert result.stderr.startswith(f"Error: the answer is not the API's: GET https://api.e2b.app{LIST} answered 404")
    assert "e2b sandbox list" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["sandbox", "create", "base\udcff"],
        ["sandbox", "list", "--metadata", "team=\udcff"],
        ["sandbox", "list", "--template", "\udcff"],
    ],
    ids=["template", "metadata", "list-template"],
)
def test_an_argument_with_no_utf8_form_is_a_usage_error(api: MockApi, run: Invoke, args: list[str]) -> None:
    # Bytes that are not UTF-8 in argv arrive as lone surrogates (Python's surrogateescape).
    result = run(*args)
    assert_clean_error(result, ExitStatus.USAGE)
    assert "has no UTF-8 form" in result.stderr and "not the API's" not in result.stderr
    assert api.requests == []
