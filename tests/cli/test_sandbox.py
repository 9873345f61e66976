"""`e2b sandbox ...` through CliRunner, against a scripted API behind the SDK's transport."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from click.testing import Result
from e2b_cli.errors import ExitStatus

from tests.cli.conftest import API_KEY, SANDBOX_ID, Invoke, MockApi, assert_clean_error, error, sandbox_json

PAUSE = f"/sandboxes/{SANDBOX_ID}/pause"
INFO = f"/sandboxes/{SANDBOX_ID}"
CONNECT = f"/sandboxes/{SANDBOX_ID}/connect"
TIMEOUT = f"/sandboxes/{SANDBOX_ID}/timeout"
LIST = "/v2/sandboxes"
REFUSAL = "pause refused, the sandbox keeps running: the sandbox's guest agent did not answer the health check"

# Every command with the request it sends, to run the shared failure cases over all of them.
COMMANDS: list[tuple[list[str], str, str]] = [
    (["sandbox", "list"], "GET", LIST),
    (["sandbox", "info", SANDBOX_ID], "GET", INFO),
    (["sandbox", "kill", SANDBOX_ID], "DELETE", INFO),
    (["sandbox", "connect", SANDBOX_ID], "POST", CONNECT),
    (["sandbox", "timeout", SANDBOX_ID, "60"], "POST", TIMEOUT),
    (["sandbox", "pause", SANDBOX_ID], "POST", PAUSE),
]
IDS = [c[0][1] for c in COMMANDS]


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


@pytest.mark.parametrize("args", [["--state", "gone"], ["--limit", "0"], ["--limit", "x"]])
def test_list_usage_errors(run: Invoke, args: list[str]) -> None:
    result = run("sandbox", "list", *args)
    assert result.exit_code == ExitStatus.USAGE
    assert "Traceback" not in result.stderr


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
    assert api.bodies()[0] == {"timeout": 60, "on_resume": "reboot"}


def test_connect_usage_error(run: Invoke) -> None:
    assert run("sandbox", "connect", SANDBOX_ID, "--on-resume", "warm").exit_code == ExitStatus.USAGE


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


@pytest.mark.parametrize(("args", "method", "path"), COMMANDS, ids=IDS)
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


@pytest.mark.parametrize(("args", "method", "path"), COMMANDS, ids=IDS)
def test_invalid_api_key(api: MockApi, run: Invoke, args: list[str], method: str, path: str) -> None:
    api.on(method, path, error(401, "invalid API key in the X-API-Key header"))
    result = run(*args)
    assert_clean_error(result, ExitStatus.FAILED, lines=(2,))
    assert "invalid API key in the X-API-Key header" in result.stderr
    assert "--api-key" in result.stderr.splitlines()[1]


@pytest.mark.parametrize(("args", "method", "path"), COMMANDS, ids=IDS)
def test_network_failure(api: MockApi, run: Invoke, args: list[str], method: str, path: str) -> None:
    api.on(method, path, httpx.ConnectError("connection refused"))
    result = run(*args, "--api-url", "http://127.0.0.1:9")
    assert_clean_error(result, ExitStatus.NO_ANSWER, lines=(2,))
    first, hint = result.stderr.splitlines()
    assert first == "Error: could not reach the API at http://127.0.0.1:9: connection refused"
    assert "network" in hint


@pytest.mark.parametrize(("args", "method", "path"), COMMANDS, ids=IDS)
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
@pytest.mark.parametrize(("args", "method", "path"), COMMANDS, ids=IDS)
def test_other_api_errors(
    api: MockApi, run: Invoke, args: list[str], method: str, path: str, answer: httpx.Response, expected: str | None
) -> None:
    api.on(method, path, answer)
    result = run("--quiet", *args)  # busy answers are retried first: test_progress says so
    assert_clean_error(result, ExitStatus.FAILED)
    assert result.stderr.startswith("Error: ")
    if expected:
        assert expected in result.stderr


@pytest.mark.parametrize(("args", "method", "path"), COMMANDS, ids=IDS)
def test_help_has_an_example(run: Invoke, args: list[str], method: str, path: str) -> None:
    result = run(*args[:2], "--help")
    assert result.exit_code == ExitStatus.OK
    assert "Examples:" in result.stdout
    assert f"e2b sandbox {args[1]}" in result.stdout


# --- create --------------------------------------------------------------------------

CREATED = {"sandboxID": "sbx_new", "templateID": "base", "envdVersion": "0.2.0"}


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


@pytest.mark.parametrize("args", [["--timeout", "-1"], ["--timeout", "soon"], ["a", "b"]])
def test_create_usage_errors(api: MockApi, run: Invoke, args: list[str]) -> None:
    assert run("sandbox", "create", *args).exit_code == ExitStatus.USAGE
    assert api.requests == []


# --- --json failures: one object on stdout, the same exit statuses ---------------------

JSON_COMMANDS = [c for c in COMMANDS if c[0][1] in ("list", "info", "pause")] + [
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


@pytest.mark.parametrize(("args", "method", "path"), JSON_COMMANDS, ids=[c[0][1] for c in JSON_COMMANDS])
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


@pytest.mark.parametrize(("args", "method", "path"), COMMANDS, ids=IDS)
def test_a_web_page_instead_of_json_names_status_and_content_type(
    api: MockApi, run: Invoke, args: list[str], method: str, path: str
) -> None:
    page = httpx.Response(200, text="<html>Sign in to the proxy</html>", headers={"content-type": "text/html"})
    api.on(method, path, page)
    result = run(*args)
    assert_clean_error(result, ExitStatus.FAILED, lines=(1,))
    assert result.stderr == (
        "Error: the API answered 200 with text/html, not JSON: is the API URL right, or is a proxy answering?\n"
    )
